package evaluate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// This file raises the alerts that do not come from the patient's genotype:
// pre-test alerts (a gene that matters was not tested, with its actionable
// frequency in India), partial tests, and population risks of the state and
// the community.

// ActionableFrequencyThreshold is the estimated share of Indian patients
// with an actionable genotype above which a pre-test alert is MODERATE
// rather than INFO: 1 %, the conventional frequency of a common
// polymorphism.
const ActionableFrequencyThreshold = 0.01

// ActionableFrequency estimates the share of Indian patients carrying at
// least one actionable allele of gene — no or decreased function, a
// deficient G6PD class, VKORC1's "higher coumarin sensitivity" allele, an
// unfavourable-response allele — (or, for an HLA gene,
// the allele a recommendation keys on), from the panel's allele
// frequencies as 1-(1-q)^2. ok is false when the knowledge has no Indian
// figure for any such allele.
func (k *Engine) ActionableFrequency(gene string, hlaAlleles []string) (freq float64, basis []string, ok bool) {
	q := 0.0
	if strings.HasPrefix(gene, "HLA-") {
		for _, al := range hlaAlleles {
			if h, found := k.HLAAllele(gene, al); found && h.AFCentralSouthAsian != nil {
				q += *h.AFCentralSouthAsian
				basis = append(basis, fmt.Sprintf("%s%s allele frequency %.4f (CPIC Central/South Asian)", gene, al, *h.AFCentralSouthAsian))
				ok = true
			}
		}
	} else {
		for _, v := range k.Variants {
			if v.Gene != gene || v.AFIndia == nil || v.AFIndiaKind != "allele" {
				continue
			}
			f := strings.ToLower(v.Function)
			if !actionableFunction(f) {
				continue
			}
			q += *v.AFIndia
			basis = append(basis, fmt.Sprintf("%s %s af_india %.4f", v.RsID, v.AlleleLabel, *v.AFIndia))
			ok = true
		}
	}
	if q > 1 {
		q = 1
	}
	return 1 - (1-q)*(1-q), basis, ok
}

// actionableFunction reports whether a tracked variant's function (lower
// case) is one that moves a patient off the normal guideline row. The
// figures used are exactly those GET /pgx/variants lists.
func actionableFunction(f string) bool {
	for _, w := range []string{"no function", "decreased", "deficien", "sensitivity", "unfavorable", "unfavourable"} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

// pretestGene is a gene of a drug that may need a pre-test alert: a
// level A or A/B pair whose rows can ask for a change (or that has no
// rows), with the HLA alleles its positive rows name.
type pretestGene struct {
	gene    string
	pair    *engine.DrugPair
	alleles []string
}

// pretestPlan lists the pretestGenes of drug d, whose genes are genes
// (drugGenes), in their order; computed at New for every drug
// (Engine.pretest) and read only.
func (k *Engine) pretestPlan(d *engine.Drug, genes []string) []pretestGene {
	recs := k.RecommendationsFor(d.Name)
	var out []pretestGene
	for _, gene := range genes {
		var p *engine.DrugPair
		for i := range d.Pairs {
			if d.Pairs[i].Gene == gene {
				p = &d.Pairs[i]
				break
			}
		}
		if p == nil || (p.CPICLevel != "A" && p.CPICLevel != "A/B") {
			continue
		}
		// Which rows would apply with a result, and how bad can they be?
		worst := engine.SeverityNone
		var alleles []string
		for _, r := range recs {
			if _, ok := r.Lookup[gene]; !ok {
				continue
			}
			if s := recSeverity(r); s > worst {
				worst = s
			}
			if r.LookupType[gene] == "allele_status" && strings.HasSuffix(r.Lookup[gene], "positive") {
				al, _, _ := strings.Cut(r.Lookup[gene], " ")
				if !slices.Contains(alleles, al) {
					alleles = append(alleles, al)
				}
			}
		}
		if worst == engine.SeverityNone && len(recs) > 0 {
			continue
		}
		out = append(out, pretestGene{gene: gene, pair: p, alleles: alleles})
	}
	return out
}

// preTestAlerts adds a genotype-unknown alert for each level-A gene of the
// drug that the input does not cover.
func (ev *evaluation) preTestAlerts() {
	plan, ok := ev.kb.pretest[ev.drug]
	if !ok {
		plan = ev.kb.pretestPlan(ev.drug, ev.drugGenes())
	}
	for _, pg := range plan {
		gene, p, alleles := pg.gene, pg.pair, pg.alleles
		var alts []string
		if len(ev.reviewOf(gene)) > 0 {
			continue // reviewAlerts asked for review
		}
		if ev.covered(gene, alleles) {
			ev.partialTestAlert(gene, p)
			continue
		}
		sev := engine.SeverityInfo
		freq, basis, known := ev.kb.ActionableFrequency(gene, alleles)
		if known && freq >= ActionableFrequencyThreshold {
			sev = engine.SeverityModerate
		}
		a := engine.Alert{
			Severity:        sev,
			Gene:            gene,
			Category:        engine.CategoryUnknown,
			TestRecommended: true,
			Alternatives:    alts,
			EvidenceLevel:   p.EvidenceLevel,
			Guideline:       &engine.Guideline{Name: p.GuidelineName, URL: p.GuidelineURL},
			GuidanceSource:  "CPIC",
			Assumptions:     []string{},
		}
		if a.Alternatives == nil {
			a.Alternatives = []string{}
		}
		if gg := ev.gt.Genes[gene]; gg != nil && gg.Uncallable != "" {
			a.Assumptions = append(a.Assumptions, gg.Uncallable)
		}
		state := "which was not genotyped"
		if gg := ev.gt.Genes[gene]; gg != nil && gg.Uncallable != "" {
			state = "which cannot be called from the input given"
		}
		switch {
		case known:
			a.Message = fmt.Sprintf("%s has CPIC level %s guidance for %s, %s; an estimated %.1f%% of Indian patients carry an actionable %s result.",
				ev.drug.Name, p.CPICLevel, gene, state, 100*freq, gene)
			a.Assumptions = append(a.Assumptions, "estimate 1-(1-q)^2 from: "+strings.Join(basis, "; "))
		default:
			a.Message = fmt.Sprintf("%s has CPIC level %s guidance for %s, %s; the knowledge has no Indian frequency for its actionable alleles.",
				ev.drug.Name, p.CPICLevel, gene, state)
		}
		a.Action = fmt.Sprintf("Consider %s genotyping before prescribing %s; see the %s guideline.", gene, ev.drug.Name, p.GuidelineName)
		ev.res.Alerts = append(ev.res.Alerts, a)
	}
}

// partialTestAlert adds an INFO genotype-unknown alert when gene was read
// from rsIDs without being listed in genes_tested and the answer for it is
// not already HIGH: the unreported positions could hold an actionable
// allele (a *17 carrier may carry *2 on the other chromosome).
func (ev *evaluation) partialTestAlert(gene string, p *engine.DrugPair) {
	gg := ev.gt.Genes[gene]
	if gg == nil || !gg.Partial {
		return
	}
	for _, a := range ev.res.Alerts {
		if a.Gene == gene && a.Severity >= engine.SeverityHigh {
			return
		}
	}
	msg := fmt.Sprintf("%s was read only from the rsIDs given (%s) and is not in genes_tested: positions that were not reported are unknown, so the %s result may be incomplete.",
		gene, strings.Join(gg.Variants, ", "), gene)
	action := fmt.Sprintf("Confirm with a complete %s genotype (list the gene in genes_tested when the lab tested it) before relying on this result for %s.", gene, ev.drug.Name)
	if gg.FromDiplotype {
		// A diplotype reported with definition positions not called
		// (engine.DiplotypeCaveat).
		msg = fmt.Sprintf("The %s result %s was reported with %d definition position(s) not called (%s)%s: a variant at those positions would change the call, so the %s result may be incomplete.",
			gene, ev.req.Diplotypes[gene], len(gg.PositionsNotCalled), calling.Abbreviate(gg.PositionsNotCalled, 10), untestedClause(gg.UntestedAlleles), gene)
		action = fmt.Sprintf("Confirm with a complete %s genotype before relying on this result for %s.", gene, ev.drug.Name)
	}
	ev.res.Alerts = append(ev.res.Alerts, engine.Alert{
		Severity:        engine.SeverityInfo,
		Gene:            gene,
		Category:        engine.CategoryUnknown,
		TestRecommended: true,
		Alternatives:    []string{},
		EvidenceLevel:   p.EvidenceLevel,
		Guideline:       &engine.Guideline{Name: p.GuidelineName, URL: p.GuidelineURL},
		GuidanceSource:  "CPIC",
		Message:         msg,
		Action:          action,
		Assumptions:     []string{},
	})
}

// untestedClause names the alleles left untested, if any.
func untestedClause(alleles []string) string {
	if len(alleles) == 0 {
		return ""
	}
	return " and the alleles defined there untested (" + calling.Abbreviate(alleles, 10) + ")"
}

// covered reports whether the input says something usable about gene: a
// callable genotype, or for an HLA gene the status of one of alleles.
func (ev *evaluation) covered(gene string, hlaAlleles []string) bool {
	if strings.HasPrefix(gene, "HLA-") {
		for _, al := range hlaAlleles {
			if _, ok := ev.gt.HLA[gene+al]; ok {
				return true
			}
		}
		return false
	}
	if !ev.gt.Covered[gene] {
		return false
	}
	gg := ev.gt.Genes[gene]
	return gg == nil || gg.Uncallable == ""
}

// populationAlerts adds India-specific risks of the drug from the state
// and community context: INFO for a state's endemic risk naming the drug,
// MODERATE for a community finding naming the drug.
func (ev *evaluation) populationAlerts() {
	if ev.drug == nil {
		return
	}
	ic := &ev.res.IndianContext
	st, _ := ev.state()
	for _, r := range stateRisks(st) {
		if !slices.Contains(r.Drugs, ev.drug.Name) {
			continue
		}
		gene := ev.geneNamedIn(r.AffectedText + " " + r.Note)
		ev.addSources(r.SourceIDs)
		ev.res.Alerts = append(ev.res.Alerts, engine.Alert{
			Severity:     engine.SeverityInfo,
			Gene:         gene,
			Category:     engine.CategoryPopulationRisk,
			Message:      fmt.Sprintf("%s: %s (%s). %s", ic.StateNormalised, r.Risk, r.Note, ev.whyStateRisk(r, gene)),
			Action:       fmt.Sprintf("Consider the %s context of %s when prescribing %s.", r.Disease, ic.StateNormalised, ev.drug.Name),
			Alternatives: []string{},
			Assumptions:  []string{},
		})
	}
	for _, c := range ev.communities {
		if !slices.Contains(c.Drugs, ev.drug.Name) {
			continue
		}
		gene := ""
		if len(c.Genes) > 0 {
			gene = c.Genes[0]
			if ev.covered(gene, nil) {
				// The patient's own genotype answers what the community
				// frequency only suggests; the note stays in indian_context.
				continue
			}
		}
		ev.addSources(c.SourceIDs)
		ev.res.Alerts = append(ev.res.Alerts, engine.Alert{
			Severity:        engine.SeverityModerate,
			Gene:            gene,
			Category:        engine.CategoryPopulationRisk,
			Message:         fmt.Sprintf("%s: %s (%s). %s", c.Name, c.Finding, c.Trait, ev.whyCommunity(c, gene)),
			Action:          fmt.Sprintf("Community-specific finding for %s: take extra care and monitor; consider testing.", ev.drug.Name),
			Alternatives:    []string{},
			TestRecommended: gene != "",
			Assumptions:     []string{"community-specific findings come from studies of that group; they are not an individual genotype"},
		})
	}
}

// geneNamedIn returns the first gene of the drug (drugGenes) that text
// names as a word ("primaquine, tafenoquine (G6PD testing)" → G6PD), or "".
func (ev *evaluation) geneNamedIn(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	})
	for _, w := range words {
		if slices.Contains(ev.drugGenes(), w) {
			return w
		}
	}
	return ""
}

// pairText says how the knowledge links gene to the drug: its CPIC level,
// or that it is not one of the drug's CPIC genes.
func (ev *evaluation) pairText(gene string) string {
	p := ev.pair(gene)
	if slices.Contains(ev.drugGenes(), gene) {
		if p != nil {
			return fmt.Sprintf("%s is a CPIC level %s gene of %s, so a %s result changes the advice", gene, p.CPICLevel, ev.drug.Name, gene)
		}
		return fmt.Sprintf("%s has guideline recommendations for %s, so a %s result changes the advice", gene, ev.drug.Name, gene)
	}
	if p != nil {
		return fmt.Sprintf("%s and %s are a CPIC level %s gene-drug pair (no recommendation rows for it in the knowledge)", gene, ev.drug.Name, p.CPICLevel)
	}
	return fmt.Sprintf("%s is not one of %s's CPIC genes in the knowledge; the finding is what links them", gene, ev.drug.Name)
}

// whyStateRisk is the sentence saying why a state's endemic risk matters
// for the drug, from the state data's own affected-drugs text.
func (ev *evaluation) whyStateRisk(r engine.StateRisk, gene string) string {
	why := fmt.Sprintf("Why it matters for %s: the state data names %s among the drugs this %s risk affects", ev.drug.Name, ev.drug.Name, r.Disease)
	if r.AffectedText != "" {
		why += fmt.Sprintf(" (%q)", r.AffectedText)
	}
	if gene != "" {
		why += "; " + ev.pairText(gene)
	}
	return why + "."
}

// whyCommunity is the sentence saying why a community finding matters for
// the drug.
func (ev *evaluation) whyCommunity(c *engine.Community, gene string) string {
	why := fmt.Sprintf("Why it matters for %s: the study names %s", ev.drug.Name, ev.drug.Name)
	if c.DrugsText != "" {
		why += fmt.Sprintf(" (%q)", c.DrugsText)
	}
	if gene != "" {
		why += "; " + ev.pairText(gene)
	}
	return why + "."
}

func stateRisks(st *engine.State) []engine.StateRisk {
	if st == nil {
		return nil
	}
	return st.Risks
}
