package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// TestCallChunksConcatenate: "pgxsafety call --chunk K/N" on PharmCAT's
// 100-sample test VCF, with the samples asked for by --samples-file (in
// another order than the file's) and --samples: the N parts' calls tables,
// concatenated in order, are byte for byte the table of the whole run
// (header once); their --per-sample files are the whole run's samples.
func TestCallChunksConcatenate(t *testing.T) {
	vcf := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	tmp := t.TempDir()
	list := filepath.Join(tmp, "samples.txt")
	// 11 samples, listed out of file order, one twice, with blank lines.
	if err := os.WriteFile(list, []byte("s40\n\ns3\ns17\n s9 \ns3\ns88\ns21\ns60\ns5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	asked := []string{"--samples-file", list, "--samples", "s99,s1"}
	whole, stderr, err := runArgs(t, append([]string{"call", vcf, "--format", "tsv"}, asked...)...)
	if err != nil {
		t.Fatalf("whole run: %v\n%s", err, stderr)
	}
	header, rows := splitTable(t, whole)
	if diff := cmp.Diff(strings.Join(pgxapi.CallsTSVColumns, "\t"), header); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	var order []string
	for _, r := range rows {
		if s := r[:strings.IndexByte(r, '\t')]; len(order) == 0 || order[len(order)-1] != s {
			order = append(order, s)
		}
	}
	wantOrder := []string{"s1", "s3", "s5", "s9", "s17", "s21", "s40", "s60", "s88", "s99"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Fatalf("samples of the whole run, in file order (-want +got):\n%s", diff)
	}

	const n = 4 // parts of 2, 3, 2 and 3 samples
	var joined strings.Builder
	perSample := filepath.Join(tmp, "per-sample")
	for k := 1; k <= n; k++ {
		part, stderr, err := runArgs(t, append([]string{"call", vcf, "--format", "tsv", "--chunk", chunkArg(k, n), "--per-sample", perSample}, asked...)...)
		if err != nil {
			t.Fatalf("part %d: %v\n%s", k, err, stderr)
		}
		if k > 1 && strings.HasPrefix(part, "Sample ID\t") {
			t.Errorf("part %d repeats the header", k)
		}
		joined.WriteString(part)
	}
	if diff := cmp.Diff(whole, joined.String()); diff != "" {
		t.Errorf("parts concatenated differ from the whole run (-whole +parts):\n%s", diff)
	}

	// The per-sample files are the whole run's samples, as JSON.
	doc, stderr, err := runArgs(t, append([]string{"call", vcf}, asked...)...)
	if err != nil {
		t.Fatalf("json: %v\n%s", err, stderr)
	}
	var all struct {
		KnowledgeVersion string                       `json:"knowledge_version"`
		Samples          []map[string]json.RawMessage `json:"samples"`
	}
	if err := json.Unmarshal([]byte(doc), &all); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(perSample)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(wantOrder) {
		t.Fatalf("%d files in --per-sample, want %d (no temporary directory left)", len(files), len(wantOrder))
	}
	for _, s := range all.Samples {
		var name string
		_ = json.Unmarshal(s["sample"], &name)
		b, err := os.ReadFile(filepath.Join(perSample, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var one map[string]json.RawMessage
		if err := json.Unmarshal(b, &one); err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
		if string(one["knowledge_version"]) != `"`+all.KnowledgeVersion+`"` {
			t.Errorf("%s.json: knowledge_version %s", name, one["knowledge_version"])
		}
		for _, key := range []string{"sample", "genes", "warnings"} {
			if string(one[key]) != string(s[key]) {
				t.Errorf("%s.json: %s differs from the whole run's", name, key)
			}
		}
	}
}

func chunkArg(k, n int) string { return string(rune('0'+k)) + "/" + string(rune('0'+n)) }

// splitTable returns a calls table's header and rows.
func splitTable(t *testing.T, s string) (string, []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("no rows:\n%s", s)
	}
	return lines[0], lines[1:]
}

// TestCallChunkRefusals: a bad --chunk, --drug with the calls table, and a
// sample asked for that the file does not hold (whichever part it would
// fall in) are refused before anything is written.
func TestCallChunkRefusals(t *testing.T) {
	vcf := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--chunk", "0/3"}, true, "--chunk must be K/N"},
		{[]string{"--chunk", "4/3"}, true, "--chunk must be K/N"},
		{[]string{"--chunk", "3"}, true, "--chunk must be K/N"},
		{[]string{"--format", "tsv", "--drug", "codeine"}, true, "without drug checks"},
		{[]string{"--format", "csv"}, true, "--format must be json, ndjson, html, tsv or fhir"},
		{[]string{"--samples", "s1,nobody", "--chunk", "1/2"}, false, `sample "nobody": the file has no such sample`},
	} {
		out, _, err := runArgs(t, append([]string{"call", vcf}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
			continue
		}
		if errors.Is(err, errUsage) != tc.usage {
			t.Errorf("%v: usage error %v, want %v", tc.args, errors.Is(err, errUsage), tc.usage)
		}
		if out != "" {
			t.Errorf("%v: wrote %q", tc.args, out)
		}
	}
}

// FuzzParseChunk: a --chunk value is refused or names part K of N with
// 1 <= K <= N; for any number of samples, parts 1…N are contiguous, cover
// every sample once and differ in size by at most one.
func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{"1/1", "3/10", "10/10", "0/3", "4/3", "3", "/", "1/0", " 2 / 5 ", "-1/2", "1/1000001", "999999/1000000"} {
		f.Add(s, uint16(37))
	}
	f.Fuzz(func(t *testing.T, v string, samples uint16) {
		c, err := parseChunk(v)
		if err != nil {
			if !errors.Is(err, errUsage) {
				t.Fatalf("%q: %v is not a usage error", v, err)
			}
			return
		}
		if c.k < 1 || c.k > c.n || c.n > maxChunks {
			t.Fatalf("%q read as %d/%d", v, c.k, c.n)
		}
		m := int(samples)
		lo, hi := c.bounds(m)
		if lo < 0 || hi > m || lo > hi {
			t.Fatalf("%q of %d samples: [%d, %d)", v, m, lo, hi)
		}
		if c.n > 64 {
			return // the whole partition is checked below for small N
		}
		next, minSize, maxSize := 0, m, 0
		for k := 1; k <= c.n; k++ {
			a, b := chunkSpec{k, c.n}.bounds(m)
			if a != next {
				t.Fatalf("%d/%d of %d samples starts at %d, want %d", k, c.n, m, a, next)
			}
			next = b
			minSize, maxSize = min(minSize, b-a), max(maxSize, b-a)
		}
		if next != m || maxSize-minSize > 1 {
			t.Fatalf("%d parts of %d samples: end %d, sizes %d..%d", c.n, m, next, minSize, maxSize)
		}
	})
}

// TestCallPerSampleFormats: --per-sample-format fhir and html write each
// sample's Genomics Reporting Bundle (SAMPLE.fhir.json) or lab report
// (SAMPLE.html) beside the calls table, rendered from the same answers;
// another format is a usage error.
func TestCallPerSampleFormats(t *testing.T) {
	vcf := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	for _, tc := range []struct{ format, ext, must string }{
		{"fhir", ".fhir.json", `"resourceType":"Bundle"`},
		{"html", ".html", "<!DOCTYPE html>"},
	} {
		dir := filepath.Join(t.TempDir(), "per-sample")
		_, stderr, err := runArgs(t, "call", vcf, "--samples", "s1,s2", "--format", "tsv", "--per-sample", dir, "--per-sample-format", tc.format)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.format, err, stderr)
		}
		for _, s := range []string{"s1", "s2"} {
			b, err := os.ReadFile(filepath.Join(dir, s+tc.ext))
			if err != nil {
				t.Fatalf("%s: %v", tc.format, err)
			}
			if !strings.Contains(string(b), tc.must) || !strings.Contains(string(b), s) {
				t.Errorf("%s of %s lacks %q or the sample name: %.200s", tc.format, s, tc.must, b)
			}
			if tc.format == "html" && strings.Contains(string(b), "Run record") {
				t.Errorf("a sample's own report holds the run's record")
			}
		}
	}
	if _, _, err := runArgs(t, "call", vcf, "--per-sample", t.TempDir(), "--per-sample-format", "xml"); err == nil || !strings.Contains(err.Error(), "--per-sample-format must be json, fhir or html") {
		t.Errorf("unknown per-sample format: %v", err)
	}
}
