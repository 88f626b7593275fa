package engine

import (
	"sort"
	"strings"
	"testing"
)

// normaliseDrugNameReference is NormaliseDrugName before its one-word path.
func normaliseDrugNameReference(s string) string {
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

// FuzzNormaliseKey holds normaliseKey and NormaliseDrugName, with their
// fast paths for plain ASCII, to the general code they skip.
func FuzzNormaliseKey(f *testing.F) {
	for _, s := range []string{"", " ", "Tamil Nadu", "tamil nadu", "tamil  nadu", " tamil", "tamil ", "Jammu & Kashmir", "Daman_and-Diu", "KERALA", "ΚELVIN", "\u212a", "İstanbul", "a\tb", "clopidogrel", "Clopidogrel", "clopidogrel bisulfate", "\x85x", "x\u00a0y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normaliseKey(s), normaliseKeyRunes(s); got != want {
			t.Fatalf("normaliseKey(%q) = %q, want %q", s, got, want)
		}
		if got, want := NormaliseDrugName(s), normaliseDrugNameReference(s); got != want {
			t.Fatalf("NormaliseDrugName(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzHasFormMatchesForms holds hasForm to the list diplotypeForms builds.
func FuzzHasFormMatchesForms(f *testing.F) {
	f.Add("*1", "*4", "Intermediate Metabolizer", "1.0", "*4/*1", true)
	f.Add("*1", "*4", "Intermediate Metabolizer", "", "*1/*4", true)
	f.Add("*1/", "*4", "", "", "*1///*4", false)
	f.Add("", "", "", "", "/", true)
	f.Add("A", "", "", "", "A", false)
	f.Fuzz(func(t *testing.T, a, b, phen, score, v string, two bool) {
		d := Diplotype{Alleles: []string{a}, Call: PhenotypeCall{Phenotype: phen, ActivityScore: score}}
		if two {
			d.Alleles = append(d.Alleles, b)
		}
		ev := &evaluation{}
		if got, want := hasForm(d, v), contains(ev.diplotypeForms(d), v); got != want {
			t.Fatalf("hasForm(%+v, %q) = %v, want %v", d, v, got, want)
		}
	})
}

// FuzzObservationLabel holds observationLabel to the concatenation it
// replaces.
func FuzzObservationLabel(f *testing.F) {
	f.Add("chr10:94781859 rs4244285", "G", "A", true, true)
	f.Add("", "", "", false, false)
	f.Fuzz(func(t *testing.T, label, a, b string, two, phased bool) {
		alleles := []string{a}
		if two {
			alleles = append(alleles, b)
		}
		if got, want := observationLabel(label, alleles, phased), label+" "+gtString(alleles, phased); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
	})
}

// FuzzDiplotypeKey holds diplotypeKey's one- and two-allele paths to the
// sorted join.
func FuzzDiplotypeKey(f *testing.F) {
	f.Add("*1", "*4", 2)
	f.Add("*4", "*1", 1)
	f.Add("", "\x00", 3)
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		names := []string{a, b, a + b}[:1+(n&1)+(n>>1&1)]
		c := append([]string(nil), names...)
		sort.Strings(c)
		if got, want := diplotypeKey(names), strings.Join(c, "\x00"); got != want {
			t.Fatalf("diplotypeKey(%q) = %q, want %q", names, got, want)
		}
	})
}
