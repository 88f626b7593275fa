package calling_test

import (
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// FuzzCandidatesMatchReference holds the allele candidates the bitsets
// leave to the plain loop running compatible on every allele, on random
// sites of every gene.
func FuzzCandidatesMatchReference(f *testing.F) {
	for seed := range int64(64) {
		f.Add(seed)
	}
	e, err := knowledge.Default()
	if err != nil {
		f.Fatal(err)
	}
	k := e.Caller()
	f.Fuzz(func(t *testing.T, seed int64) {
		if d := calling.DiffCandidates(k, seed); d != "" {
			t.Fatal(d)
		}
	})
}
