package evaluate

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// warfarinAlerts applies CPIC's warfarin flow chart (2017, Figure 2),
// which has no lookup rows: with CYP2C9 and VKORC1 results the dose is
// calculated with a validated pharmacogenetic algorithm; carriers of
// CYP2C9 *5, *6, *8 or *11 and of CYP4F2 rs2108622 get the chart's
// adjustments. Without results, preTestAlerts asks for the test.
func (ev *evaluation) warfarinAlerts() {
	fc := ev.kb.Warfarin
	node := func(id string) engine.FlowChartNode {
		for _, n := range fc.Nodes {
			if n.ID == id {
				return n
			}
		}
		return engine.FlowChartNode{}
	}
	var calls []engine.GenotypeCall
	var phen []string
	var assumptions []string
	for _, gene := range []string{"CYP2C9", "VKORC1"} {
		gg := ev.gt.Genes[gene]
		if gg == nil || gg.Uncallable != "" || len(gg.Diplotypes) == 0 {
			continue
		}
		d := gg.Diplotypes[0]
		calls = append(calls, engine.GenotypeCall{Gene: gene, Diplotype: d.String(), Phenotype: d.Call.Phenotype, ActivityScore: d.Call.ActivityScore})
		phen = append(phen, fmt.Sprintf("%s %s (%s)", gene, d.Call.Phenotype, d.String()))
		assumptions = append(assumptions, gg.Assumptions...)
	}
	if len(calls) == 0 {
		return
	}
	main := node("n1")
	actions := []string{main.Text}
	classification := main.Strength
	if gg := ev.gt.Genes["CYP2C9"]; gg != nil && len(gg.Diplotypes) > 0 {
		for _, a := range gg.Diplotypes[0].Alleles {
			if a == "*5" || a == "*6" || a == "*8" || a == "*11" {
				actions = append(actions, node("n6").Text)
				break
			}
		}
	}
	for _, v := range ev.req.Variants {
		if n, _ := calling.NormaliseRsID(v); n == "rs2108622" {
			actions = append(actions, node("n7").Text)
		}
	}
	if len(calls) < 2 {
		assumptions = append(assumptions, "the flow chart needs both CYP2C9 (*2, *3) and VKORC1 -1639G>A; only "+calls[0].Gene+" was given")
	}
	a := engine.Alert{
		Severity:       engine.SeverityModerate,
		Gene:           calls[0].Gene,
		Category:       engine.CategoryConfirmed,
		Message:        fmt.Sprintf("warfarin with %s: CPIC flow chart says calculate the dose with a pharmacogenetic algorithm.", strings.Join(phen, " and ")),
		Action:         strings.Join(actions, " "),
		Recommendation: strings.Join(actions, " "),
		Classification: classification,
		Alternatives:   []string{},
		Genotype:       calls,
		GuidanceSource: "CPIC",
		Assumptions:    append(assumptions, fc.Note),
	}
	if p := ev.pair(a.Gene); p != nil {
		a.EvidenceLevel = p.EvidenceLevel
		a.Guideline = &engine.Guideline{Name: p.GuidelineName, URL: p.GuidelineURL}
	}
	ev.variantOf(&a)
	ev.res.Alerts = append(ev.res.Alerts, a)
}
