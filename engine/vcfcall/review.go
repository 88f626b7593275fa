package vcfcall

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// alignWithCheck makes a gene's answer the reading /pgx/check gives for
// the same calls (calling.Caller.InterpretGenotype), so that /pgx/vcf,
// pgxsafety call and /pgx/check never disagree on the same evidence:
//
//   - a called diplotype without a CPIC phenotype, in a gene with CPIC
//     phenotype rules, is a review (never a reading shown as called);
//   - a gene under review keeps an actionable reading beside the review
//     (calling.Caller.KeptBesideReview): withholding it would leave the
//     more reassuring answer; a reading that could read as normal stays
//     withheld.
func alignWithCheck(c *calling.Caller, g *GeneResult, gc *calling.GeneCall) {
	if gc.Status == calling.CallCalled {
		if gene, ok := c.Gene(gc.Gene); ok && len(gene.Rules) > 0 {
			for _, d := range gc.Diplotypes {
				if d.PhenotypeError != "" {
					g.Uninterpreted = append(g.Uninterpreted, fmt.Sprintf("%s %s has no CPIC phenotype (%s)", gc.Gene, d.String(), d.PhenotypeError))
				}
			}
		}
		if len(g.Uninterpreted) > 0 && !g.NeedsReview {
			g.NeedsReview = true
			g.Interpretation = InterpretationReview
			g.Summary = InterpretationReview + ": " + strings.Join(g.Uninterpreted, "; ")
			for i := range g.Diplotypes {
				g.Diplotypes[i].Phenotype, g.Diplotypes[i].ActivityScore, g.Diplotypes[i].PhenotypeError = "", "", ""
			}
			for i, d := range gc.Alternatives {
				g.Alternatives[i] = d.String()
			}
		}
	}
	if !g.NeedsReview {
		return
	}
	kept := c.KeptBesideReview(gc)
	if len(kept) == 0 || len(kept) != len(g.Diplotypes) {
		return
	}
	var named []string
	for i, d := range kept {
		dr := &g.Diplotypes[i]
		dr.Phenotype, dr.ActivityScore, dr.PhenotypeError = d.Call.Phenotype, d.Call.ActivityScore, d.PhenotypeError
		text := dr.Diplotype + ": " + dr.Phenotype
		if dr.ActivityScore != "" {
			text += " (activity score " + dr.ActivityScore + ")"
		}
		named = append(named, text)
	}
	g.Summary += "; the actionable reading is kept beside the review: " + strings.Join(named, " or ")
}
