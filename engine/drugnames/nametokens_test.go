package drugnames

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// nameTokensRunes is nameTokens as it was written before it returned
// substrings: a rune slice and a builder. FuzzNameTokens holds the two
// together.
func nameTokensRunes(s string) []string {
	s = strings.ToLower(s)
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case (r == '.' || r == ',') && b.Len() > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i+1]) && unicode.IsDigit(rs[i-1]):
			b.WriteRune(r)
		case r == '%':
			flush()
			out = append(out, "%")
		default:
			flush()
		}
	}
	flush()
	return out
}

func TestNameTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"clopidogrel", []string{"clopidogrel"}},
		{"Clopidogrel 75 MG Oral Tablet", []string{"clopidogrel", "75", "mg", "oral", "tablet"}},
		{"Amoxicillin 0.5 g, 1,000 mg", []string{"amoxicillin", "0.5", "g", "1,000", "mg"}},
		{"6-MP 2.5%", []string{"6", "mp", "2.5", "%"}},
		{"x.5 5. .5 a,1", []string{"x", "5", "5", "5", "a", "1"}},
		{"TDF/FTC/EFV", []string{"tdf", "ftc", "efv"}},
		{"Ünïcödé ２.５", []string{"ünïcödé", "２.５"}},
		{"a\xffb 1.\xff2", []string{"a", "b", "1", "2"}},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, nameTokens(tt.in)); diff != "" {
			t.Errorf("nameTokens(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func FuzzNameTokens(f *testing.F) {
	for _, s := range []string{"clopidogrel", "Clopidogrel 75 MG Oral Tablet", "1,000.5%x", "a\xffb 1.\xff2", "İ9.9", "٣.٤", "1.\u00a02"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if diff := cmp.Diff(nameTokensRunes(s), nameTokens(s)); diff != "" {
			t.Fatalf("nameTokens(%q) differs from the rune reading (-want +got):\n%s", s, diff)
		}
	})
}
