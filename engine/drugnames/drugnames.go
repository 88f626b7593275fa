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

// Drug returns the covered drug for a name, synonym or salt form. It
// answers through ReadDrug, and only when the name reads as exactly one
// drug; combinations and names that need confirmation return false.
func (k *Reader) Drug(name string) (*engine.Drug, bool) {
	if d, ok := k.idx.drugs[NormaliseDrugName(name)]; ok {
		return d, true
	}
	if d, ok := k.idx.altDrugs[name]; ok {
		return d, d != nil
	}
	r := k.readDrug(name, false)
	if r.Status != engine.DrugStatusRecognised || len(r.Drugs) != 1 || len(r.Unrecognised) > 0 {
		return nil, false
	}
	d, ok := k.idx.drugs[r.Drugs[0]]
	return d, ok
}

// plainLowerWord reports whether s is non-empty ASCII without upper-case
// letters or white space.
func plainLowerWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c >= 'A' && c <= 'Z' || c == ' ' || c >= '\t' && c <= '\r' {
			return false
		}
	}
	return s != ""
}

// saltWords are pharmaceutical salt and form words dropped when a drug name
// is normalised ("clopidogrel bisulfate" → "clopidogrel"). This is naming
// convention, not clinical content.
var saltWords = map[string]bool{
	"hydrochloride": true, "hcl": true, "sodium": true, "potassium": true,
	"calcium": true, "magnesium": true, "bisulfate": true, "bisulphate": true,
	"besylate": true, "besilate": true, "mesylate": true, "mesilate": true,
	"maleate": true, "fumarate": true, "succinate": true, "tartrate": true,
	"citrate": true, "sulfate": true, "sulphate": true, "phosphate": true,
	"acetate": true, "hydrobromide": true, "dihydrate": true, "monohydrate": true,
	"trihydrate": true, "hemihydrate": true, "tablet": true, "tablets": true,
	"capsule": true, "capsules": true, "oral": true, "injection": true,
}

// NormaliseDrugName trims, lower-cases, folds white space and drops salt
// and dosage-form words. The canonical knowledge names are returned
// unchanged by it ("divalproex sodium" stays itself when it is the name).
func NormaliseDrugName(s string) string {
	if plainLowerWord(s) {
		return s // one lower-case word: Fields and Join give it back
	}
	fields := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(fields) <= 1 {
		return strings.Join(fields, " ")
	}
	out := fields[:0:0]
	for _, f := range fields {
		if !saltWords[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = fields
	}
	return strings.Join(out, " ")
}
