package fhir

import (
	"testing"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// numberCases are JSON number literals and near misses.
var numberCases = []string{
	"0", "-0", "1", "-1", "10", "01", "1.", "1.0", ".5", "-.5", "1e5", "1E5", "1e+5", "1e-5", "1e", "1e+", "-", "+1",
	"1.5e10", "0.0001", "00", "-01", "55227976", "1.10", "1x", "1,", "1}", "1.e5", "0e0", "",
}

// checkNumber: whatever number reads is a literal the decimal regex
// (google/fhir's value_regex of Decimal, which the fast path checked
// before) accepts, so the fast path no longer asks the regex; and it is
// the bytes it passed over, read from the string or from the bytes.
func checkNumber(t *testing.T, decimalRE interface{ MatchString(string) bool }, b []byte) {
	t.Helper()
	for _, src := range []string{string(b), ""} {
		s := scanner{b: b, src: src}
		lit, ok := s.number()
		if !ok {
			continue
		}
		if !decimalRE.MatchString(lit) {
			t.Fatalf("number read %q from %q, which the decimal regex refuses", lit, b)
		}
		if lit != string(b[:s.i]) {
			t.Fatalf("number read %q from %q, passing over %q", lit, b, b[:s.i])
		}
	}
}

func TestNumberMatchesDecimalRegex(t *testing.T) {
	re := valueRegex(&dpb.Decimal{})
	read := 0
	for _, c := range numberCases {
		checkNumber(t, re, []byte(c))
		s := scanner{b: []byte(c)}
		if _, ok := s.number(); ok {
			read++
		}
	}
	if read == 0 || read == len(numberCases) {
		t.Fatalf("number read %d of %d cases", read, len(numberCases))
	}
}

// FuzzNumberMatchesDecimalRegex is TestNumberMatchesDecimalRegex on any
// bytes.
func FuzzNumberMatchesDecimalRegex(f *testing.F) {
	for _, c := range numberCases {
		f.Add([]byte(c))
	}
	re := valueRegex(&dpb.Decimal{})
	f.Fuzz(func(t *testing.T, b []byte) { checkNumber(t, re, b) })
}
