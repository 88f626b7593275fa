package evaluate

import (
	"slices"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// FuzzHasFormMatchesForms holds hasForm to the list diplotypeForms builds.
func FuzzHasFormMatchesForms(f *testing.F) {
	f.Add("*1", "*4", "Intermediate Metabolizer", "1.0", "*4/*1", true)
	f.Add("*1", "*4", "Intermediate Metabolizer", "", "*1/*4", true)
	f.Add("*1/", "*4", "", "", "*1///*4", false)
	f.Add("", "", "", "", "/", true)
	f.Add("A", "", "", "", "A", false)
	f.Fuzz(func(t *testing.T, a, b, phen, score, v string, two bool) {
		d := calling.Diplotype{Alleles: []string{a}, Call: calling.PhenotypeCall{Phenotype: phen, ActivityScore: score}}
		if two {
			d.Alleles = append(d.Alleles, b)
		}
		ev := &evaluation{}
		if got, want := hasForm(d, v), slices.Contains(ev.diplotypeForms(d), v); got != want {
			t.Fatalf("hasForm(%+v, %q) = %v, want %v", d, v, got, want)
		}
	})
}
