package pgxapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/report/reporttest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// reportDrugs are checked in the report tests: efavirenz reads the
// GeT-RM genome NA12003's CYP2B6 *6/*6 (Poor Metabolizer, a CPIC
// recommendation), codeine its CYP2D6, which a VCF cannot decide (review),
// celecoxib its CYP2C9 *1/*2.
var reportDrugs = []string{"efavirenz", "codeine", "celecoxib"}

func reportParts(t *testing.T, name string) []formPart {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(datapacktest.Path(t, "pgx", "getrm-dev"), name))
	if err != nil {
		t.Fatal(err)
	}
	parts := []formPart{vcfFile(name, data)}
	for _, d := range reportDrugs {
		parts = append(parts, formPart{name: "drug", data: []byte(d)})
	}
	return parts
}

// TestVCFReport: POST /pgx/vcf with Accept: text/html through the real
// router answers the lab report of the GeT-RM genome NA12003, rendered
// from the audited answer: the audit entry named for the sample holds the
// digest the report prints, the closing entry records the html format,
// the page may load nothing but its style sheet, and every gene the JSON
// answer puts in review is in review in the report with each of its
// reasons. The body is pinned by testdata/golden/report_vcf_na12003.html
// (-update rewrites it).
func TestVCFReport(t *testing.T) {
	parts := reportParts(t, "NA12003.g.vcf.gz")
	ts := newServer(t)
	body, ct := multipartBody(t, parts...)
	req := httptest.NewRequest(http.MethodPost, "/pgx/vcf", body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	req.Header.Set("X-Request-ID", "report-golden")
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	h := rec.Header()
	if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("Content-Security-Policy") != report.ContentSecurityPolicy() ||
		h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
		t.Errorf("headers %v (body %d bytes)", h, rec.Body.Len())
	}
	doc := rec.Body.String()
	reporttest.CheckSelfContained(t, doc)

	entries := auditEntries(t, ts.store)
	if len(entries) != 2 {
		t.Fatalf("%d audit entries, want one chunk and one closing", len(entries))
	}
	type chunk struct {
		Response struct {
			Samples []struct {
				ResultDigest string `json:"result_digest"`
			} `json:"samples"`
		}
	}
	c := readEntry[chunk](t, entries[0])
	sec, ok := reporttest.Section(doc, "NA12003")
	if !ok || len(c.Response.Samples) != 1 {
		t.Fatalf("no section for NA12003, or chunk %+v", c)
	}
	for _, want := range []string{"<code>" + entries[0].ID + "</code>", "<code class=\"wrap\">" + c.Response.Samples[0].ResultDigest + "</code>"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the sample's section lacks %s", want)
		}
	}
	if !strings.Contains(doc, "<code>"+entries[1].ID+"</code>") {
		t.Errorf("the run record does not name the closing entry %s", entries[1].ID)
	}
	type closing struct {
		Request struct {
			Format string   `json:"format"`
			Drugs  []string `json:"drugs"`
		}
	}
	if cl := readEntry[closing](t, entries[1]); cl.Request.Format != "html" || !cmp.Equal(cl.Request.Drugs, reportDrugs) {
		t.Errorf("closing entry %+v", cl)
	}

	// The JSON answer of the same request: every gene in review there is
	// in review in the report, with each reason.
	js := newServer(t).postVCF(t, "", parts...)
	var answer struct {
		Samples []struct {
			Sample string               `json:"sample"`
			Genes  []vcfcall.GeneResult `json:"genes"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(js.Body.Bytes(), &answer); err != nil || len(answer.Samples) != 1 {
		t.Fatalf("JSON answer: %v", err)
	}
	review := 0
	for _, g := range answer.Samples[0].Genes {
		state, cells, ok := reporttest.GeneRow(doc, "NA12003", g.Gene)
		if !ok {
			t.Errorf("%s: no row", g.Gene)
			continue
		}
		if !g.NeedsReview && g.Status == "called" {
			if state != "called" {
				t.Errorf("%s: called in the answer, %q in the report", g.Gene, state)
			}
			continue
		}
		review++
		if state == "called" {
			t.Errorf("%s needs review in the answer but the report shows it called: %s", g.Gene, cells)
		}
		entry, ok := reporttest.ReviewEntry(doc, "NA12003", g.Gene)
		if !ok {
			t.Errorf("%s: no review entry", g.Gene)
		}
		reasons := append(append([]string(nil), g.Uninterpreted...), g.Notes...)
		if len(reasons) == 0 {
			reasons = []string{g.Summary}
		}
		for _, r := range reasons {
			if !strings.Contains(entry, r) {
				t.Errorf("%s: the reason %q is not in the report", g.Gene, r)
			}
		}
	}
	if review < 3 {
		t.Errorf("only %d genes in review: NA12003 should exercise the review entries (CYP2D6, G6PD, RYR1 …)", review)
	}

	// The knowledge version, and so the answer's digest (the checks carry
	// the version), change with every data edit; the digest is checked
	// against the audit entry above.
	got := regexp.MustCompile(`kb-[0-9a-f]+[^<]*`).ReplaceAllString(doc, "KNOWLEDGE_VERSION")
	got = regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAllString(got, "sha256:ANSWER_DIGEST")
	golden := filepath.Join("..", "testdata", "golden", "report_vcf_na12003.html")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run go test ./pgxapi -run TestVCFReport -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the report differs from %s (-golden +got); if the change is intended, rerun with -update:\n%s", golden, diff)
	}
}

// TestVCFReportNegotiation: text/html with q=0 is not asked for;
// application/x-ndjson wins over text/html.
func TestVCFReportNegotiation(t *testing.T) {
	data := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\nchr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t1/1\n")
	for accept, want := range map[string]string{
		"text/html;q=0":                   "application/json",
		"application/x-ndjson, text/html": "application/x-ndjson",
		"text/html":                       "text/html; charset=utf-8",
	} {
		rec := newServer(t).postVCF(t, accept, vcfFile("s.vcf", data))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != want {
			t.Errorf("Accept %q: %d %q, want %s", accept, rec.Code, rec.Header().Get("Content-Type"), want)
		}
	}
	// The OpenAPI document names the report's media type.
	doc := openAPIDoc(t, newFullServer(t))
	if s, err := responseSchema(doc, "/pgx/vcf", http.MethodPost, http.StatusOK, pgxapi.HTMLContentType); err != nil || s["type"] != "string" {
		t.Errorf("OpenAPI: %v %v", s, err)
	}
}
