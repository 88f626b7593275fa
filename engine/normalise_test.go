package engine

import "testing"

// FuzzNormaliseKey holds NormaliseKey, with its fast path for plain
// ASCII, to the general code it skips.
func FuzzNormaliseKey(f *testing.F) {
	for _, s := range []string{"", " ", "Tamil Nadu", "tamil nadu", "tamil  nadu", " tamil", "tamil ", "Jammu & Kashmir", "Daman_and-Diu", "KERALA", "ΚELVIN", "\u212a", "İstanbul", "a\tb", "clopidogrel", "Clopidogrel", "clopidogrel bisulfate", "\x85x", "x\u00a0y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := NormaliseKey(s), normaliseKeyRunes(s); got != want {
			t.Fatalf("NormaliseKey(%q) = %q, want %q", s, got, want)
		}
	})
}
