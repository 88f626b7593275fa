package drugnames

import (
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

// FuzzNormaliseDrugName holds NormaliseDrugName, with its fast path for
// one plain word, to the general code it skips.
func FuzzNormaliseDrugName(f *testing.F) {
	for _, s := range []string{"", " ", "Tamil Nadu", "tamil nadu", "tamil  nadu", " tamil", "tamil ", "Jammu & Kashmir", "Daman_and-Diu", "KERALA", "ΚELVIN", "\u212a", "İstanbul", "a\tb", "clopidogrel", "Clopidogrel", "clopidogrel bisulfate", "\x85x", "x\u00a0y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := NormaliseDrugName(s), normaliseDrugNameReference(s); got != want {
			t.Fatalf("NormaliseDrugName(%q) = %q, want %q", s, got, want)
		}
	})
}
