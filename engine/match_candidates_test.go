package engine_test

import (
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// FuzzCandidatesMatchReference holds the allele candidates the bitsets
// leave to the plain loop running compatible on every allele, on random
// sites of every gene.
func FuzzCandidatesMatchReference(f *testing.F) {
	for seed := range int64(64) {
		f.Add(seed)
	}
	k := kb(f)
	f.Fuzz(func(t *testing.T, seed int64) {
		if d := engine.DiffCandidates(k, seed); d != "" {
			t.Fatal(d)
		}
	})
}
