package pgxapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/labcsv"
)

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uo\te`, "tab\tnl\ncr\r", "\x00\x1f\x7f", "<&>", "ünïcödé ✓", "\u2028\u2029", "bad\xffutf8\xc3", "LAB-\xe9-013"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Errorf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

// TestAppendRowJSON: a row result is one valid JSON object, for a
// successful row and for a failed one.
func TestAppendRowJSON(t *testing.T) {
	rows := []labcsv.Row{
		{Row: 1, Line: 2, Input: &labcsv.RowInput{PatientRef: "P\"1\n"}, OK: true, Result: []byte(`{"drug":"x"}`)},
		{Row: 2, Line: 3, Error: &labcsv.RowError{Code: labcsv.RowErrBadQuoting, Field: "record", Detail: "bad \xff quote"}},
	}
	for _, r := range rows {
		line := AppendRowJSON(nil, &r, "aud_x", "row")
		var got map[string]any
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("row %d: %v: %s", r.Row, err, line)
		}
		if got["kind"] != "row" || got["audit_log_id"] != "aud_x" || got["row"] != float64(r.Row) {
			t.Errorf("row %d: %s", r.Row, line)
		}
	}
}

// FuzzAppendJSONStringMatchesEncodingJSON: any string, in both escaping
// forms, is escaped exactly as encoding/json escapes it.
func FuzzAppendJSONStringMatchesEncodingJSON(f *testing.F) {
	f.Add("plain text that is longer than a word <b> & \u2028 \xff \x00 \"q\" \\")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		for _, escapeHTML := range []bool{true, false} {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(escapeHTML)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(buf.String(), "\n")
			if got := string(appendJSONStringHTML(nil, s, escapeHTML)); got != want {
				t.Fatalf("appendJSONStringHTML(%q, %v) = %s, encoding/json %s", s, escapeHTML, got, want)
			}
		}
	})
}
