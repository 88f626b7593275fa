package pgxapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixedNow is the service clock of every test.
var fixedNow = time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

// kb and ck are loaded once: the knowledge is read-only.
var (
	kb *evaluate.Engine
	ck *classify.Knowledge
)

func TestMain(m *testing.M) {
	flag.Parse()
	base, err := knowledge.LoadBase()
	if err != nil {
		fmt.Fprintf(os.Stderr, "load knowledge: %v\n", err)
		os.Exit(1)
	}
	kb, ck = base.Evaluator, base.Classifier
	os.Exit(m.Run())
}

type testServer struct {
	h     http.Handler
	store *audittest.Memory
}

// newServer builds the real router over the real knowledge and an
// in-memory audit log (the storage is tested by engine/audit's
// conformance suite).
func newServer(t *testing.T) testServer {
	t.Helper()
	return newServerCfg(t, pgxapi.Config{RateLimitPerMinute: 60})
}

// newServerCfg is newServer with a configuration.
func newServerCfg(t *testing.T, cfg pgxapi.Config) testServer {
	t.Helper()
	store := audittest.NewMemory()
	return testServer{h: handlerOn(store, ck, cfg), store: store}
}

// handlerOn is the REST surface over store, answering with classifier
// knowledge c.
func handlerOn(store interface {
	audit.Appender
	pgxapi.AuditStore
}, c *classify.Knowledge, cfg pgxapi.Config) http.Handler {
	srv := pgxapi.New(service.New(kb, c, store, fixedClock), store, zap.NewNop(), cfg)
	r := httpx.NewRouter()
	srv.Register(r)
	return httpx.Wrap(r, zap.NewNop())
}

func (ts testServer) do(t *testing.T, method, path, contentType string, body io.Reader) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec
}

func (ts testServer) check(t *testing.T, body string) *httptest.ResponseRecorder {
	t.Helper()
	return ts.do(t, http.MethodPost, "/pgx/check", "application/json", strings.NewReader(body))
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, rec.Body)
	}
	return v
}

func problem(t *testing.T, rec *httptest.ResponseRecorder, wantStatus int) httpx.Problem {
	t.Helper()
	if rec.Code != wantStatus {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, wantStatus, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != httpx.ProblemContentType {
		t.Errorf("Content-Type = %q, want %q", ct, httpx.ProblemContentType)
	}
	p := decode[httpx.Problem](t, rec)
	if p.Status != wantStatus || p.Type == "" || p.Title == "" {
		t.Errorf("problem is incomplete: %+v", p)
	}
	if p.RequestID == "" || p.RequestID != rec.Header().Get(httpx.RequestIDHeader) {
		t.Errorf("problem request_id %q, X-Request-ID %q", p.RequestID, rec.Header().Get(httpx.RequestIDHeader))
	}
	return p
}

const clopidogrelPM = `{
  "drug": "clopidogrel",
  "diplotypes": {"CYP2C19": "*2/*2"},
  "genes_tested": ["CYP2C19"],
  "state": "Tamil Nadu",
  "ethnicity": "Tamil",
  "indication": "acute coronary syndrome, PCI",
  "patient": {"sex": "male", "age_years": 54}
}`

const clopidogrelRsIDs = `{
  "drug": "clopidogrel",
  "variants": ["rs12769205", "rs4244285"],
  "zygosity": {"rs12769205": "hom", "rs4244285": "hom"},
  "genes_tested": ["CYP2C19"],
  "state": "Tamil Nadu",
  "ethnicity": "Tamil",
  "indication": "acute coronary syndrome, PCI",
  "patient": {"sex": "male", "age_years": 54}
}`

// envelopeKeys are the spec §2.2 fields, in the order the envelope puts
// the first five.
var envelopeKeys = []string{
	"api_version", "request_id", "audit_log_id", "timestamp", "latency_ms",
	"confidence", "data_completeness", "source_citations", "drug", "drug_normalised",
	"sensitivity", "overall_severity", "alerts", "safer_alternatives", "indian_context",
	"grounding_contract",
}

func TestCheckEnvelope(t *testing.T) {
	ts := newServer(t)
	for name, body := range map[string]string{"diplotype": clopidogrelPM, "rsids": clopidogrelRsIDs} {
		t.Run(name, func(t *testing.T) {
			rec := ts.check(t, body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			raw := decode[map[string]json.RawMessage](t, rec)
			for _, k := range envelopeKeys {
				if _, ok := raw[k]; !ok {
					t.Errorf("response lacks %q", k)
				}
			}
			if got := topLevelKeys(t, rec.Body.Bytes()); !cmp.Equal(got[:5], envelopeKeys[:5]) {
				t.Errorf("envelope order = %v, want %v first", got, envelopeKeys[:5])
			}

			resp := decode[pgxapi.CheckResponse](t, rec)
			if resp.APIVersion != "1.1.0" {
				t.Errorf("api_version = %q", resp.APIVersion)
			}
			if resp.RequestID == "" || resp.RequestID != rec.Header().Get(httpx.RequestIDHeader) {
				t.Errorf("request_id %q, header %q", resp.RequestID, rec.Header().Get(httpx.RequestIDHeader))
			}
			if want := "2025-06-01T08:30:00.000Z"; resp.Timestamp != want {
				t.Errorf("timestamp = %q, want %q (the service clock, UTC)", resp.Timestamp, want)
			}
			if resp.LatencyMs < 0 {
				t.Errorf("latency_ms = %d", resp.LatencyMs)
			}
			if resp.GroundingContract != engine.GroundingContract {
				t.Errorf("grounding_contract = %q", resp.GroundingContract)
			}
			if resp.Drug != "clopidogrel" || resp.DrugNormalised != "clopidogrel" {
				t.Errorf("drug %q / %q", resp.Drug, resp.DrugNormalised)
			}
			if resp.OverallSeverity != "HIGH" {
				t.Errorf("overall_severity = %q, want HIGH for a CYP2C19 poor metaboliser", resp.OverallSeverity)
			}
			dc := resp.DataCompleteness
			if !dc.GenotypeProvided || !dc.StateProvided || !dc.EthnicityProvided || !dc.IndicationProvided ||
				dc.FieldsPopulated != 4 || dc.FieldsTotal != 4 {
				t.Errorf("data_completeness = %+v, want all four supplied", dc)
			}
			if resp.IndianContext.State != "Tamil Nadu" {
				t.Errorf("indian_context.state = %q", resp.IndianContext.State)
			}

			// The audit entry exists, belongs to this call and records
			// exactly the result that was returned.
			e, err := ts.store.Entry(context.Background(), resp.AuditLogID)
			if err != nil {
				t.Fatalf("audit entry %q: %v", resp.AuditLogID, err)
			}
			if e.RequestID != resp.RequestID || e.Endpoint != "POST /pgx/check" || e.Principal.Subject != "anonymous" {
				t.Errorf("audit entry = %+v", e)
			}
			if !e.Time.Equal(fixedNow) {
				t.Errorf("audit time %v, want the service clock %v", e.Time, fixedNow)
			}
			resJSON, err := json.Marshal(resp.Result)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(resJSON)
			if want := "sha256:" + hex.EncodeToString(sum[:]); e.ResponseDigest != want {
				t.Errorf("audit response digest %s, digest of the returned result %s", e.ResponseDigest, want)
			}
			if e.KnowledgeVersion != resp.KnowledgeVersion {
				t.Errorf("audit knowledge version %q, response %q", e.KnowledgeVersion, resp.KnowledgeVersion)
			}
		})
	}
	if err := audit.Verify(context.Background(), ts.store); err != nil {
		t.Errorf("audit chain: %v", err)
	}
}

// topLevelKeys returns the keys of a JSON object in document order.
func topLevelKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestCheckRejects(t *testing.T) {
	ts := newServer(t)
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		wantStatus  int
		wantParams  []string // invalid_params names
		wantAllow   string
	}{
		{name: "malformed JSON", contentType: "application/json", body: `{"drug": "clopidogrel",`, wantStatus: 400},
		{name: "unknown field", contentType: "application/json", body: `{"drug":"clopidogrel","dose_mg":75}`, wantStatus: 400, wantParams: []string{"dose_mg"}},
		{name: "too large", contentType: "application/json",
			body: `{"drug":"clopidogrel","indication":"` + strings.Repeat("x", 64<<10) + `"}`, wantStatus: 413},
		{name: "text/plain", contentType: "text/plain", body: `{"drug":"clopidogrel"}`, wantStatus: 415},
		{name: "missing drug", contentType: "application/json", body: `{"variants":["rs4244285"]}`, wantStatus: 422, wantParams: []string{"drug"}},
		// encoding/json would read both keys into variants and drop *2.
		{name: "keys differing only in case", contentType: "application/json", body: `{"drug":"clopidogrel","Variants":["rs4244285"],"VARIANTS":["rs12248560"]}`, wantStatus: 400, wantParams: []string{"VARIANTS"}},
		{name: "embedded field in capitals", contentType: "application/json", body: `{"Drug":"clopidogrel"}`, wantStatus: 400, wantParams: []string{"Drug"}},
		{name: "coding without code", contentType: "application/json", body: `{"drug":"clopidogrel","indication_codes":[{"system":"http://hl7.org/fhir/sid/icd-10"}]}`, wantStatus: 422, wantParams: []string{"indication_codes[0].code"}},
		{name: "blank drug", contentType: "application/json", body: `{"drug":"  "}`, wantStatus: 422, wantParams: []string{"drug"}},
		{name: "bad rsID", contentType: "application/json", body: `{"drug":"clopidogrel","variants":["rsABC"]}`, wantStatus: 422, wantParams: []string{"variants[0]"}},
		{name: "one allele for a diploid gene", contentType: "application/json", body: `{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*17"}}`, wantStatus: 422, wantParams: []string{"diplotypes.CYP2C19"}},
		{name: "bad position call", contentType: "application/json",
			body:       `{"drug":"clopidogrel","calls":[{"chrom":"chr10","pos":94781859,"ref":"G","alt":"A","genotype":"0/1"},{"chrom":"chrQ","pos":0,"ref":"G","alt":"A","genotype":"0/2"}]}`,
			wantStatus: 422, wantParams: []string{"calls[1].chrom", "calls[1].genotype", "calls[1].pos"}},
		{name: "bad HGVS", contentType: "application/json", body: `{"drug":"clopidogrel","variants":["NC_000010.11:g.94781859delG"]}`, wantStatus: 422, wantParams: []string{"variants[0]"}},
		{name: "GRCh37 HGVS accession", contentType: "application/json", body: `{"drug":"clopidogrel","genes_tested":["CYP2C19"],"variants":["NC_000010.10:g.96541616G>A"]}`, wantStatus: 422, wantParams: []string{"variants[0]"}},
		{name: "call REF not GRCh38 at a definition position", contentType: "application/json",
			body:       `{"drug":"clopidogrel","genes_tested":["CYP2C19"],"calls":[{"chrom":"chr10","pos":94781859,"ref":"C","alt":"A","genotype":"0/1"}]}`,
			wantStatus: 422, wantParams: []string{"calls[0].ref"}},
		{name: "bad zygosity", contentType: "application/json", body: `{"drug":"clopidogrel","variants":["rs4244285:A"],"zygosity":{"rs4244285":"twice"}}`, wantStatus: 422, wantParams: []string{"zygosity.rs4244285"}},
		{name: "GET check", method: http.MethodGet, wantStatus: 405, wantAllow: "POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			rec := ts.do(t, method, "/pgx/check", tc.contentType, strings.NewReader(tc.body))
			p := problem(t, rec, tc.wantStatus)
			var names []string
			for _, ip := range p.InvalidParams {
				names = append(names, ip.Name)
				if ip.Reason == "" {
					t.Errorf("invalid param %q has no reason", ip.Name)
				}
			}
			if diff := cmp.Diff(tc.wantParams, names); diff != "" {
				t.Errorf("invalid_params names (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Allow"); got != tc.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tc.wantAllow)
			}
			if tc.wantStatus == 413 && !strings.Contains(p.Detail, "65536") {
				t.Errorf("413 detail %q does not name the limit", p.Detail)
			}
		})
	}

	rec := ts.do(t, http.MethodGet, "/pgx/nothing-here", "", nil)
	problem(t, rec, http.StatusNotFound)

	// No rejected request reached the audit log.
	n := 0
	if err := ts.store.Entries(context.Background(), 0, func(audit.Entry) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d audit entries written for rejected requests", n)
	}
}

func TestCheckWithoutAuditGivesNoAdvice(t *testing.T) {
	ts := newServer(t)
	if err := ts.store.Close(); err != nil {
		t.Fatal(err)
	}
	rec := ts.check(t, clopidogrelPM)
	p := problem(t, rec, http.StatusServiceUnavailable)
	if p.Type != httpx.TypeAuditUnavailable || p.Detail != "audit log unavailable; no advice was given" {
		t.Errorf("problem = %+v", p)
	}
	raw := decode[map[string]json.RawMessage](t, rec)
	for _, k := range []string{"alerts", "overall_severity", "safer_alternatives", "audit_log_id", "drug"} {
		if _, ok := raw[k]; ok {
			t.Errorf("503 body carries advice field %q", k)
		}
	}

	rec = ts.do(t, http.MethodGet, "/readyz", "", nil)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with a closed store = %d", rec.Code)
	}
	rec = ts.do(t, http.MethodGet, "/pgx/status", "", nil)
	st := decode[map[string]any](t, rec)
	if st["status"] != "degraded" {
		t.Errorf("/pgx/status status = %v, want degraded", st["status"])
	}
}

type versionBody struct {
	APIVersion          string            `json:"api_version"`
	EngineVersion       string            `json:"engine_version"`
	KnowledgeVersion    string            `json:"knowledge_version"`
	KnowledgeDigest     string            `json:"knowledge_digest"`
	DataVersions        map[string]string `json:"data_versions"`
	ServiceLevelTargets map[string]int    `json:"service_level_targets"`
	Limits              map[string]int    `json:"limits"`
}

type statusBody struct {
	Status string `json:"status"`
	Engine struct {
		KnowledgeLoaded bool `json:"knowledge_loaded"`
		Drugs           int  `json:"drugs"`
		Genes           int  `json:"genes"`
		Variants        int  `json:"variants"`
	} `json:"engine"`
	AuditLog struct {
		Backend   string `json:"backend"`
		Path      string `json:"path"`
		Policy    string `json:"policy"`
		Reachable bool   `json:"reachable"`
	} `json:"audit_log"`
	GroundingContract struct {
		Text     string `json:"text"`
		Enforced bool   `json:"enforced"`
		How      string `json:"how"`
	} `json:"grounding_contract"`
}

func TestMetadataEndpoints(t *testing.T) {
	// A real SQLite store: /pgx/status reports its backend.
	store, err := sqlstore.Open(context.Background(), "", t.TempDir())
	if err != nil {
		t.Fatalf("open audit store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	ts := testServer{h: handlerOn(store, ck, pgxapi.Config{RateLimitPerMinute: 60})}

	rec := ts.do(t, http.MethodGet, "/pgx/version", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("/pgx/version: %d", rec.Code)
	}
	ver := decode[versionBody](t, rec)
	if ver.APIVersion != "1.1.0" || ver.EngineVersion != pgxapi.EngineVersion ||
		ver.KnowledgeVersion != kb.Version.Label || ver.KnowledgeDigest != kb.Version.Digest {
		t.Errorf("/pgx/version = %+v", ver)
	}
	if diff := cmp.Diff(kb.Version.DataVersions, ver.DataVersions); diff != "" && len(kb.Version.DataVersions) > 0 {
		t.Errorf("data_versions (-kb +response):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"latency_p95_ms": 200, "rate_limit_per_minute": 60, "audit_retention_days": 365}, ver.ServiceLevelTargets); diff != "" {
		t.Errorf("service_level_targets (-want +got):\n%s", diff)
	}
	if ver.Limits["check_body_bytes"] != 65536 {
		t.Errorf("limits = %v", ver.Limits)
	}

	rec = ts.do(t, http.MethodGet, "/pgx/status", "", nil)
	st := decode[statusBody](t, rec)
	if st.Status != "ok" || !st.Engine.KnowledgeLoaded || st.Engine.Drugs != len(kb.Drugs) ||
		st.Engine.Genes != len(kb.Genes) || st.Engine.Variants != len(kb.Variants) {
		t.Errorf("/pgx/status engine = %+v", st)
	}
	if st.AuditLog.Backend != "sqlite" || st.AuditLog.Path != "" || !st.AuditLog.Reachable ||
		!strings.Contains(st.AuditLog.Policy, "append-only") {
		t.Errorf("/pgx/status audit_log = %+v", st.AuditLog)
	}
	if st.GroundingContract.Text != engine.GroundingContract || !st.GroundingContract.Enforced || st.GroundingContract.How == "" {
		t.Errorf("/pgx/status grounding_contract = %+v", st.GroundingContract)
	}

	rec = ts.do(t, http.MethodGet, "/pgx/drugs", "", nil)
	var drugs struct {
		Count int `json:"count"`
		Drugs []struct {
			Name        string `json:"name"`
			Sensitivity string `json:"sensitivity"`
			Genes       []struct {
				Gene      string `json:"gene"`
				CPICLevel string `json:"cpic_level"`
			} `json:"genes"`
		} `json:"drugs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &drugs); err != nil {
		t.Fatal(err)
	}
	if drugs.Count != len(kb.Drugs) || len(drugs.Drugs) != drugs.Count || drugs.Count == 0 {
		t.Errorf("/pgx/drugs count %d, %d rows, knowledge %d", drugs.Count, len(drugs.Drugs), len(kb.Drugs))
	}
	foundClopidogrel := false
	for _, d := range drugs.Drugs {
		if d.Name == "clopidogrel" {
			foundClopidogrel = true
			if d.Sensitivity != "high" || len(d.Genes) == 0 || d.Genes[0].Gene == "" {
				t.Errorf("clopidogrel row = %+v", d)
			}
		}
	}
	if !foundClopidogrel {
		t.Error("/pgx/drugs has no clopidogrel")
	}

	rec = ts.do(t, http.MethodGet, "/pgx/variants", "", nil)
	var vars struct {
		Count    int `json:"count"`
		Variants []struct {
			RsID    string   `json:"rsid"`
			Gene    string   `json:"gene"`
			AFIndia *float64 `json:"af_india"`
			Sources []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"sources"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &vars); err != nil {
		t.Fatal(err)
	}
	if vars.Count != len(kb.Variants) || len(vars.Variants) != vars.Count || vars.Count == 0 {
		t.Errorf("/pgx/variants count %d, %d rows, knowledge %d", vars.Count, len(vars.Variants), len(kb.Variants))
	}
	for _, v := range vars.Variants {
		if !regexp.MustCompile(`^rs[0-9]+$`).MatchString(v.RsID) || v.Gene == "" {
			t.Errorf("variant row %+v", v)
		}
		for _, s := range v.Sources {
			if s.Title == "" {
				t.Errorf("variant %s: source %q does not resolve to a title", v.RsID, s.ID)
			}
		}
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		if rec := ts.do(t, http.MethodGet, path, "", nil); rec.Code != http.StatusOK {
			t.Errorf("%s = %d: %s", path, rec.Code, rec.Body)
		}
	}
}

// placeholders replaces the per-call values of a check response.
var placeholders = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`"request_id":"[^"]*"`), `"request_id":"<request_id>"`},
	{regexp.MustCompile(`"audit_log_id":"[^"]*"`), `"audit_log_id":"<audit_log_id>"`},
	{regexp.MustCompile(`"timestamp":"[^"]*"`), `"timestamp":"<timestamp>"`},
	{regexp.MustCompile(`"latency_ms":[0-9]+`), `"latency_ms":"<latency_ms>"`},
	// The knowledge version changes with every data edit; the content
	// below it is what the golden file pins.
	{regexp.MustCompile(`"knowledge_version":"[^"]*"`), `"knowledge_version":"<knowledge_version>"`},
}

func TestCheckGolden(t *testing.T) {
	ts := newServer(t)
	rec := ts.check(t, clopidogrelPM)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	for _, p := range placeholders {
		body = p.re.ReplaceAll(body, []byte(p.repl))
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatalf("indent: %v", err)
	}
	got := pretty.String()

	golden := filepath.Join("..", "testdata", "golden", "check_clopidogrel_cyp2c19_pm.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run go test ./pgxapi -run TestCheckGolden -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("POST /pgx/check body differs from %s (-golden +got); if the change is intended, rerun with -update:\n%s", golden, diff)
	}
}

// TestHeadWhereGet: every GET endpoint answers HEAD with the GET status
// and Content-Length.
func TestHeadWhereGet(t *testing.T) {
	ts := newServer(t)
	for _, path := range []string{"/pgx/version", "/pgx/status", "/pgx/drugs", "/pgx/variants", "/pgx/india_panel", "/healthz", "/openapi.json", "/classifier_v2/version", "/classifier_v2/demo_cases"} {
		get := ts.do(t, http.MethodGet, path, "", nil)
		head := ts.do(t, http.MethodHead, path, "", nil)
		if head.Code != get.Code || head.Code != http.StatusOK {
			t.Errorf("HEAD %s: %d, GET %d", path, head.Code, get.Code)
		}
		if cl := head.Header().Get("Content-Length"); cl != strconv.Itoa(get.Body.Len()) {
			t.Errorf("HEAD %s: Content-Length %q, GET body %d bytes", path, cl, get.Body.Len())
		}
	}
}
