package smart

import (
	"testing"
	"unicode"
)

// FuzzAppContext: any appContext from a token response reads without
// panicking, and a card drug taken from it is bounded and has no control
// characters.
func FuzzAppContext(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"drug":"clopidogrel"}`, `{"drug":"` + "\x00" + `"}`, `[1,2]`, `"text"`, `{"drug":12}`} {
		f.Add(s)
	}
	s := &Server{}
	f.Fuzz(func(t *testing.T, raw string) {
		ac := appContextString(raw)
		d := s.cardDrug(ac)
		if len(d) > 200 {
			t.Fatalf("card drug of %d bytes", len(d))
		}
		for _, r := range d {
			if unicode.IsControl(r) {
				t.Fatalf("control character in %q", d)
			}
		}
	})
}

// FuzzParseSigningKey: arbitrary bytes never panic the key parser, and a
// key it accepts signs with RS384 or ES384 only.
func FuzzParseSigningKey(f *testing.F) {
	f.Add([]byte(`{"kty":"EC","crv":"P-384","kid":"k","x":"AA","y":"AA","d":"AA"}`))
	f.Add([]byte(`{"kty":"oct","k":"c2VjcmV0","kid":"k"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseSigningKey(b)
		if err == nil && k.alg.String() != "RS384" && k.alg.String() != "ES384" {
			t.Fatalf("accepted a key signing with %s", k.alg)
		}
	})
}
