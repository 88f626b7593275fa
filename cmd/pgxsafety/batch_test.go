package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

func csvPath(name string) string { return filepath.Join("..", "..", "testdata", "csv", name) }

type cliRow struct {
	Kind       string          `json:"kind"`
	Row        int             `json:"row"`
	Line       int             `json:"line"`
	PatientRef string          `json:"patient_ref"`
	OK         bool            `json:"ok"`
	AuditLogID string          `json:"audit_log_id"`
	Result     json.RawMessage `json:"result"`
	Error      *labcsv.RowError
}

type cliDoc struct {
	APIVersion        string   `json:"api_version"`
	GroundingContract string   `json:"grounding_contract"`
	KnowledgeVersion  string   `json:"knowledge_version"`
	Results           []cliRow `json:"results"`
	File              string   `json:"file"`
	FileSHA256        string   `json:"file_sha256"`
	RowsTotal         int      `json:"rows_total"`
	RowsSucceeded     int      `json:"rows_succeeded"`
	RowsFailed        int      `json:"rows_failed"`
}

func TestBatchCLIJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results.json")
	// Flags may follow the file.
	stdout, stderr, err := runArgs(t, "batch", csvPath("lab_1000_10bad.csv"), "--out", out)
	if err != nil {
		t.Fatalf("batch: %v\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout is not empty with --out: %q", stdout[:min(len(stdout), 200)])
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc cliDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v", err)
	}
	input, _ := os.ReadFile(csvPath("lab_1000_10bad.csv"))
	sum := sha256.Sum256(input)
	if doc.RowsTotal != 1000 || doc.RowsSucceeded != 990 || doc.RowsFailed != 10 || len(doc.Results) != 1000 ||
		doc.FileSHA256 != hex.EncodeToString(sum[:]) || doc.File != "lab_1000_10bad.csv" ||
		doc.GroundingContract != engine.GroundingContract || doc.APIVersion != pgxapi.APIVersion {
		t.Errorf("document: total %d ok %d failed %d results %d file %q sha %q", doc.RowsTotal, doc.RowsSucceeded, doc.RowsFailed, len(doc.Results), doc.File, doc.FileSHA256)
	}
	for i, r := range doc.Results {
		if r.Row != i+1 || r.AuditLogID != "" {
			t.Fatalf("result %d: row %d, audit_log_id %q (offline answers are not audited)", i, r.Row, r.AuditLogID)
		}
	}
	for _, want := range []string{"batch: 1,000 rows: 990 succeeded, 10 failed", "row 37 (line 38): drug: missing_value", "row 967 (line 969): patient_ref: invalid_encoding"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestBatchCLINDJSON(t *testing.T) {
	stdout, stderr, err := runArgs(t, "batch", "--format", "ndjson", csvPath("lab_messy.csv"))
	if err != nil {
		t.Fatalf("batch: %v\n%s", err, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	var rows []cliRow
	var summary cliDoc
	for sc.Scan() {
		var r cliRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line is not JSON: %v", err)
		}
		if r.Kind == "summary" {
			if err := json.Unmarshal(sc.Bytes(), &summary); err != nil {
				t.Fatal(err)
			}
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) != 18 || summary.RowsTotal != 18 || summary.RowsSucceeded != 10 || summary.RowsFailed != 8 || summary.KnowledgeVersion == "" {
		t.Fatalf("%d rows, summary %+v", len(rows), summary)
	}
	var got []string
	for _, r := range rows {
		if r.OK {
			var res pgxapi.Result
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatal(err)
			}
			got = append(got, res.DrugNormalised)
		} else {
			got = append(got, r.Error.Code+":"+r.Error.Field)
		}
	}
	want := []string{"clopidogrel", "omeprazole", "warfarin", "missing_value:drug", "invalid_value:variants[0]", "tramadol",
		"column_count:patient_ref", "column_count:record", "bad_quoting:indication", "bad_quoting:indication", "clopidgrel",
		"abacavir", "invalid_encoding:patient_ref", "primaquine", "tacrolimus", "capecitabine", "bad_quoting:indication", "sertraline"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestBatchCLIProgressLines(t *testing.T) {
	// A clock that moves 6 s per reading: every chunk prints a line.
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	batchNow = func() time.Time { now = now.Add(6 * time.Second); return now }
	t.Cleanup(func() { batchNow = time.Now })
	_, stderr, err := runArgs(t, "batch", "--out", filepath.Join(t.TempDir(), "r.ndjson"), "--format", "ndjson", csvPath("lab_1000_10bad.csv"))
	if err != nil {
		t.Fatalf("batch: %v\n%s", err, stderr)
	}
	for _, want := range []string{"batch: 500 rows (", "% of the file), ", " rows/s, ETA ", "batch: 1,000 rows: 990 succeeded, 10 failed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\r") {
		t.Error("a bar was drawn although stderr is not a terminal")
	}
}

func TestBatchCLIErrors(t *testing.T) {
	dir := t.TempDir()
	badHeader := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(badHeader, []byte("drug,variants\nclopidogrel,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		name      string
		args      []string
		wantUsage bool
		wantText  string
	}{
		{name: "no file", args: []string{"batch"}, wantUsage: true, wantText: "exactly one CSV file"},
		{name: "two files", args: []string{"batch", "a.csv", "b.csv"}, wantUsage: true, wantText: "exactly one CSV file"},
		{name: "bad format", args: []string{"batch", csvPath("lab_clean.csv"), "--format", "xml"}, wantUsage: true, wantText: "json or ndjson"},
		{name: "missing file", args: []string{"batch", filepath.Join(dir, "nope.csv")}, wantText: "no such file"},
		{name: "bad header", args: []string{"batch", badHeader, "--out", out}, wantText: "header: must be " + labcsv.Header},
		{name: "too many rows", args: []string{"batch", csvPath("lab_clean.csv"), "--max-rows", "3", "--out", out}, wantText: "more than 3 data rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runArgs(t, tc.args...)
			if err == nil {
				t.Fatal("batch succeeded")
			}
			if errors.Is(err, errUsage) != tc.wantUsage || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("err = %v (usage %v), want %q", err, errors.Is(err, errUsage), tc.wantText)
			}
		})
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed batch left %s behind (%v)", out, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left in %s: %v", dir, entries)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
