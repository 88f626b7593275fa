// Package datapacktest finds the shared source-data pack and the PharmCAT
// test files in it for tests. It is imported only by _test.go files.
//
// The data pack is PGXSAFETY_DATA_PACK, or ../shared/data beside the
// repository. A test that needs it skips with the reason when it is absent,
// and fails instead when CI=true (CI must have it).
package datapacktest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the repository's root: the nearest directory above the
// working directory that holds go.mod.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Path returns the data pack's path joined with parts, after checking
// that it exists (skip, or fail when CI=true).
func Path(tb testing.TB, parts ...string) string {
	tb.Helper()
	dir := os.Getenv("PGXSAFETY_DATA_PACK")
	if dir == "" {
		dir = filepath.Join(RepoRoot(tb), "..", "shared", "data")
	}
	p := filepath.Join(append([]string{dir}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("data pack file %s not found (%v); CI must have the data pack (PGXSAFETY_DATA_PACK)", p, err)
		}
		tb.Skipf("data pack file %s not found (%v); set PGXSAFETY_DATA_PACK to run this test", p, err)
	}
	return p
}

// PharmCATDir is the data pack's pgx/pharmcat folder.
func PharmCATDir(tb testing.TB) string {
	tb.Helper()
	return Path(tb, "pgx", "pharmcat")
}

// PharmCATTestVCFs is the folder of PharmCAT's test VCFs.
func PharmCATTestVCFs(tb testing.TB) string {
	tb.Helper()
	return Path(tb, "pgx", "pharmcat", "test-vcfs")
}

// PharmCATRefused reads testdata/vcf/pharmcat-refused.tsv: the PharmCAT
// test VCFs the reader refuses, file (relative to PharmCATTestVCFs) →
// the exact refusal. Every row must give the file, the refusal and why.
func PharmCATRefused(tb testing.TB) map[string]string {
	tb.Helper()
	out, err := parseRefused(filepath.Join(RepoRoot(tb), "testdata", "vcf", "pharmcat-refused.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func parseRefused(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "file\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("%s: line %d: want file, refusal and why", filepath.Base(path), i+1)
		}
		out[f[0]] = f[1]
	}
	return out, nil
}

// GeTRMRow is one row of the GeT-RM development truth table
// (pgx/getrm-dev/truth-dev.tsv).
type GeTRMRow struct {
	Sample, Gene, SourceCall, Accepted, TruthPhenotype, Class string
}

// GeTRMTruth returns the truth rows of gene whose class is class (every
// row of gene when class is ""), and the genomes' folder.
func GeTRMTruth(tb testing.TB, gene, class string) ([]GeTRMRow, string) {
	tb.Helper()
	dir := Path(tb, "pgx", "getrm-dev")
	b, err := os.ReadFile(filepath.Join(dir, "truth-dev.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	var rows []GeTRMRow
	var col map[string]int
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if col == nil {
			col = map[string]int{}
			for i, h := range f {
				col[h] = i
			}
			for _, h := range []string{"sample", "gene", "source_call", "accepted", "truth_phenotype", "class"} {
				if _, ok := col[h]; !ok {
					tb.Fatalf("truth-dev.tsv: no column %q", h)
				}
			}
			continue
		}
		get := func(h string) string {
			if i := col[h]; i < len(f) {
				return f[i]
			}
			return ""
		}
		if get("gene") != gene || class != "" && get("class") != class {
			continue
		}
		rows = append(rows, GeTRMRow{Sample: get("sample"), Gene: gene, SourceCall: get("source_call"),
			Accepted: get("accepted"), TruthPhenotype: get("truth_phenotype"), Class: get("class")})
	}
	if len(rows) == 0 {
		tb.Fatalf("truth-dev.tsv: no %s row of class %q", gene, class)
	}
	return rows, dir
}
