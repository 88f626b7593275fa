package pgxapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
	"github.com/pgxsafety/pgxsafety/pgxapi/internal/labcsvgen"
)

const medRecBody = `{
  "drugs": ["clopidogrel", "omeprazole", "codeine", "warfarin", "paracetamol", "Clopidogrel bisulfate"],
  "diplotypes": {"CYP2C19": "*2/*2"},
  "genes_tested": ["CYP2C19"],
  "state": "Tamil Nadu",
  "indication": "acute coronary syndrome, PCI"
}`

func (ts testServer) batch(t *testing.T, body string) *httptest.ResponseRecorder {
	t.Helper()
	return ts.do(t, http.MethodPost, "/pgx/batch", "application/json", strings.NewReader(body))
}

func TestBatchMedicationReconciliation(t *testing.T) {
	ts := newServer(t)
	rec := ts.batch(t, medRecBody)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	checkGolden(t, "batch_medrec.json", canonicalGolden(t, rec.Body.Bytes()))
	resp := decode[pgxapi.BatchResponse](t, rec)
	var in pgxapi.BatchRequest
	if err := json.Unmarshal([]byte(medRecBody), &in); err != nil {
		t.Fatal(err)
	}

	if resp.APIVersion != "1.1.0" || resp.RequestID != rec.Header().Get(httpx.RequestIDHeader) || resp.GroundingContract != engine.GroundingContract {
		t.Errorf("envelope = %+v", resp)
	}
	if resp.DrugsTotal != 6 || len(resp.Results) != 6 {
		t.Fatalf("drugs_total %d, %d results", resp.DrugsTotal, len(resp.Results))
	}
	// Each result is exactly what the engine answers for that drug.
	for i, d := range in.Drugs {
		want, err := kb.Evaluate(in.EngineRequest(d))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pgxapi.ResultOf(want), resp.Results[i]); diff != "" {
			t.Errorf("results[%d] (%s) differs from evaluate.Engine.Evaluate (-engine +batch):\n%s", i, d, diff)
		}
	}

	sum := resp.Summary
	var order []string
	for _, d := range sum.DrugsBySeverity {
		order = append(order, fmt.Sprintf("%d:%s", d.Index, d.OverallSeverity))
	}
	// The two clopidogrel entries (HIGH), then MODERATE drugs by
	// sensitivity tier (codeine high; omeprazole, warfarin moderate, in
	// the order listed), then the drug the knowledge does not recognise
	// (INFO: its visible input-not-interpreted alert).
	if want := []string{"0:HIGH", "5:HIGH", "2:MODERATE", "1:MODERATE", "3:MODERATE", "4:INFO"}; !cmp.Equal(want, order) {
		t.Errorf("drugs_by_severity = %v, want %v", order, want)
	}
	if sum.OverallSeverity != "HIGH" {
		t.Errorf("overall_severity = %q", sum.OverallSeverity)
	}
	var genes []string
	for _, g := range sum.GenesToTest {
		genes = append(genes, g.Gene)
		if g.Gene == "CYP2C19" {
			t.Error("CYP2C19 is genotyped but listed in genes_to_test")
		}
	}
	for _, want := range []string{"CYP2D6", "CYP2C9"} {
		if !strings.Contains(strings.Join(genes, " "), want) {
			t.Errorf("genes_to_test %v lacks %s", genes, want)
		}
	}
	if !cmp.Equal(sum.DrugsNotCovered, []string{"paracetamol"}) {
		t.Errorf("drugs_not_covered = %v", sum.DrugsNotCovered)
	}
	var cyp2c19 *pgxapi.DrugDrugNote
	for i := range sum.DrugDrugNotes {
		n := &sum.DrugDrugNotes[i]
		if len(n.Drugs) < 2 || len(n.Guidelines) != len(n.Drugs) || n.Note == "" {
			t.Errorf("note %+v", n)
		}
		for _, g := range n.Guidelines {
			if g.URL == "" || len(g.Sources) == 0 || g.Sources[0].Title == "" {
				t.Errorf("note %s: guideline %+v not cited", n.Gene, g)
			}
		}
		if n.Gene == "CYP2C19" {
			cyp2c19 = n
		}
	}
	if cyp2c19 == nil || !cmp.Equal(cyp2c19.Drugs, []string{"clopidogrel", "omeprazole"}) ||
		cyp2c19.PatientGenotype == nil || cyp2c19.PatientGenotype.Phenotype != "Poor Metabolizer" {
		t.Fatalf("CYP2C19 note = %+v", cyp2c19)
	}
	if !strings.Contains(cyp2c19.Note, "not a drug–drug interaction check") {
		t.Errorf("note %q does not say what it is not", cyp2c19.Note)
	}
	if len(resp.SourceCitations) == 0 || resp.SourceCitations[0].Field != "summary.drug_drug_notes[0]" || resp.SourceCitations[0].URL == "" {
		t.Errorf("source_citations = %+v", resp.SourceCitations)
	}

	// The audit entry records exactly the answer given.
	e, err := ts.store.Entry(context.Background(), resp.AuditLogID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Endpoint != pgxapi.BatchEndpoint || e.RequestID != resp.RequestID {
		t.Errorf("audit entry %+v", e)
	}
	answer, err := json.Marshal(resp.BatchAnswer)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(answer); e.ResponseDigest != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("audit digest %s is not the digest of the answer", e.ResponseDigest)
	}
}

func TestBatchRejects(t *testing.T) {
	ts := newServer(t)
	many := make([]string, pgxapi.BatchMaxDrugs+1)
	for i := range many {
		many[i] = "warfarin"
	}
	manyJSON, _ := json.Marshal(map[string]any{"drugs": many})
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantParams []string
	}{
		{"no drugs", `{"drugs":[]}`, 422, []string{"drugs"}},
		{"drugs missing", `{"variants":["rs4244285"]}`, 422, []string{"drugs"}},
		{"too many drugs", string(manyJSON), 422, []string{"drugs"}},
		{"blank drug", `{"drugs":["clopidogrel","  "]}`, 422, []string{"drugs[1]"}},
		{"bad rsID reported once", `{"drugs":["clopidogrel","warfarin"],"variants":["rsX"]}`, 422, []string{"variants[0]"}},
		{"bad diplotype gene", `{"drugs":["codeine"],"diplotypes":{"CYP9Z9":"*1/*1"}}`, 422, []string{"diplotypes.CYP9Z9"}},
		{"unknown field", `{"drugs":["codeine"],"drug":"codeine"}`, 400, []string{"drug"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := problem(t, ts.batch(t, tc.body), tc.wantStatus)
			var names []string
			for _, ip := range p.InvalidParams {
				names = append(names, ip.Name)
			}
			if diff := cmp.Diff(tc.wantParams, names); diff != "" {
				t.Errorf("invalid_params (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(auditEntries(t, ts.store)); n != 0 {
		t.Errorf("%d audit entries for rejected requests", n)
	}
}

// withLimiter serves ts's handler behind an authenticated principal and a
// rate limiter (memory store, frozen clock) of limit units.
func withLimiter(t *testing.T, h http.Handler, limit int) http.Handler {
	t.Helper()
	frozen := time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)
	l, err := httpx.NewRateLimiter(nil, httpx.PerMinute(limit, limit), nil, nil, zap.NewNop(), func() time.Time { return frozen })
	if err != nil {
		t.Fatal(err)
	}
	limited := httpx.RateLimit(l)(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := httpx.WithPrincipal(r.Context(), audit.Principal{Subject: "lab-1", Issuer: "https://idp.example"})
		limited.ServeHTTP(w, r.WithContext(ctx))
	})
}

// TestBatchRateLimitCost: batches cost one unit per started 100 drugs or
// rows beyond the request's own unit.
func TestBatchRateLimitCost(t *testing.T) {
	ts := newServer(t)
	drugs := make([]string, 150)
	for i := range drugs {
		drugs[i] = "warfarin"
	}
	body, _ := json.Marshal(map[string]any{"drugs": drugs})
	h := withLimiter(t, ts.h, 3)
	do := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/pgx/batch", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := do() // 1 + 2 units of a budget of 3
	if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Remaining") != "0" {
		t.Fatalf("first batch: %d, RateLimit-Remaining %q", rec.Code, rec.Header().Get("RateLimit-Remaining"))
	}
	if rec := do(); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("second batch: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}

	// A CSV stream is charged chunk by chunk before each chunk is
	// released: with 7 units, the request (1) and the first 500 rows (5)
	// pass, the next 500 rows (5) do not.
	var data bytes.Buffer
	if err := labcsvgen.Write(&data, labcsvgen.Options{Rows: 1100, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	mbody, ct := multipartCSV(t, data.Bytes())
	req := httptest.NewRequest(http.MethodPost, "/pgx/batch_csv", mbody)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", pgxapi.NDJSONContentType)
	rec = httptest.NewRecorder()
	withLimiter(t, ts.h, 7).ServeHTTP(rec, req)
	rows, last := decodeNDJSON(t, rec.Body.Bytes())
	if len(rows) != labcsv.DefaultChunkRows || last.Kind != "error" || last.Status != http.StatusTooManyRequests || last.Type != httpx.TypeRateLimited {
		t.Errorf("%d rows, last line %+v", len(rows), last)
	}
}

func TestBatchLimitsInVersion(t *testing.T) {
	for _, tc := range []struct {
		cfg                        pgxapi.Config
		wantBytes, wantRs, wantVCF int
	}{
		{pgxapi.Config{}, 50 << 20, 100000, pgxapi.DefaultVCFMaxBytes},
		{pgxapi.Config{BatchCSVMaxBytes: 1 << 30, BatchCSVMaxRows: 2_000_000, VCFMaxBytes: 1 << 31}, 1 << 30, 2_000_000, 1 << 31},
	} {
		ts := newServerCfg(t, tc.cfg)
		ver := decode[versionBody](t, ts.do(t, http.MethodGet, "/pgx/version", "", nil))
		want := map[string]int{"check_body_bytes": pgxapi.CheckBodyLimit, "batch_csv_max_bytes": tc.wantBytes,
			"batch_csv_max_rows": tc.wantRs, "batch_body_bytes": pgxapi.BatchBodyLimit, "batch_max_drugs": pgxapi.BatchMaxDrugs,
			"vcf_max_bytes": tc.wantVCF}
		if diff := cmp.Diff(want, ver.Limits); diff != "" {
			t.Errorf("limits (-want +got):\n%s", diff)
		}
	}
}
