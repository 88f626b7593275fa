package evaluate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// reviewAlerts adds, for each gene of the drug whose input was not fully
// interpreted (GeneGenotype.Review), a MODERATE "could not interpret —
// review" alert naming what and why. Such a gene never reads as normal
// and never as "no result — order a test": the patient has a result that
// needs a person to read it.
func (ev *evaluation) reviewAlerts() {
	for _, gene := range ev.drugGenes() {
		gg := ev.gt.Genes[gene]
		review := ev.reviewOf(gene)
		if len(review) == 0 {
			continue
		}
		// What the alert says of the gene's reading: none was assumed, or
		// the actionable one kept beside the review (calling.fromCall).
		reading := fmt.Sprintf("so no %s phenotype was assumed", gene)
		if len(gg.Diplotypes) > 0 {
			ds := make([]string, len(gg.Diplotypes))
			for i, d := range gg.Diplotypes {
				ds[i] = d.String() + " (" + d.Call.Phenotype + ")"
			}
			reading = fmt.Sprintf("so only the actionable %s reading %s is used, never a more reassuring one", gene, strings.Join(ds, " or "))
		}
		p := ev.pair(gene)
		a := engine.Alert{
			Severity:     engine.SeverityModerate,
			Gene:         gene,
			Category:     engine.CategoryUnknown,
			Alternatives: []string{},
			Message: fmt.Sprintf("Could not interpret the %s result given — review: %s. %s guidance for %s depends on this gene, %s.",
				gene, strings.Join(review, "; "), ev.drug.Name, gene, reading),
			Action:         fmt.Sprintf("Have the %s result reviewed (by the lab or a pharmacogenomics pharmacist) before relying on it for %s; do not read it as normal.", gene, ev.drug.Name),
			GuidanceSource: "CPIC",
			Assumptions:    append([]string{}, gg.Assumptions...),
		}
		if p != nil {
			a.EvidenceLevel = p.EvidenceLevel
			a.Guideline = &engine.Guideline{Name: p.GuidelineName, URL: p.GuidelineURL}
		}
		ev.res.Alerts = append(ev.res.Alerts, a)
	}
}

// reviewOf returns why gene needs review (GeneGenotype.Review), or, for a
// diplotype given as input that has no CPIC phenotype (an allele without
// a CPIC function, a function pair without a rule) in a gene with
// phenotype rules, that reason: the review a called diplotype without a
// phenotype gets (calling.fromCall). Such a diplotype is a result the
// knowledge cannot read, never "not genotyped — order a test".
func (ev *evaluation) reviewOf(gene string) []string {
	gg := ev.gt.Genes[gene]
	if gg == nil {
		return nil
	}
	if len(gg.Review) > 0 {
		return gg.Review
	}
	if !gg.FromDiplotype || gg.Uncallable == "" || len(gg.Diplotypes) > 0 {
		return nil
	}
	g, ok := ev.kb.Gene(gene)
	if !ok || len(g.Rules) == 0 {
		return nil
	}
	given := ev.req.Diplotypes[gene]
	var nofn []string
	if alleles, err := ev.kb.calls.ParseDiplotype(gene, given); err == nil {
		for _, name := range alleles {
			if al, ok := ev.kb.Allele(gene, name); ok && al.Function == "" && !slices.Contains(nofn, name) {
				nofn = append(nofn, name)
			}
		}
	}
	if len(nofn) > 0 {
		return []string{fmt.Sprintf("%s %s has no CPIC phenotype: %s has no CPIC function in the knowledge", gene, given, strings.Join(nofn, " and "))}
	}
	return []string{fmt.Sprintf("%s %s has no CPIC phenotype (%s)", gene, given, gg.Uncallable)}
}
