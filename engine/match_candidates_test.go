package engine_test

import (
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestCellTablesMatchCells holds the dense cell table built at Build to
// the linear lookup over each allele's cells it replaces.
func TestCellTablesMatchCells(t *testing.T) {
	if d := engine.DiffCellTables(kb(t)); d != "" {
		t.Fatal(d)
	}
}

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
