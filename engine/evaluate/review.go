package evaluate

import (
	"fmt"
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
		if gg == nil || len(gg.Review) == 0 {
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
				gene, strings.Join(gg.Review, "; "), ev.drug.Name, gene, reading),
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
