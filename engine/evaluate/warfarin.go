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
	if note := ev.cyp4f2Note(); note != "" {
		ev.res.Warnings = append(ev.res.Warnings, note)
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
	if ev.cyp4f2Carrier() {
		actions = append(actions, node("n7").Text)
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

// cyp4f2Alleles returns the CYP4F2 alleles read from the input: a given
// diplotype, or the called diplotype. CPIC assigns CYP4F2 no phenotype;
// the flow chart uses only rs2108622 (CYP4F2 *3) carrier status.
func (ev *evaluation) cyp4f2Alleles() []string {
	if d, ok := ev.req.Diplotypes["CYP4F2"]; ok {
		alleles, err := ev.kb.calls.ParseDiplotype("CYP4F2", d)
		if err == nil {
			return alleles
		}
		return nil
	}
	if gg := ev.gt.Genes["CYP4F2"]; gg != nil && len(gg.Review) == 0 && len(gg.Diplotypes) > 0 {
		return gg.Diplotypes[0].Alleles
	}
	return nil
}

// cyp4f2Carrier reports whether the input carries the CYP4F2 rs2108622 T
// allele: an rsID given as at least one copy, or a CYP4F2 allele whose
// definition carries it.
func (ev *evaluation) cyp4f2Carrier() bool {
	for _, v := range ev.req.Variants {
		if n, _ := calling.NormaliseRsID(v); n == "rs2108622" && ev.req.Zygosity[v] != engine.Ref && ev.req.Zygosity[n] != engine.Ref {
			return true
		}
	}
	for _, name := range ev.cyp4f2Alleles() {
		if al, ok := ev.kb.Allele("CYP4F2", name); ok {
			for _, kv := range al.Key {
				if kv.RsID == "rs2108622" {
					return true
				}
			}
		}
	}
	return false
}

// cyp4f2Note says how a CYP4F2 diplotype was used: CPIC assigns CYP4F2 no
// phenotype, so the gene reads "Not callable", and the flow chart uses its
// rs2108622 carrier status only.
func (ev *evaluation) cyp4f2Note() string {
	alleles := ev.cyp4f2Alleles()
	if len(alleles) == 0 {
		return ""
	}
	use := "not a carrier of rs2108622 T, so the flow chart's CYP4F2 adjustment does not apply"
	if ev.cyp4f2Carrier() {
		use = "a carrier of rs2108622 T (CYP4F2 *3), so the flow chart's CYP4F2 adjustment applies when the dose is calculated"
	}
	return fmt.Sprintf("CYP4F2 %s: CPIC assigns CYP4F2 no phenotype; warfarin's flow chart uses only the rs2108622 carrier status, and this patient is %s", strings.Join(alleles, "/"), use)
}
