package pgxapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// pharmCATCallsOnlyColumns are the columns of PharmCAT's calls-only TSV
// (-reporterCallsOnlyTsv), as its documentation lists them, "Sample ID"
// first as in its single-file (multi-sample) mode:
// https://pharmcat.org/using/Running-PharmCAT/#calls-only-tsv-reports
// (source: PharmGKB/PharmCAT docs/using/Running-PharmCAT.md and
// src/main/java/org/pharmgkb/pharmcat/reporter/format/CallsOnlyFormat.java).
var pharmCATCallsOnlyColumns = []string{
	"Sample ID", "Gene", "Source Diplotype", "Phenotype", "Activity Score",
	"Haplotype 1", "Haplotype 1 Function", "Haplotype 1 Activity Value",
	"Haplotype 2", "Haplotype 2 Function", "Haplotype 2 Activity Value",
	"Outside Call", "Match Score", "Missing positions",
	"Recommendation Lookup Diplotype", "Recommendation Lookup Phenotype", "Recommendation Lookup Activity Score",
}

// TestCallsTSVColumnsBesidePharmCAT: the calls table uses PharmCAT's
// column names exactly for the columns whose meaning is PharmCAT's, in
// PharmCAT's order, and no other column takes a PharmCAT name (in any
// letter case): a different meaning never hides behind PharmCAT's name.
func TestCallsTSVColumnsBesidePharmCAT(t *testing.T) {
	sameMeaning := []string{"Sample ID", "Gene", "Source Diplotype", "Phenotype", "Activity Score", "Missing positions"}
	var shared []string
	for _, c := range pgxapi.CallsTSVColumns {
		if slices.Contains(pharmCATCallsOnlyColumns, c) {
			shared = append(shared, c)
			continue
		}
		for _, p := range pharmCATCallsOnlyColumns {
			if strings.EqualFold(c, p) {
				t.Errorf("column %q is PharmCAT's %q in another letter case", c, p)
			}
		}
	}
	if diff := cmp.Diff(sameMeaning, shared); diff != "" {
		t.Errorf("columns shared with PharmCAT (-want +got):\n%s", diff)
	}
	// In PharmCAT's relative order, and first: a reader by position finds
	// Sample ID, Gene, Source Diplotype, Phenotype, Activity Score where
	// PharmCAT has them.
	last := -1
	for _, c := range shared {
		i := slices.Index(pharmCATCallsOnlyColumns, c)
		if i < last {
			t.Errorf("column %q is out of PharmCAT's order", c)
		}
		last = i
	}
	if diff := cmp.Diff(pharmCATCallsOnlyColumns[:5], pgxapi.CallsTSVColumns[:5]); diff != "" {
		t.Errorf("first five columns differ from PharmCAT's (-PharmCAT +ours):\n%s", diff)
	}
}

// tsvRows splits a calls table into its header and rows of cells.
func tsvRows(t *testing.T, body string) (header []string, rows [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	header = strings.Split(lines[0], "\t")
	for i, l := range lines[1:] {
		cells := strings.Split(l, "\t")
		if len(cells) != len(header) {
			t.Fatalf("row %d has %d cells, the header %d: %q", i+1, len(cells), len(header), l)
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// TestVCFCallsTSVGolden: POST /pgx/vcf with Accept: text/tab-separated-values
// answers the GeT-RM genome NA18855 as the calls table (golden), every row
// naming the audit entry of its group and X-Audit-Log-ID the closing
// entry. A gene under review reads as a review with its reason, never with
// a phenotype the JSON answer does not keep beside the review.
func TestVCFCallsTSVGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(datapacktest.Path(t, "pgx", "getrm-dev"), "NA18855.g.vcf.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t)
	rec := ts.postVCF(t, "text/tab-separated-values", vcfFile("NA18855.g.vcf.gz", data))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/tab-separated-values; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	body := rec.Body.String()
	// The knowledge version is a placeholder in the golden: it changes with
	// every knowledge update, which the table does not otherwise follow.
	checkGolden(t, "vcf_calls_na18855.tsv", strings.ReplaceAll(body, kb.Version.Label, "KNOWLEDGE_VERSION"))

	var entries []audit.Entry
	if err := ts.store.Entries(context.Background(), 0, func(e audit.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d audit entries, want a group entry and a closing entry", len(entries))
	}
	if got := rec.Header().Get("X-Audit-Log-ID"); got != entries[1].ID {
		t.Errorf("X-Audit-Log-ID = %q, want the closing entry %q", got, entries[1].ID)
	}
	if !strings.Contains(string(entries[1].Request), `"format":"tsv"`) {
		t.Errorf("closing entry does not name the tsv format: %s", entries[1].Request)
	}

	// Drug checks are not in the table: asking for both is refused before
	// anything is audited.
	before := len(entries)
	drec := ts.postVCF(t, "text/tab-separated-values", vcfFile("NA18855.g.vcf.gz", data), formPart{name: "drug", data: []byte("codeine")})
	if drec.Code != http.StatusUnprocessableEntity || !strings.Contains(drec.Body.String(), `"name":"drug"`) {
		t.Errorf("drug with the calls table: %d %s", drec.Code, drec.Body)
	}
	n := 0
	_ = ts.store.Entries(context.Background(), 0, func(audit.Entry) error { n++; return nil })
	if n != before {
		t.Errorf("the refusal wrote %d audit entries", n-before)
	}

	// The same file as JSON: the table says what the JSON says.
	jrec := ts.postVCF(t, "", vcfFile("NA18855.g.vcf.gz", data))
	var doc vcfAnswer
	if err := json.Unmarshal(jrec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	header, rows := tsvRows(t, body)
	if diff := cmp.Diff(pgxapi.CallsTSVColumns, header); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	genes := doc.Samples[0].Genes
	if len(rows) != len(genes) {
		t.Fatalf("%d rows for %d genes", len(rows), len(genes))
	}
	col := func(name string) int { return slices.Index(header, name) }
	reviews := 0
	for i, row := range rows {
		g := genes[i]
		if row[col("Sample ID")] != "NA18855" || row[col("Gene")] != g.Gene || row[col("Interpretation")] != g.Interpretation {
			t.Errorf("row %d: %q, JSON gene %s %q", i, row[:3], g.Gene, g.Interpretation)
		}
		if row[col("Audit Log ID")] != entries[0].ID {
			t.Errorf("%s: Audit Log ID %q, want the group entry %q", g.Gene, row[col("Audit Log ID")], entries[0].ID)
		}
		var phen []string
		for _, d := range g.Diplotypes {
			if d.Phenotype != "" {
				phen = append(phen, d.Phenotype)
			}
		}
		if got := row[col("Phenotype")]; got != "" && len(phen) == 0 {
			t.Errorf("%s: Phenotype %q where the JSON answer gives none", g.Gene, got)
		}
		if g.NeedsReview {
			reviews++
			if row[col("Interpretation")] != vcfcall.InterpretationReview || row[col("Review Reason")] == "" {
				t.Errorf("%s under review reads %q with reason %q", g.Gene, row[col("Interpretation")], row[col("Review Reason")])
			}
		}
		if (row[col("Missing positions")] == "yes") != (len(g.MissingPositions) > 0) {
			t.Errorf("%s: Missing positions %q with %d missing", g.Gene, row[col("Missing positions")], len(g.MissingPositions))
		}
	}
	if reviews == 0 {
		t.Error("no gene under review: the test no longer shows how a review is written")
	}
}
