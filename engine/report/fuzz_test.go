package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// FuzzWriteSample: any answer bytes either are refused or render a section
// in which no text of the answer became markup (no script, no element
// beyond the report's own).
func FuzzWriteSample(f *testing.F) {
	f.Add(result(f, "S1", []vcfcall.GeneResult{called, review, noData}, clopidogrelCheck("")), "S")
	f.Add(result(f, "<b>x</b>", []vcfcall.GeneResult{noReason}, clopidogrelCheck("<script>")), "<i>")
	f.Add([]byte(`{"sample":"a","genes":[{"gene":"<x>","needs_review":true}],"checks":[{"drug":"d","error":"<e>"}]}`), "")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		m := meta
		m.FileName = name
		var buf bytes.Buffer
		if err := report.WriteSample(&buf, m, 1, report.Sample{Result: b, Digest: name, AuditID: name}); err != nil {
			return
		}
		out := strings.ToLower(buf.String())
		for _, bad := range []string{"<script", "<img", "<iframe", "<link", "<x>", "<b>", "<i>", "<e>"} {
			if strings.Contains(out, bad) {
				t.Fatalf("the section holds %q", bad)
			}
		}
	})
}
