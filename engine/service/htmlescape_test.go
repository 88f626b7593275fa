package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonHTMLEscape is json.HTMLEscape's form of b.
func jsonHTMLEscape(b []byte) []byte {
	var buf bytes.Buffer
	json.HTMLEscape(&buf, b)
	return buf.Bytes()
}

// TestAppendHTMLEscaped: appendHTMLEscaped writes what json.HTMLEscape
// writes, after what dst holds; htmlEscaped returns its argument itself
// exactly when there is nothing to escape.
func TestAppendHTMLEscaped(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		changed  bool
	}{
		{"empty", "", false},
		{"plain", `{"a":"b c","d":[1,2]}`, false},
		{"html", `{"a":"<b> & </b>"}`, true},
		{"only-amp-at-end", `x&`, true},
		{"line-separators", "a\u2028b\u2029c", true},
		{"other-e2-runes", "≥ – ’ \u2027 \u202a", false},
		{"truncated-e2", "a\xe2\x80", false},
		{"e2-at-end", "a\xe2", false},
		{"mixed", "<\u2028>&\xe2\x80\xa8\xe2\x80\xa9&&<<", true},
		{"invalid-utf8", "\xff<\xfe", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			want := jsonHTMLEscape(in)
			got := appendHTMLEscaped([]byte("prefix"), in)
			if diff := cmp.Diff("prefix"+string(want), string(got)); diff != "" {
				t.Errorf("appendHTMLEscaped (-json.HTMLEscape +got):\n%s", diff)
			}
			if needs := needsHTMLEscape(in); needs != tc.changed || needs != !bytes.Equal(want, in) {
				t.Errorf("needsHTMLEscape = %v, want %v", needs, tc.changed)
			}
			esc := htmlEscaped(in)
			if diff := cmp.Diff(string(want), string(esc)); diff != "" {
				t.Errorf("htmlEscaped (-json.HTMLEscape +got):\n%s", diff)
			}
			if len(in) == 0 {
				return
			}
			if shared := &esc[0] == &in[0]; shared == tc.changed {
				t.Errorf("htmlEscaped shares its argument: %v, want %v", shared, !tc.changed)
			}
		})
	}
}

// FuzzAppendHTMLEscaped is the differential test of appendHTMLEscaped and
// needsHTMLEscape against json.HTMLEscape.
func FuzzAppendHTMLEscaped(f *testing.F) {
	for _, s := range []string{"", "<b>a & b</b>", "\u2028\u2029\xe2\x80\xe2", "≥–’", "\xe2\x80\xa8x\xe2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := jsonHTMLEscape(in)
		if got := appendHTMLEscaped([]byte("x"), in); string(got) != "x"+string(want) {
			t.Fatalf("%q: appendHTMLEscaped %q, json.HTMLEscape %q", in, got, want)
		}
		if needs := needsHTMLEscape(in); needs == bytes.Equal(want, in) {
			t.Fatalf("%q: needsHTMLEscape %v, json.HTMLEscape changes it: %v", in, needs, !bytes.Equal(want, in))
		}
	})
}

// TestDigest: digest is "sha256:" and the hex SHA-256.
func TestDigest(t *testing.T) {
	for _, in := range []string{"", "abc", `{"a":"<b>"}`} {
		sum := sha256.Sum256([]byte(in))
		if diff := cmp.Diff("sha256:"+hex.EncodeToString(sum[:]), digest([]byte(in))); diff != "" {
			t.Errorf("digest(%q) (-want +got):\n%s", in, diff)
		}
	}
}
