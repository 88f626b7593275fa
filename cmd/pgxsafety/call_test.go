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
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

type callSample struct {
	Kind       string               `json:"kind"`
	Index      int                  `json:"index"`
	AuditLogID string               `json:"audit_log_id"`
	Sample     string               `json:"sample"`
	Genes      []vcfcall.GeneResult `json:"genes"`
	Warnings   []string             `json:"warnings"`
}

type callDoc struct {
	Kind              string       `json:"kind"`
	APIVersion        string       `json:"api_version"`
	GroundingContract string       `json:"grounding_contract"`
	KnowledgeVersion  string       `json:"knowledge_version"`
	Samples           []callSample `json:"samples"`
	File              callFile     `json:"file"`
	SamplesInFile     int          `json:"samples_in_file"`
	SamplesAnswered   int          `json:"samples_answered"`
	Records           int          `json:"records"`
	RecordsUsed       int          `json:"records_used"`
	Warnings          []string     `json:"warnings"`
}

// TestCallPharmCATTestVCFs runs "pgxsafety call" on every PharmCAT test
// VCF: each is answered for every sample, or refused (exit status 1) with
// its documented refusal naming the line.
func TestCallPharmCATTestVCFs(t *testing.T) {
	dir := datapacktest.PharmCATTestVCFs(t)
	refused := datapacktest.PharmCATRefused(t)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".vcf") || strings.HasSuffix(path, ".vcf.bgz")) {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		stdout, stderr, err := runArgs(t, "call", path)
		if reason, ok := refused[rel]; ok {
			if err == nil || err.Error() != "call: "+path+" cannot be read: "+reason {
				t.Errorf("%s: got %v, want the refusal %q", rel, err, reason)
			}
			if stdout != "" {
				t.Errorf("%s: refused but wrote %d bytes of output", rel, len(stdout))
			}
			return nil
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", rel, err, stderr)
			return nil
		}
		var doc callDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Errorf("%s: output is not one JSON document: %v", rel, err)
			return nil
		}
		if doc.SamplesAnswered == 0 || doc.SamplesAnswered != doc.SamplesInFile || len(doc.Samples) != doc.SamplesAnswered {
			t.Errorf("%s: %d of %d samples answered, %d listed", rel, doc.SamplesAnswered, doc.SamplesInFile, len(doc.Samples))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 150 {
		t.Errorf("%d test VCFs found; expected the whole PharmCAT set", n)
	}
}

func TestCallOutput(t *testing.T) {
	path := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "multisample.vcf.bgz")
	input, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(input)
	out := filepath.Join(t.TempDir(), "calls.json")
	// Flags may follow the file.
	stdout, stderr, err := runArgs(t, "call", path, "--sample", "Sample_2", "--out", out)
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout is not empty with --out")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc callDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v", err)
	}
	if doc.SamplesInFile != 2 || doc.SamplesAnswered != 1 || len(doc.Samples) != 1 || doc.Samples[0].Sample != "Sample_2" ||
		doc.Samples[0].AuditLogID != "" || doc.File != (callFile{Name: "multisample.vcf.bgz", Bytes: int64(len(input)), SHA256: hex.EncodeToString(sum[:])}) ||
		doc.GroundingContract != engine.GroundingContract || doc.APIVersion != pgxapi.APIVersion || doc.Records != 18 || doc.RecordsUsed != 18 {
		t.Errorf("document: %+v", doc)
	}
	if !strings.Contains(stderr, "call: 1 of 2 samples called from 18 records (18 at allele-definition positions) in 1 reading(s)") ||
		!strings.Contains(stderr, "warning: records at allele-definition positions have a FILTER other than PASS") {
		t.Errorf("stderr:\n%s", stderr)
	}

	// NDJSON from standard input: the same sample, then a summary line.
	stdin := os.Stdin
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = stdin })
	go func() { w.Write(input); w.Close() }()
	stdout, stderr, err = runArgs(t, "call", "--format", "ndjson", "--sample", "Sample_2", "-")
	if err != nil {
		t.Fatalf("call -: %v\n%s", err, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 4<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want a sample and a summary:\n%s", len(lines), stdout)
	}
	var s callSample
	var sumLine callDoc
	if err := json.Unmarshal([]byte(lines[0]), &s); err != nil || s.Kind != "sample" {
		t.Errorf("line 1: %v %+v", err, s)
	}
	if err := json.Unmarshal([]byte(lines[1]), &sumLine); err != nil || sumLine.Kind != "summary" || sumLine.File.SHA256 != doc.File.SHA256 {
		t.Errorf("line 2: %v %+v", err, sumLine)
	}
	s.Kind = ""
	if diff := cmp.Diff(doc.Samples[0], s); diff != "" {
		t.Errorf("NDJSON sample differs from the JSON one (-json +ndjson):\n%s", diff)
	}
}

func TestCallRefusals(t *testing.T) {
	dir := t.TempDir()
	hg19 := filepath.Join(dir, "hg19.vcf")
	if err := os.WriteFile(hg19, []byte("##fileformat=VCFv4.2\n##contig=<ID=chr1,length=249250621>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.vcf")
	if err := os.WriteFile(good, []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"call", hg19, "--out", out}, "call: " + hg19 + " cannot be read: line 2: ##contig: contig chr1 has length 249250621, its length in GRCh37/hg19 (GRCh38: 248956422): only GRCh38 is read", false},
		{[]string{"call", good, "--sample", "S9"}, `call: --sample: sample "S9": the file has no such sample (its samples: S1)`, false},
		{[]string{"call", good, "--drug", "codeine", "--drug", " "}, "call: invalid --drug:\n  --drug[1]: is required", false},
		{[]string{"call"}, "usage error: call: exactly one VCF file is required, got 0 arguments", true},
		{[]string{"call", good, "--format", "xml"}, `usage error: call: --format must be json, ndjson, html, tsv or fhir, got "xml"`, true},
		{[]string{"call", filepath.Join(dir, "missing.vcf")}, "call: stat " + filepath.Join(dir, "missing.vcf") + ": no such file or directory", false},
	}
	for _, tt := range tests {
		stdout, _, err := runArgs(t, tt.args...)
		if err == nil || err.Error() != tt.want || errors.Is(err, errUsage) != tt.usage {
			t.Errorf("%q: error %v, want %q (usage %v)", tt.args, err, tt.want, tt.usage)
		}
		if stdout != "" {
			t.Errorf("%q: wrote output", tt.args)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused call left %s behind (%v)", out, err)
	}
}

// TestCallProgress checks the progress lines written when stderr is not a
// terminal (the clock is advanced 6 s per reading of it).
func TestCallProgress(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	batchNow = func() time.Time { now = now.Add(6 * time.Second); return now }
	t.Cleanup(func() { batchNow = time.Now })
	path := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	_, stderr, err := runArgs(t, "call", path, "--samples-per-pass", "40", "--out", filepath.Join(t.TempDir(), "o.json"))
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	for _, want := range []string{"call: reading 1 of 3 (33%), 40 of 100 samples called", "call: reading 3 of 3 (100%), 100 of 100 samples called, ETA 0s",
		"call: 100 of 100 samples called from 873 records (868 at allele-definition positions) in 3 reading(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestCallQualityThresholds: a weak genotype at VKORC1's one position is a
// no-call named in the answer by default (GQ 20) and with --min-gq 10 on
// the command line or PGXSAFETY_VCF_MIN_GQ; --min-gq 0 turns the threshold
// off and the genotype is called.
func TestCallQualityThresholds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weak.vcf")
	data := "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n" +
		"chr16\t31096368\trs9923231\tC\tT\t500\tPASS\t.\tGT:DP:GQ\t0/1:30:15\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"default", "", nil, vcfcall.InterpretationReview},
		{"--min-gq 10", "", []string{"--min-gq", "10"}, vcfcall.InterpretationCalled},
		{"--min-gq 0", "", []string{"--min-gq", "0"}, vcfcall.InterpretationCalled},
		{"PGXSAFETY_VCF_MIN_GQ=10", "10", nil, vcfcall.InterpretationCalled},
		{"PGXSAFETY_VCF_MIN_GQ=10, --min-gq 30", "10", []string{"--min-gq", "30"}, vcfcall.InterpretationReview},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGXSAFETY_VCF_MIN_GQ", tc.env)
			stdout, stderr, err := runArgs(t, append(append([]string{"call"}, tc.args...), path)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var doc callDoc
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			for _, g := range doc.Samples[0].Genes {
				if g.Gene == "VKORC1" && g.Interpretation != tc.want {
					t.Errorf("VKORC1 %q, want %q: %s", g.Interpretation, tc.want, g.Summary)
				}
			}
		})
	}
}
