package evaluate

import (
	"strings"
	"testing"
)

// FuzzContainsNormal holds containsNormal to the lower-case copy it
// avoids building.
func FuzzContainsNormal(f *testing.F) {
	for _, s := range []string{"", "Normal Metabolizer", "Poor Metabolizer", "NORMAL", "abnormal", "norma", "Nörmal", "nOrMaL function", "\xffnormal", "İnormal"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := containsNormal(v), strings.Contains(strings.ToLower(v), "normal"); got != want {
			t.Fatalf("containsNormal(%q) = %v, want %v", v, got, want)
		}
	})
}
