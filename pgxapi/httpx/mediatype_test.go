package httpx

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRequireJSON: the media types accepted without parsing are accepted
// by the parse too, and the rule is unchanged around them.
func TestRequireJSON(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		want string // "" accepted, else the problem's detail
	}{
		{"application/json", ""},
		{"application/json; charset=utf-8", ""},
		{"application/json;charset=UTF-8", ""},
		{"Application/JSON", ""},
		{"application/json ; charset=\"utf-8\"", ""},
		{"", "Content-Type must be application/json"},
		{"text/plain", "Content-Type must be application/json"},
		{"application/json; charset=latin1", "Content-Type must be application/json; the only parameter accepted is charset=utf-8"},
		{"application/json; x=1", "Content-Type must be application/json; the only parameter accepted is charset=utf-8"},
		{"application/json;", ""},
		{"application/json; charset=utf-8; charset=utf-8", ""},
	} {
		got := ""
		if err := requireJSON(tc.ct); err != nil {
			got = err.(*Error).Detail
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("requireJSON(%q) (-want +got):\n%s", tc.ct, diff)
		}
	}
	// The fast path agrees with the parse.
	for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
		if err := requireJSONParsed(ct); err != nil {
			t.Errorf("the parse refuses %q: %v", ct, err)
		}
	}
}
