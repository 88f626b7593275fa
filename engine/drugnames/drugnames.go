// Package drugnames reads drug names as they are written in practice —
// generic names, salts, brands, abbreviations, combination products,
// RxNorm and ATC codes — into the covered drugs of the knowledge. It is
// the one drug-name reader of the service and imports only the engine
// root.
package drugnames

import (
	"fmt"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Reader reads drug names against one knowledge base. Build it once with
// New; it is read-only afterwards and safe for concurrent use.
type Reader struct {
	*engine.Knowledge
	idx *index
}

// index holds the reader's lookups over the knowledge rows.
type index struct {
	drugs map[string]*engine.Drug // normalised name or synonym → drug
	names *nameIndex              // drug names, brands, codes (drugname.go)
	// altDrugs is Drug's answer, read once at New, for every name a
	// recommendation gives as an alternative (nil: not a covered drug).
	// The re-check of alternatives looks these names up on every check.
	altDrugs map[string]*engine.Drug
}

// New indexes k's drugs and drug names. It fails when one name names two
// drugs.
func New(k *engine.Knowledge) (*Reader, error) {
	ix := &index{drugs: map[string]*engine.Drug{}}
	var problems []string
	for i := range k.Drugs {
		d := &k.Drugs[i]
		for _, n := range append([]string{d.Name}, d.Synonyms...) {
			key := NormaliseDrugName(n)
			if prev, ok := ix.drugs[key]; ok && prev != d {
				problems = append(problems, fmt.Sprintf("drug name %q names both %q and %q", n, prev.Name, d.Name))
				continue
			}
			ix.drugs[key] = d
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("knowledge index: %s", strings.Join(problems, "; "))
	}
	ix.names = buildNameIndex(k)
	r := &Reader{Knowledge: k, idx: ix}
	alt := map[string]*engine.Drug{}
	for _, rec := range k.Recommendations {
		for _, name := range rec.Alternatives {
			if _, done := alt[name]; !done {
				d, _ := r.Drug(name)
				alt[name] = d
			}
		}
	}
	ix.altDrugs = alt
	return r, nil
}

// Covered returns the covered drug of a knowledge drug name (a name a
// DrugReading lists).
func (k *Reader) Covered(name string) (*engine.Drug, bool) {
	d, ok := k.idx.drugs[name]
	return d, ok
}
