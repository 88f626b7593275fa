package calling

import (
	"sort"
	"strings"
	"testing"
)

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
