package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBenchCommand runs pgxsafety bench with tiny settings and checks that
// every scenario ran without errors and the report carries the ratios to
// the bare handler. It asserts nothing about speed.
func TestBenchCommand(t *testing.T) {
	for _, k := range platformEnv {
		t.Setenv(k, "")
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"bench", "--conns", "1,2", "--duration", "50ms", "--csv-rows", "50",
		"--scenarios", "bare,check-sqlite,cds,vcf,csv", "--audit-prefill", "300"}, &out, &errOut)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "sqlite audit log prefilled with 300 entries") {
		t.Errorf("no prefill reported:\n%s", errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "×bare req/s") {
		t.Fatalf("report:\n%s", out.String())
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 14 {
			t.Fatalf("short report line %q", l)
		}
		seen[f[0]] = true
		// errors column: the 11th field counted from the end of the
		// ratios (three ratios, then errors).
		if errs := f[len(f)-4]; errs != "0" {
			t.Errorf("%s: %s errors", f[0], errs)
		}
		if f[0] == "check-sqlite" && f[len(f)-3] == "-" {
			t.Errorf("check-sqlite has no ratio to the bare handler: %q", l)
		}
	}
	for _, s := range []string{"bare", "check-sqlite", "cds", "vcf", "csv-patients", "csv-inputs"} {
		if !seen[s] {
			t.Errorf("scenario %s missing from the report:\n%s", s, out.String())
		}
	}
}
