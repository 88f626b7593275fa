package population

import (
	"sort"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file indexes each drug's recommendation rows by guideline population.

// DrugRows are a drug's recommendation rows by guideline population,
// read once at New (SelectPopulation, the evaluation's row matching).
type DrugRows struct {
	all  []string        // the populations, sorted
	set  map[string]bool // the same, as a set
	Rows map[string][]*engine.Recommendation
	// Keys[pop][i] are, for Rows[pop][i], each gene (in the row's order)
	// with its lookup value and lookup type.
	Keys map[string][][]RecKey
	// NoResult[pop][gene] is true when a row of pop looks gene up as
	// "No Result".
	NoResult map[string]map[string]bool
}

// RecKey is one gene of a recommendation row with what the row looks up.
type RecKey struct{ Gene, Lookup, LookupType string }

// buildPopulations indexes every drug's rows by population.
func buildPopulations(k *engine.Knowledge) map[string]*DrugRows {
	recs := map[string][]*engine.Recommendation{}
	for i := range k.Recommendations {
		r := &k.Recommendations[i]
		recs[r.Drug] = append(recs[r.Drug], r)
	}
	out := make(map[string]*DrugRows, len(recs))
	for drug, rs := range recs {
		dp := &DrugRows{set: map[string]bool{}, Rows: map[string][]*engine.Recommendation{}, Keys: map[string][][]RecKey{}, NoResult: map[string]map[string]bool{}}
		for _, r := range rs {
			if !dp.set[r.Population] {
				dp.set[r.Population] = true
				dp.all = append(dp.all, r.Population)
				dp.NoResult[r.Population] = map[string]bool{}
			}
			dp.Rows[r.Population] = append(dp.Rows[r.Population], r)
			rk := make([]RecKey, len(r.Genes))
			for i, g := range r.Genes {
				rk[i] = RecKey{g, r.Lookup[g], r.LookupType[g]}
			}
			dp.Keys[r.Population] = append(dp.Keys[r.Population], rk)
			for _, g := range r.Genes {
				if r.Lookup[g] == "No Result" {
					dp.NoResult[r.Population][g] = true
				}
			}
		}
		sort.Strings(dp.all)
		out[drug] = dp
	}
	return out
}

// Rows returns a drug's recommendation rows by population, or nil when the
// drug has none.
func (k *Selector) Rows(drug string) *DrugRows { return k.idx.pops[drug] }
