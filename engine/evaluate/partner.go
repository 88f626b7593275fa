package evaluate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

// This file holds two rules of "never understate" (docs/engine.md §4):
//
//   - partner genes: in a multi-gene table (TPMT + NUDT15, RYR1 +
//     CACNA1S, …) a gene the input says nothing about is untested. The row
//     used then follows the guideline's rows for the genes that were given
//     (partnerChoice), never the mere existence of a row for a normal
//     result of the untested gene;
//   - holes: a gene result of the drug that no row of the knowledge
//     answers is stated as such (holeAlerts), never left silent.

// candidate is a recommendation row consistent with the genes given, whose
// other genes (missing) were not given.
type candidate struct {
	r       *engine.Recommendation
	missing []population.RecKey
}

// partnerNote is what the answer says about the genes a chosen row could
// not look up.
type partnerNote struct {
	untested []string // the untested genes, in row order
	text     string   // the assumption naming them and the row used
}

// referenceLookups computes, for every gene with phenotype rules, the
// lookup values of its default (reference) diplotype: the phenotype and,
// for an activity-score gene, the score ("Normal Metabolizer", "2.0";
// RYR1 "Uncertain Susceptibility"). A row whose untested gene has such a
// value is the row for a reference result of that gene.
func (k *Engine) referenceLookups() map[string][]string {
	out := map[string][]string{}
	for _, g := range k.Genes {
		if g.DefaultAllele == "" || len(g.Rules) == 0 {
			continue
		}
		call, err := k.calls.Phenotype(g.Symbol, g.DefaultAllele, g.DefaultAllele)
		if err != nil {
			continue
		}
		vals := []string{call.Phenotype}
		if call.ActivityScore != "" {
			vals = append(vals, call.ActivityScore)
		}
		out[g.Symbol] = vals
	}
	return out
}

// isReference reports whether a row's lookup value for an untested gene is
// that gene's reference result: an HLA allele negative, the phenotype or
// activity score of the gene's default diplotype, or (for a gene without
// phenotype rules) a normal value.
func (k *Engine) isReference(rk population.RecKey) bool {
	if rk.LookupType == "allele_status" {
		return strings.HasSuffix(rk.Lookup, " negative")
	}
	if vals, ok := k.refLookups[rk.Gene]; ok {
		for _, v := range vals {
			if v == rk.Lookup {
				return true
			}
		}
		return false
	}
	return normalValue(rk.Lookup)
}

// indeterminateLookup reports whether a lookup value is CPIC's
// "cannot be determined" result of a gene: the rows CPIC writes for the
// other gene alone ("Based on TPMT status, …") key the untested gene so.
func indeterminateLookup(v string) bool { return v == "Indeterminate" || v == "n/a" }

// partnerChoice picks, among the rows consistent with the genes given
// (one table, the same given values), the row to use when the other
// genes were not given:
//
//  1. When the row for a reference result of the untested genes needs no
//     change, the given genes are not actionable on their own: that row is
//     used, and the pre-test alert asks for the untested genes.
//  2. Otherwise the given result is actionable (or the table has no row
//     for a reference result of the untested genes, RYR1 + CACNA1S
//     aside): CPIC's row for the given genes alone — the untested genes
//     Indeterminate — is used when it exists and is at least as severe as
//     the least severe actionable row of the given result;
//  3. else the most severe row consistent with the given genes (the
//     reference row among equals), never a milder guess.
//
// The note names the untested genes and says that testing them could
// change the recommendation.
func (ev *evaluation) partnerChoice(cands []candidate) (*engine.Recommendation, partnerNote) {
	var base, alone *candidate
	for i := range cands {
		c := &cands[i]
		ref, ind := true, true
		for _, rk := range c.missing {
			ref = ref && ev.kb.isReference(rk)
			ind = ind && indeterminateLookup(rk.Lookup)
		}
		if ref && base == nil {
			base = c
		}
		if ind && alone == nil {
			alone = c
		}
	}
	genes := make([]string, len(cands[0].missing))
	for i, rk := range cands[0].missing {
		genes[i] = rk.Gene
	}
	untested := strings.Join(genes, " and ")
	valuesOf := func(c *candidate) string {
		vs := make([]string, len(c.missing))
		for i, rk := range c.missing {
			vs[i] = rk.Gene + " " + rk.Lookup
		}
		return strings.Join(vs, ", ")
	}
	note := partnerNote{untested: genes}
	if base != nil && recSeverity(base.r) == engine.SeverityNone && (alone == nil || recSeverity(alone.r) == engine.SeverityNone) {
		note.text = fmt.Sprintf("%s was not given: the guideline row for a reference %s result (%s) is used, so this advice rests on the other gene(s); testing %s could change it",
			untested, untested, valuesOf(base), untested)
		return base.r, note
	}
	leastActionable := engine.SeverityHigh + 1
	var worst *candidate
	for i := range cands {
		c := &cands[i]
		if c == alone {
			continue
		}
		s := recSeverity(c.r)
		if s > engine.SeverityNone && s < leastActionable {
			leastActionable = s
		}
		if worst == nil || s > recSeverity(worst.r) || s == recSeverity(worst.r) && c == base {
			worst = c
		}
	}
	if alone != nil && (leastActionable > engine.SeverityHigh || recSeverity(alone.r) >= leastActionable) {
		note.text = fmt.Sprintf("%s was not given: CPIC's row for the given gene(s) alone (%s) is used; testing %s could change the recommendation",
			untested, valuesOf(alone), untested)
		return alone.r, note
	}
	if worst == nil {
		worst = alone
	}
	switch {
	case worst == base:
		note.text = fmt.Sprintf("%s was not given: the guideline row for a reference %s result (%s) is used, and no %s result gives a more severe recommendation; testing %s could change it",
			untested, untested, valuesOf(worst), untested, untested)
	default:
		note.text = fmt.Sprintf("%s was not given: the guideline's recommendation for this result depends on %s, and the most severe of its rows (%s) is used rather than a milder guess; testing %s could change the recommendation",
			untested, untested, valuesOf(worst), untested)
	}
	return worst.r, note
}

// holeAlerts states every result of a gene of the drug that no row of the
// knowledge answers — a guideline the knowledge holds only in part (NAT2
// with hydralazine: only the Rapid Metabolizer row), a population or a
// combination the tables leave out, a DPWG table keyed in a notation the
// calls do not produce — as a MODERATE alert, the level of a review
// (reviewAlerts): the knowledge cannot answer, so the answer must not
// read as "no change needed". answered are the informative rows matched
// in pops. Genes under review, not callable or without phenotype rules
// are stated elsewhere (reviewAlerts, preTestAlerts, the genotype
// warnings).
func (ev *evaluation) holeAlerts(pops []string, answered []*engine.Recommendation) {
	recs := ev.kb.RecommendationsFor(ev.drug.Name)
	source := "CPIC"
	if len(recs) > 0 {
		source = recs[0].Source
	}
	for _, gene := range ev.drugGenes() {
		var results []string
		var calls []engine.GenotypeCall
		if strings.HasPrefix(gene, "HLA-") {
			for _, v := range ev.hlaValues(gene, recs) {
				if !answersValue(answered, gene, v) {
					results = append(results, gene+v)
					calls = append(calls, engine.GenotypeCall{Gene: gene, Phenotype: gene + v})
				}
			}
		} else {
			gg := ev.gt.Genes[gene]
			g, ok := ev.kb.Gene(gene)
			if gg == nil || !ok || len(g.Rules) == 0 || len(gg.Review) > 0 || gg.Uncallable != "" {
				continue
			}
			for _, d := range gg.Diplotypes {
				if answersDiplotype(answered, gene, d) {
					continue
				}
				desc := fmt.Sprintf("%s %s (%s)", gene, d.Call.Phenotype, d.String())
				if d.Call.ActivityScore != "" {
					desc = fmt.Sprintf("%s %s, activity score %s (%s)", gene, d.Call.Phenotype, d.Call.ActivityScore, d.String())
				}
				results = append(results, desc)
				calls = append(calls, engine.GenotypeCall{Gene: gene, Diplotype: d.String(), Phenotype: d.Call.Phenotype, ActivityScore: d.Call.ActivityScore})
			}
		}
		if len(results) == 0 {
			continue
		}
		ev.res.Alerts = append(ev.res.Alerts, ev.holeAlert(gene, source, pops, recs, results, calls))
	}
}

// holeAlert builds the alert of holeAlerts for one gene.
func (ev *evaluation) holeAlert(gene, source string, pops []string, recs []*engine.Recommendation, results []string, calls []engine.GenotypeCall) engine.Alert {
	why := ""
	var present []string
	partial := false
	for _, r := range recs {
		v, ok := r.Lookup[gene]
		if !ok {
			continue
		}
		partial = partial || r.Partial
		if !slices.Contains(present, v) {
			present = append(present, v)
		}
	}
	switch {
	case len(present) == 0:
		why = fmt.Sprintf("the knowledge has no %s recommendation rows for %s and %s", source, gene, ev.drug.Name)
	case partial:
		why = fmt.Sprintf("the knowledge holds only part of the %s guideline (rows for %s %s only)", source, gene, strings.Join(present, ", "))
	default:
		why = fmt.Sprintf("the %s table in the knowledge has no row for this result", source)
	}
	if len(pops) == 1 && pops[0] != "" && pops[0] != "general" {
		why += fmt.Sprintf(" in the guideline population that applies (%s)", pops[0])
	}
	a := engine.Alert{
		Severity: engine.SeverityModerate,
		Gene:     gene,
		Category: engine.CategoryUnknown,
		Message: fmt.Sprintf("No %s row for %s with %s: %s, so this result is not answered here — review. The absence of a recommendation is not a statement that %s needs no change.",
			source, strings.Join(results, " or "), ev.drug.Name, why, ev.drug.Name),
		Action:         fmt.Sprintf("Read the %s guideline for %s and %s for this result, or have it reviewed by a pharmacogenomics pharmacist, before prescribing %s.", source, gene, ev.drug.Name, ev.drug.Name),
		Alternatives:   []string{},
		Genotype:       calls,
		GuidanceSource: source,
		Assumptions:    []string{},
	}
	if gg := ev.gt.Genes[gene]; gg != nil {
		a.Assumptions = append(a.Assumptions, gg.Assumptions...)
	}
	if p := ev.pair(gene); p != nil {
		a.EvidenceLevel = p.EvidenceLevel
		a.Guideline = &engine.Guideline{Name: p.GuidelineName, URL: p.GuidelineURL}
	} else {
		for _, r := range recs {
			if _, ok := r.Lookup[gene]; ok {
				a.Guideline = &engine.Guideline{Name: r.GuidelineName, URL: r.GuidelineURL}
				break
			}
		}
	}
	return a
}

// hlaValues returns the allele statuses of an HLA gene the input gives
// for alleles the drug's rows key on ("*15:02 positive").
func (ev *evaluation) hlaValues(gene string, recs []*engine.Recommendation) []string {
	var out []string
	for _, r := range recs {
		if r.LookupType[gene] != "allele_status" {
			continue
		}
		allele, _, _ := strings.Cut(r.Lookup[gene], " ")
		pos, ok := ev.gt.HLA[gene+allele]
		if !ok {
			continue
		}
		v := allele + " negative"
		if pos {
			v = allele + " positive"
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// answersValue reports whether one of rows looks gene up as v.
func answersValue(rows []*engine.Recommendation, gene, v string) bool {
	for _, r := range rows {
		if r.Lookup[gene] == v {
			return true
		}
	}
	return false
}

// answersDiplotype reports whether one of rows looks gene up as one of the
// forms of d (phenotype, activity score or diplotype).
func answersDiplotype(rows []*engine.Recommendation, gene string, d calling.Diplotype) bool {
	for _, r := range rows {
		if v, ok := r.Lookup[gene]; ok && hasForm(d, v) {
			return true
		}
	}
	return false
}
