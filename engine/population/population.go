// Package population chooses the CPIC guideline population of a drug's
// recommendations from the clinical context — coded indications, the
// free-text indication, age and months on the drug — and matches an
// ethnicity to the communities of the knowledge. It imports only the
// engine root.
package population

import "github.com/pgxsafety/pgxsafety/engine"

// Selector chooses populations against one knowledge base. Build it once
// with New; it is read-only afterwards and safe for concurrent use.
type Selector struct {
	*engine.Knowledge
	idx *index
}

// index holds the selector's lookups over the knowledge rows.
type index struct {
	indication  *indicationIndex // indication codes (indication.go)
	communities []*engine.Community
	// communityNames are, per community, its whole names as normalised
	// word sequences (community.go).
	communityNames [][][]string
	// pops holds, per drug with recommendations, its rows by population.
	pops map[string]*DrugRows
}

// New indexes k's indication codes, communities and recommendation rows.
func New(k *engine.Knowledge) *Selector {
	ix := &index{indication: buildIndicationIndex(k), pops: buildPopulations(k)}
	for i := range k.Communities {
		c := &k.Communities[i]
		ix.communities = append(ix.communities, c)
		ix.communityNames = append(ix.communityNames, communityNames(k, c))
	}
	return &Selector{Knowledge: k, idx: ix}
}
