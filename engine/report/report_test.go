package report_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/report/reporttest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

var meta = report.Meta{Origin: "POST /pgx/vcf", RequestID: "req-1", FileName: "lab.vcf", Drugs: []string{"clopidogrel"},
	KnowledgeVersion: "kb-test", Generated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

// result is a sample answer in the shape vcfcall writes, with one check in
// the REST wire form.
func result(t testing.TB, sample string, genes []vcfcall.GeneResult, checks ...map[string]any) []byte {
	t.Helper()
	var cs []map[string]any
	for _, c := range checks {
		cs = append(cs, map[string]any{"drug": c["drug"], "result": c})
	}
	b, err := json.Marshal(map[string]any{"sample": sample, "genes": genes, "warnings": []string{}, "checks": cs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func render(t *testing.T, m report.Meta, samples ...report.Sample) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteHead(&buf, m); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if err := report.WriteSample(&buf, m, i, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := report.WriteTail(&buf, m, report.Closing{FileBytes: 10, FileSHA256: "abc", SamplesInFile: len(samples), SamplesAnswered: len(samples), AuditID: "aud_close"}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var called = vcfcall.GeneResult{Gene: "CYP2C19", Status: "called", Interpretation: vcfcall.InterpretationCalled,
	Summary: "*2/*2: Poor Metabolizer", Diplotypes: []vcfcall.DiplotypeResult{{Diplotype: "*2/*2", Phenotype: "Poor Metabolizer"}},
	UntestedAlleles: []string{"*35"}}

var review = vcfcall.GeneResult{Gene: "CYP3A4", Status: "called", Interpretation: vcfcall.InterpretationReview, NeedsReview: true,
	Summary:       "could not interpret — review: CYP3A4 reads Normal Metabolizer (*1/*1), but 3 allele(s) could not be assessed",
	Diplotypes:    []vcfcall.DiplotypeResult{{Diplotype: "*1/*1"}},
	Uninterpreted: []string{"CYP3A4 reads Normal Metabolizer (*1/*1) with every AMP tier-1 position called, but 3 allele(s) could not be assessed"}}

// noReason is a gene in review whose answer gives no item: its summary is
// the reason shown.
var noReason = vcfcall.GeneResult{Gene: "G6PD", Status: "called", Interpretation: vcfcall.InterpretationReview, NeedsReview: true,
	Summary: "could not interpret — review: the matcher flagged the call for review"}

var noData = vcfcall.GeneResult{Gene: "NUDT15", Status: "no_data", Interpretation: vcfcall.InterpretationNoData,
	Summary: "no data: the file has no record at any position of NUDT15"}

func clopidogrelCheck(extra string) map[string]any {
	return map[string]any{
		"drug": "clopidogrel" + extra, "drug_recognised": true, "sensitivity": "high", "overall_severity": "HIGH",
		"alerts": []map[string]any{{
			"severity": "HIGH", "gene": "CYP2C19", "category": "genotype-confirmed",
			"message":        "clopidogrel with CYP2C19 Poor Metabolizer" + extra,
			"recommendation": "Avoid standard dose clopidogrel if possible." + extra, "classification": "Strong", "evidence_level": "1A",
			"guidance_source": "CPIC", "guideline": map[string]any{"name": "CYP2C19 and clopidogrel", "url": "https://cpicpgx.org/guidelines/x/"},
			"genotype": []map[string]any{{"gene": "CYP2C19", "diplotype": "*2/*2", "phenotype": "Poor Metabolizer"}},
		}},
		"safer_alternatives": []map[string]any{{"name": "prasugrel", "rationale": "not affected by CYP2C19" + extra}},
		"indian_context": map[string]any{"population_frequencies": []map[string]any{{"variant": "rs4244285", "gene": "CYP2C19", "allele": "*2", "af_india": 0.3}},
			"traditional_medicine": []map[string]any{{"herb": "Herb" + extra, "botanical": "Botanica"}}},
		"source_citations": []map[string]any{{"field": "alerts[0]", "source": "CPIC guideline" + extra, "evidence_level": "1A", "url": "https://cpicpgx.org/guidelines/x/"}},
	}
}

// TestEscaping: a sample name, drug, message or any text of the answer
// holding markup comes out as text.
func TestEscaping(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	g := review
	g.Uninterpreted = []string{"reason " + evil}
	m := meta
	m.FileName = evil + ".vcf"
	m.Drugs = []string{"clopidogrel" + evil}
	out := render(t, m, report.Sample{Result: result(t, evil, []vcfcall.GeneResult{g}, clopidogrelCheck(evil)), Digest: "sha256:00", AuditID: evil})
	reporttest.CheckSelfContained(t, out)
	if n := strings.Count(out, "&lt;script&gt;"); n < 8 {
		t.Errorf("the evil text appears escaped %d times, want it in every place it was put (sample, file, drug, message, recommendation, reason, herb, source, audit id)", n)
	}
}

// TestSelfContained: no script, nothing fetched (no src, no link, no
// @import or url()), exactly one inline style sheet, and the CSP hash
// matches it.
func TestSelfContained(t *testing.T) {
	out := render(t, meta, report.Sample{Result: result(t, "S1", []vcfcall.GeneResult{called, review}, clopidogrelCheck("")), Digest: "sha256:00", AuditID: "aud_1"},
		report.Sample{Result: result(t, "S2", []vcfcall.GeneResult{called}), Digest: "sha256:01", AuditID: "aud_1"})
	reporttest.CheckSelfContained(t, out)
	style := reporttest.Styles(out)
	if len(style) != 1 {
		t.Fatalf("%d style elements, want 1", len(style))
	}
	sum := sha256.Sum256([]byte(style[0]))
	if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; report.StyleHash != want {
		t.Errorf("StyleHash %s, the style element hashes to %s", report.StyleHash, want)
	}
	if !strings.Contains(report.ContentSecurityPolicy(), "default-src 'none'") || strings.Contains(report.ContentSecurityPolicy(), "unsafe") {
		t.Errorf("policy %q", report.ContentSecurityPolicy())
	}
	if strings.Count(out, `<section class="sample`) != 2 || strings.Count(out, `<section class="sample newpage"`) != 1 {
		t.Errorf("want two sample sections, the second on a new page")
	}
	if !strings.Contains(out, "@page{size:A4") {
		t.Error("no A4 page rule")
	}
}

// TestReviewGenes: every gene in review, provisional, not called or
// without data is labelled so, named in the review box and shown with its
// reasons; its reading is never in the results columns; a called gene
// shows its result and untested alleles.
func TestReviewGenes(t *testing.T) {
	prov := vcfcall.GeneResult{Gene: "CYP2D6", Status: "provisional", Interpretation: vcfcall.InterpretationProvisional, NeedsReview: true,
		Summary: "provisional", Diplotypes: []vcfcall.DiplotypeResult{{Diplotype: "*1/*1"}}, Uninterpreted: []string{"copy number not assessed"}}
	out := render(t, meta, report.Sample{Result: result(t, "S1", []vcfcall.GeneResult{called, review, noReason, noData, prov}), Digest: "sha256:00", AuditID: "aud_1"})
	text := html.UnescapeString(out)
	want := map[string]struct{ label, reason string }{
		"CYP3A4": {"REVIEW", review.Uninterpreted[0]},
		"G6PD":   {"REVIEW", noReason.Summary},
		"NUDT15": {"NO DATA", noData.Summary},
		"CYP2D6": {"PROVISIONAL — review", "copy number not assessed"},
	}
	box := regexp.MustCompile(`data-review-genes="([^"]*)"`).FindStringSubmatch(text)
	if box == nil {
		t.Fatal("no review box")
	}
	for gene, w := range want {
		state, cells, ok := reporttest.GeneRow(out, "S1", gene)
		if !ok || state != w.label {
			t.Errorf("%s row: state %q (%v), want %q", gene, state, ok, w.label)
			continue
		}
		if strings.Contains(cells, "*1/*1") || strings.Contains(cells, "Normal") {
			t.Errorf("%s row shows a reading though the gene is in review: %s", gene, cells)
		}
		if entry, ok := reporttest.ReviewEntry(out, "S1", gene); !ok || !strings.Contains(entry, w.reason) {
			t.Errorf("%s: the reason %q is not in its review entry %q", gene, w.reason, entry)
		}
		if !strings.Contains(" "+box[1]+" ", " "+gene+" ") {
			t.Errorf("%s is not in the review box %q", gene, box[1])
		}
	}
	if state, cells, _ := reporttest.GeneRow(out, "S1", "CYP2C19"); state != "called" || !strings.Contains(cells, "*2/*2") || !strings.Contains(cells, "Poor Metabolizer") {
		t.Errorf("CYP2C19 row %q %q", state, cells)
	}
	if !strings.Contains(text, "Untested alleles (1; ") || !strings.Contains(text, "*35") {
		t.Error("the called gene's untested allele is not shown")
	}
	if !strings.Contains(text, "No drug was checked") {
		t.Error("a sample without checks does not say no drug was checked")
	}
}

// TestDrugs: the recommendation, its strength, the guideline, the
// alternatives, the Indian context and the sources come from the answer;
// a check that could not be made is shown as a review with its reason.
func TestDrugs(t *testing.T) {
	failed := map[string]any{"drug": "warfarin"}
	b := result(t, "S1", []vcfcall.GeneResult{called}, clopidogrelCheck(""))
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	doc["checks"] = append(doc["checks"].([]any), map[string]any{"drug": failed["drug"], "error": "the check could not be made: reason X"})
	b, _ = json.Marshal(doc)
	out := html.UnescapeString(render(t, meta, report.Sample{Result: b, Digest: "sha256:00", AuditID: "aud_1"}))
	for _, want := range []string{
		`data-drug="clopidogrel" data-severity="HIGH"`,
		"CPIC recommendation</strong> (strength: Strong): Avoid standard dose clopidogrel if possible.",
		"Guideline: CYP2C19 and clopidogrel", "evidence level: 1A",
		"<strong>prasugrel</strong>: not affected by CYP2C19",
		"<td>rs4244285</td><td>CYP2C19</td><td>*2</td><td>0.3</td><td>not known</td>",
		"Herb (Botanica)",
		"CPIC guideline (evidence 1A)", "[supports clopidogrel: alerts[0]]",
		`data-drug="warfarin" data-severity="REVIEW"`, "the check could not be made: reason X",
		"<code>aud_1</code>", "<code>aud_close</code>", "sha256:00", "kb-test", "2026-01-02 03:04:05 UTC",
		"Reviewed by (name, qualification)", "Signature",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestOffline: without an audit entry the report says so.
func TestOffline(t *testing.T) {
	m := meta
	m.Offline, m.Origin = true, "pgxsafety call (offline)"
	var buf bytes.Buffer
	if err := report.WriteSample(&buf, m, 0, report.Sample{Result: result(t, "S1", []vcfcall.GeneResult{called}), Digest: "sha256:00"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "none: produced offline, not audited") {
		t.Error("an offline report does not say it was not audited")
	}
}

// TestUnreadableResult: the report is rendered from the audited answer or
// not at all.
func TestUnreadableResult(t *testing.T) {
	if err := report.WriteSample(&bytes.Buffer{}, meta, 0, report.Sample{Result: []byte(`{"sample":`)}); err == nil {
		t.Error("an unreadable result was rendered")
	}
}
