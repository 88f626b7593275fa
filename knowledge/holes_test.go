package knowledge

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
)

// allelePairs returns every diplotype a gene can take: each unordered pair
// of the alleles its definitions name and the knowledge's gene table
// lists (copy-number and tandem names of CYP2D6 included), and for a
// hemizygous gene (G6PD in males, MT-RNR1) each allele alone.
func allelePairs(kb *evaluate.Engine, g *engine.Gene) [][]string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if d, ok := kb.Caller().Definition(g.Symbol); ok {
		for _, a := range d.Alleles {
			if !slices.Contains(d.IgnoredAlleles, a.Name) {
				add(a.Name)
			}
		}
	}
	for _, a := range g.Alleles {
		add(a.Name)
	}
	var out [][]string
	hemi, diploid := false, len(g.Rules) == 0
	for _, r := range g.Rules {
		hemi = hemi || r.Type == "hemizygous_function"
		diploid = diploid || r.Type != "hemizygous_function"
	}
	for i := range names {
		if hemi {
			out = append(out, []string{names[i]})
		}
		if !diploid {
			continue // MT-RNR1: one (homoplasmic) allele
		}
		for j := i; j < len(names); j++ {
			out = append(out, []string{names[i], names[j]})
		}
	}
	return out
}

// drugOfGene returns a drug whose recommendation rows use gene (a drug of
// the gene's CPIC pairs when none has rows), for evaluating a diplotype.
func drugOfGene(kb *evaluate.Engine, gene string) string {
	if gene == "CYP4F2" {
		return "warfarin" // the one drug whose CPIC guidance uses CYP4F2
	}
	for _, r := range kb.Recommendations {
		if slices.Contains(r.Genes, gene) {
			return r.Drug
		}
	}
	for _, d := range kb.Drugs {
		for _, p := range d.Pairs {
			if p.Gene == gene {
				return d.Name
			}
		}
	}
	return ""
}

// TestEveryDiplotypeReachesPhenotype walks every allele pair of every gene
// (issue 21 item 3) through the CPIC phenotype tables. A pair reaches a
// CPIC phenotype, or the answer states why not, for one of the reasons
// below, checked through the engine as POST /pgx/check answers the
// diplotype:
//
//   - an allele has no CPIC function in the knowledge (PharmVar alleles
//     CPIC has not assigned, TPMT *42–*44, NAT2 *70–*75, …): the gene reads
//     "could not interpret — review" with a MODERATE review alert naming
//     the allele;
//   - the gene has no CPIC phenotype rules (CYP4F2: CPIC's warfarin flow
//     chart uses rs2108622 carrier status, not a phenotype): warfarin's
//     answer says so and whether the patient carries rs2108622 T.
//
// Anything else is a hole and must be in knownHoles, each with its
// reason; the table is compared with cmp.Diff so a new hole (or a fixed
// one) fails the test.
func TestEveryDiplotypeReachesPhenotype(t *testing.T) {
	kb := mustLoad(t)
	// knownHoles: pairs that reach no phenotype and no stated reason.
	var knownHoles []string // none: IFNL3 has its CPIC phenotype rules (knowledge/internal/gen/cited)
	var holes []string
	pairs, reached, noFunction, noRules := 0, 0, 0, 0
	for i := range kb.Genes {
		g := &kb.Genes[i]
		if g.Method == engine.MethodAlleleStatus && len(g.Alleles) == 0 {
			continue // HLA: allele status, no diplotypes
		}
		drug := drugOfGene(kb, g.Symbol)
		for _, p := range allelePairs(kb, g) {
			pairs++
			dip := strings.Join(p, "/")
			if _, err := kb.Caller().Phenotype(g.Symbol, p...); err == nil {
				reached++
				continue
			}
			var nofn []string
			for _, name := range p {
				if a, ok := kb.Allele(g.Symbol, name); !ok || a.Function == "" {
					nofn = append(nofn, name)
				}
			}
			label := g.Symbol + " " + dip
			switch {
			case len(g.Rules) == 0 && g.Symbol == "CYP4F2":
				noRules++
				res := evaluateDiplotype(t, kb, drug, g.Symbol, p)
				if !slices.ContainsFunc(res.Warnings, func(w string) bool {
					return strings.Contains(w, "CPIC assigns CYP4F2 no phenotype") && strings.Contains(w, dip)
				}) {
					t.Errorf("%s with %s: no warning saying how CYP4F2 was used: %v", label, drug, res.Warnings)
				}
			case len(nofn) > 0 && len(g.Rules) > 0:
				noFunction++
				res := evaluateDiplotype(t, kb, drug, g.Symbol, p)
				if !statesReview(res, g.Symbol, nofn[0]) {
					t.Errorf("%s with %s: no MODERATE review naming %s: %s; %+v", label, drug, nofn[0], res.OverallSeverity, res.Genotype)
				}
			default:
				holes = append(holes, label)
			}
		}
	}
	sort.Strings(holes)
	if diff := cmp.Diff(knownHoles, holes); diff != "" {
		t.Errorf("allele pairs that reach neither a CPIC phenotype nor a stated reason (-known +now):\n%s", diff)
	}
	if pairs < 100000 || reached < 90000 || noFunction == 0 || noRules == 0 {
		t.Errorf("walked %d pairs: %d reached a phenotype, %d have an allele without function, %d in a gene without rules", pairs, reached, noFunction, noRules)
	}
	t.Logf("%d allele pairs: %d reach a CPIC phenotype, %d have an allele without a CPIC function (review), %d CYP4F2 (no rules, warned), %d known holes",
		pairs, reached, noFunction, noRules, len(holes))
}

// evaluateDiplotype answers drug for one diplotype of gene (one allele: a
// hemizygous male).
func evaluateDiplotype(t *testing.T, kb *evaluate.Engine, drug, gene string, alleles []string) engine.Result {
	t.Helper()
	req := engine.Request{Drug: drug, Diplotypes: map[string]string{gene: strings.Join(alleles, "/")}, Patient: &engine.Patient{Sex: "female"}}
	if len(alleles) == 1 {
		req.Patient.Sex = "male"
	}
	res, err := kb.Evaluate(req)
	if err != nil {
		t.Fatalf("%s %s %v: %v", drug, gene, alleles, err)
	}
	return res
}

// statesReview reports whether res reads gene as "could not interpret —
// review" with a MODERATE review alert naming allele.
func statesReview(res engine.Result, gene, allele string) bool {
	if res.OverallSeverity < engine.SeverityModerate {
		return false
	}
	for _, g := range res.Genotype {
		if g.Gene == gene && g.Phenotype != "Could not interpret — review" {
			return false
		}
	}
	for _, a := range res.Alerts {
		if a.Gene == gene && a.Severity == engine.SeverityModerate && strings.Contains(a.Message, "review") && strings.Contains(a.Message, allele) {
			return true
		}
	}
	return false
}

// reachable returns, for every gene with phenotype rules, each lookup
// result its allele pairs reach ("Poor Metabolizer"; with the activity
// score for activity-score genes, "Poor Metabolizer, 0.0") and one
// diplotype that reaches it.
func reachable(kb *evaluate.Engine) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for i := range kb.Genes {
		g := &kb.Genes[i]
		if len(g.Rules) == 0 {
			continue
		}
		m := map[string][]string{}
		for _, p := range allelePairs(kb, g) {
			call, err := kb.Caller().Phenotype(g.Symbol, p...)
			if err != nil {
				continue
			}
			key := call.Phenotype
			if call.ActivityScore != "" {
				key += ", " + call.ActivityScore
			}
			if _, ok := m[key]; !ok {
				m[key] = p
			}
		}
		out[g.Symbol] = m
	}
	return out
}

// TestKnowledgeHoles lists every (drug, gene, result) the knowledge cannot
// answer: a result the gene's alleles reach, of a gene of the drug's
// recommendation rows or of its CPIC level A/B pairs, that no row of the
// drug looks up (by phenotype, activity score or DPWG's "score
// (phenotype)", in any population). Each
// is checked through the engine — the answer names it in a MODERATE
// alert, never NONE — and every result that a row answers gets no such
// alert. The table is compared with cmp.Diff: a new hole fails the test
// (add the rows to the knowledge, or add the hole here knowing the
// answer states it). Warfarin (CPIC flow chart, no lookup rows) and HLA
// genes (allele status; both statuses are rows of every table) are
// outside the walk; genes without phenotype rules (CYP4F2) are
// TestEveryDiplotypeReachesPhenotype's.
func TestKnowledgeHoles(t *testing.T) {
	kb := mustLoad(t)
	reach := reachable(kb)
	var holes []string
	checked, answered := 0, 0
	for i := range kb.Drugs {
		d := &kb.Drugs[i]
		if d.Name == "warfarin" {
			continue
		}
		recs := kb.RecommendationsFor(d.Name)
		genes := map[string]bool{}
		for _, r := range recs {
			for _, g := range r.Genes {
				genes[g] = true
			}
		}
		for _, p := range d.Pairs {
			if p.CPICLevel == "A" || p.CPICLevel == "A/B" || p.CPICLevel == "B" {
				genes[p.Gene] = true
			}
		}
		var gs []string
		for g := range genes {
			if _, ok := reach[g]; ok {
				gs = append(gs, g)
			}
		}
		sort.Strings(gs)
		for _, gene := range gs {
			var keys []string
			for key := range reach[gene] {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				phen, score, _ := strings.Cut(key, ", ")
				hole := true
				for _, r := range recs {
					if v, ok := r.Lookup[gene]; ok && (v == phen || score != "" && (v == score || v == score+" ("+phen+")")) {
						hole = false
						break
					}
				}
				checked++
				label := fmt.Sprintf("%s | %s | %s", d.Name, gene, key)
				alleles := reach[gene][key]
				res := evaluateDiplotype(t, kb, d.Name, gene, alleles)
				stated := statesHole(res, gene)
				switch {
				case hole && !stated:
					t.Errorf("%s (%s): hole not stated; overall %s, alerts %+v", label, strings.Join(alleles, "/"), res.OverallSeverity, res.Alerts)
				case !hole && stated:
					t.Errorf("%s (%s): a row answers it, but the answer says no row does", label, strings.Join(alleles, "/"))
				}
				if hole {
					holes = append(holes, label)
				} else {
					answered++
				}
			}
		}
	}
	if diff := cmp.Diff(knownKnowledgeHoles, holes); diff != "" {
		t.Errorf("(drug | gene | result) the knowledge cannot answer (-known +now):\n%s", diff)
	}
	if checked < 500 || answered < 400 {
		t.Errorf("checked %d results, %d answered: the walk lost its rows", checked, answered)
	}
	t.Logf("%d (drug, gene, result) checked: %d answered by a row, %d holes stated", checked, answered, len(holes))
}

// statesHole reports whether res has the MODERATE "no row" alert for gene.
func statesHole(res engine.Result, gene string) bool {
	for _, a := range res.Alerts {
		if a.Gene == gene && a.Severity >= engine.SeverityModerate && a.Category == engine.CategoryUnknown && strings.HasPrefix(a.Message, "No ") && strings.Contains(a.Message, " row for ") {
			return true
		}
	}
	return false
}
