package pgxapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// classifierEndpoints are the six endpoints of spec §4.3, as registered.
var classifierEndpoints = []string{
	"POST /classifier_v2/classify",
	"POST /classifier_v2/demo/{case_name}",
	"GET /classifier_v2/demo_cases",
	"GET /classifier_v2/curated_substrate",
	"GET /classifier_v2/citations",
	"GET /classifier_v2/version",
}

func (ts testServer) classify(t *testing.T, body string) *httptest.ResponseRecorder {
	t.Helper()
	return ts.do(t, http.MethodPost, "/classifier_v2/classify", "application/json", strings.NewReader(body))
}

func auditCount(t *testing.T, ts testServer) int {
	t.Helper()
	n := 0
	if err := ts.store.Entries(context.Background(), 0, func(audit.Entry) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestClassifierMetadataDocument checks GET /classifier_v2/version against
// spec §2.8 field by field, and that every endpoint it lists is live.
func TestClassifierMetadataDocument(t *testing.T) {
	ts := newServer(t)
	rec := ts.do(t, http.MethodGet, "/classifier_v2/version", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	raw := decode[map[string]json.RawMessage](t, rec)
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	wantKeys := []string{"api_version", "curated_substrate_size", "demo_case_ids", "endpoints_live", "engine_version", "methods",
		"publication_citations_count", "status"}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("metadata document fields (-spec §2.8 +got):\n%s", diff)
	}
	doc := decode[pgxapi.ClassifierMetadata](t, rec)
	if doc.APIVersion != "1.0.0" || doc.EngineVersion != classify.EngineVersion || doc.Status != "operational" {
		t.Errorf("api_version %q, engine_version %q, status %q", doc.APIVersion, doc.EngineVersion, doc.Status)
	}
	if diff := cmp.Diff(classifierEndpoints, doc.EndpointsLive); diff != "" {
		t.Errorf("endpoints_live (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"slco1b1-n130d", "cyp2c9-i359l", "dpyd-m166v", "nudt15-r139c"}, doc.DemoCaseIDs); diff != "" {
		t.Errorf("demo_case_ids (-want +got):\n%s", diff)
	}
	var methods []string
	for k, v := range doc.Methods {
		methods = append(methods, k)
		if strings.TrimSpace(v) == "" {
			t.Errorf("method %s has no description", k)
		}
	}
	sort.Strings(methods)
	if diff := cmp.Diff([]string{"esm", "graph", "population", "synthesis"}, methods); diff != "" {
		t.Errorf("methods keys (-want +got):\n%s", diff)
	}
	// The spec's counts.
	want := classify.SubstrateSize{CohortVariants: 16, ProteinSequences: 5, GraphNodes: 62, GraphEdges: 54}
	if diff := cmp.Diff(want, doc.CuratedSubstrateSize); diff != "" {
		t.Errorf("curated_substrate_size (-spec +got):\n%s", diff)
	}
	if doc.PublicationCitationsCount != 10 {
		t.Errorf("publication_citations_count = %d, want 10", doc.PublicationCitationsCount)
	}

	// Every endpoint listed answers.
	for _, ep := range doc.EndpointsLive {
		method, path, _ := strings.Cut(ep, " ")
		path = strings.Replace(path, "{case_name}", doc.DemoCaseIDs[0], 1)
		var r *httptest.ResponseRecorder
		if path == "/classifier_v2/classify" {
			r = ts.classify(t, `{"gene":"TPMT","protein_change":"p.Ala154Thr"}`)
		} else {
			r = ts.do(t, method, path, "", nil)
		}
		if r.Code != http.StatusOK {
			t.Errorf("%s %s = %d: %s", method, path, r.Code, r.Body)
		}
	}
}

// TestClassifyEnvelopeAndAudit classifies the examples and checks
// the envelope, the four method sections and the audit entry.
func TestClassifyEnvelopeAndAudit(t *testing.T) {
	ts := newServer(t)
	for name, tc := range map[string]struct {
		body string
		tier int
	}{
		"protein change": {`{"gene":"TPMT","protein_change":"p.Ala154Thr"}`, 1},
		"rsid":           {`{"gene":"NUDT15","variant":"rs116855232"}`, 1},
		"one-letter":     {`{"gene":"cyp2c9","protein_change":"R150L"}`, 3},
		"novel":          {`{"gene":"SLCO1B1","protein_change":"p.Ala200Trp"}`, 2},
	} {
		t.Run(name, func(t *testing.T) {
			rec := ts.classify(t, tc.body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if got := topLevelKeys(t, rec.Body.Bytes()); !cmp.Equal(got[:5], envelopeKeys[:5]) {
				t.Errorf("envelope order = %v", got)
			}
			raw := decode[map[string]json.RawMessage](t, rec)
			for _, k := range []string{"esm", "population", "graph", "synthesis", "tier", "rules_fired", "source_citations", "grounding_contract", "request_id", "audit_log_id"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("response lacks %q", k)
				}
			}
			resp := decode[pgxapi.ClassifyResponse](t, rec)
			if resp.APIVersion != "1.0.0" || resp.Tier != tc.tier || resp.GroundingContract != engine.GroundingContract ||
				len(resp.RulesFired) == 0 || len(resp.SourceCitations) == 0 {
				t.Errorf("api_version %q, tier %d, rules %v, %d citations", resp.APIVersion, resp.Tier, resp.RulesFired, len(resp.SourceCitations))
			}
			if resp.RequestID == "" || resp.RequestID != rec.Header().Get(httpx.RequestIDHeader) {
				t.Errorf("request_id %q", resp.RequestID)
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q", rec.Header().Get("Cache-Control"))
			}
			e, err := ts.store.Entry(context.Background(), resp.AuditLogID)
			if err != nil {
				t.Fatalf("audit entry %q: %v", resp.AuditLogID, err)
			}
			if e.Endpoint != pgxapi.ClassifyEndpoint || e.RequestID != resp.RequestID || e.Principal.Subject != "anonymous" || !e.Time.Equal(fixedNow) {
				t.Errorf("audit entry = %+v", e)
			}
			resJSON, err := json.Marshal(resp.Classification)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(resJSON)
			if want := "sha256:" + hex.EncodeToString(sum[:]); e.ResponseDigest != want {
				t.Errorf("audit response digest %s, digest of the returned result %s", e.ResponseDigest, want)
			}
		})
	}
	if err := audit.Verify(context.Background(), ts.store); err != nil {
		t.Errorf("audit chain: %v", err)
	}
}

func TestClassifyRejects(t *testing.T) {
	ts := newServer(t)
	tests := []struct {
		name, contentType, body string
		status                  int
		param                   string // invalid_params name for 422
		reason                  string
	}{
		{"wrong media type", "text/plain", `{"gene":"TPMT","protein_change":"A154T"}`, 415, "", ""},
		{"malformed JSON", "application/json", `{"gene":`, 400, "", ""},
		{"unknown field", "application/json", `{"gene":"TPMT","protein_change":"A154T","zygosity":"het"}`, 400, "", ""},
		{"no gene", "application/json", `{"protein_change":"A154T"}`, 422, "gene", "is required"},
		{"unknown gene", "application/json", `{"gene":"BRCA1","protein_change":"A154T"}`, 422, "gene", "not a protein of the classifier"},
		{"beyond the sequence", "application/json", `{"gene":"NUDT15","protein_change":"p.Arg165Cys"}`, 422, "protein_change", "beyond the end of NUDT15"},
		{"wrong reference", "application/json", `{"gene":"NUDT15","protein_change":"p.Gly139Cys"}`, 422, "protein_change", "never re-based"},
		{"stop-gain", "application/json", `{"gene":"NUDT15","protein_change":"R139X"}`, 422, "protein_change", "stop-gain"},
		{"frameshift", "application/json", `{"gene":"CYP2C9","protein_change":"K273fs"}`, 422, "protein_change", "frameshift"},
		{"non-missense rsID", "application/json", `{"gene":"DPYD","variant":"rs3918290"}`, 422, "variant", "not a missense variant"},
		{"unknown rsID", "application/json", `{"gene":"DPYD","variant":"rs1"}`, 422, "variant", "not in the knowledge"},
		{"nothing to classify", "application/json", `{"gene":"DPYD"}`, 422, "protein_change", "is required"},
	}
	before := auditCount(t, ts)
	for _, tc := range tests {
		rec := ts.do(t, http.MethodPost, "/classifier_v2/classify", tc.contentType, strings.NewReader(tc.body))
		p := problem(t, rec, tc.status)
		if tc.status != 422 {
			continue
		}
		if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != tc.param || !strings.Contains(p.InvalidParams[0].Reason, tc.reason) {
			t.Errorf("%s: invalid_params = %+v, want %s containing %q", tc.name, p.InvalidParams, tc.param, tc.reason)
		}
	}
	if n := auditCount(t, ts); n != before {
		t.Errorf("%d audit entries written for rejected requests", n-before)
	}
	// Methods other than the registered ones.
	if rec := ts.do(t, http.MethodGet, "/classifier_v2/classify", "", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET classify = %d", rec.Code)
	}
	if rec := ts.do(t, http.MethodPost, "/classifier_v2/version", "", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST version = %d", rec.Code)
	}
}

func TestDemoEndpoint(t *testing.T) {
	ts := newServer(t)
	tiers := map[string]int{"slco1b1-n130d": 4, "cyp2c9-i359l": 1, "dpyd-m166v": 4, "nudt15-r139c": 1}
	for id, tier := range tiers {
		rec := ts.do(t, http.MethodPost, "/classifier_v2/demo/"+id, "", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", id, rec.Code, rec.Body)
		}
		resp := decode[pgxapi.DemoResponse](t, rec)
		if resp.DemoCase.ID != id || resp.Tier != tier || resp.AuditLogID == "" {
			t.Errorf("%s: demo_case %q, tier %d (want %d), audit %q", id, resp.DemoCase.ID, resp.Tier, tier, resp.AuditLogID)
		}
		e, err := ts.store.Entry(context.Background(), resp.AuditLogID)
		if err != nil || e.Endpoint != pgxapi.DemoEndpoint {
			t.Errorf("%s: audit entry %+v, %v", id, e, err)
		}
	}
	before := auditCount(t, ts)
	rec := ts.do(t, http.MethodPost, "/classifier_v2/demo/brca1-c61g", "", nil)
	p := problem(t, rec, http.StatusNotFound)
	for id := range tiers {
		if !strings.Contains(p.Detail, id) {
			t.Errorf("404 detail %q does not list %s", p.Detail, id)
		}
	}
	if auditCount(t, ts) != before {
		t.Error("an unknown demo case was audited")
	}
}

func TestClassifierListings(t *testing.T) {
	ts := newServer(t)
	dc := decode[struct {
		Count     int `json:"count"`
		DemoCases []struct {
			ID   string `json:"id"`
			Path string `json:"path"`
		} `json:"demo_cases"`
	}](t, ts.do(t, http.MethodGet, "/classifier_v2/demo_cases", "", nil))
	if dc.Count != 4 || len(dc.DemoCases) != 4 || dc.DemoCases[0].Path != "/classifier_v2/demo/"+dc.DemoCases[0].ID {
		t.Errorf("demo_cases = %+v", dc)
	}
	cit := decode[struct {
		Count     int                            `json:"publication_citations_count"`
		Citations []classify.PublicationCitation `json:"citations"`
	}](t, ts.do(t, http.MethodGet, "/classifier_v2/citations", "", nil))
	if cit.Count != 10 || len(cit.Citations) != 10 {
		t.Errorf("citations: count %d, %d items", cit.Count, len(cit.Citations))
	}
	for _, c := range cit.Citations {
		if c.URL == "" || (c.PMID == "" && c.DOI == "") || len(c.SourceIDs) == 0 {
			t.Errorf("citation %+v is incomplete", c)
		}
	}
	sub := decode[struct {
		Size   classify.SubstrateSize   `json:"curated_substrate_size"`
		Cohort []classify.CohortVariant `json:"cohort"`
		Graph  classify.KnowledgeGraph  `json:"graph"`
		Valid  classify.Validation      `json:"validation"`
		Srcs   []knowledge.Source       `json:"sources"`
	}](t, ts.do(t, http.MethodGet, "/classifier_v2/curated_substrate", "", nil))
	if sub.Size.CohortVariants != len(sub.Cohort) || sub.Size.GraphNodes != len(sub.Graph.Nodes) || sub.Size.GraphEdges != len(sub.Graph.Edges) ||
		sub.Size != (classify.SubstrateSize{CohortVariants: 16, ProteinSequences: 5, GraphNodes: 62, GraphEdges: 54}) {
		t.Errorf("curated_substrate_size %+v does not count the listed rows", sub.Size)
	}
	if sub.Valid.All.Positives == 0 || len(sub.Srcs) == 0 {
		t.Errorf("curated_substrate lacks validation or sources")
	}
}

func TestClassifyWithoutAuditGivesNoAnswer(t *testing.T) {
	ts := newServer(t)
	if err := ts.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ path, body string }{
		{"/classifier_v2/classify", `{"gene":"TPMT","protein_change":"p.Ala154Thr"}`},
		{"/classifier_v2/demo/nudt15-r139c", ""},
	} {
		ct := ""
		if req.body != "" {
			ct = "application/json"
		}
		rec := ts.do(t, http.MethodPost, req.path, ct, strings.NewReader(req.body))
		p := problem(t, rec, http.StatusServiceUnavailable)
		if p.Type != httpx.TypeAuditUnavailable {
			t.Errorf("%s: problem = %+v", req.path, p)
		}
		raw := decode[map[string]json.RawMessage](t, rec)
		for _, k := range []string{"tier", "esm", "synthesis", "audit_log_id"} {
			if _, ok := raw[k]; ok {
				t.Errorf("%s: 503 body carries %q", req.path, k)
			}
		}
	}
}

// TestClassifierGolden pins whole answers: the NUDT15 example and
// the metadata document.
func TestClassifierGolden(t *testing.T) {
	ts := newServer(t)
	for _, g := range []struct {
		file, method, path, body string
	}{
		{"classifier_classify_nudt15_rs116855232.json", http.MethodPost, "/classifier_v2/classify", `{"gene":"NUDT15","variant":"rs116855232"}`},
		{"classifier_version.json", http.MethodGet, "/classifier_v2/version", ""},
	} {
		ct := ""
		if g.body != "" {
			ct = "application/json"
		}
		rec := ts.do(t, g.method, g.path, ct, strings.NewReader(g.body))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", g.path, rec.Code, rec.Body)
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
		golden := filepath.Join("..", "testdata", "golden", g.file)
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("read golden file (run go test ./pgxapi -run TestClassifierGolden -update to create it): %v", err)
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s %s differs from %s (-golden +got); if the change is intended, rerun with -update:\n%s", g.method, g.path, golden, diff)
		}
	}
}

// TestClassifierWithoutKnowledge: knowledge without classifier data (which
// validation prevents) makes every classifier endpoint a 503, not a panic
// or an empty answer.
func TestClassifierWithoutKnowledge(t *testing.T) {
	store := audittest.NewMemory()
	ts := testServer{h: handlerOn(store, nil, pgxapi.Config{}), store: store}
	for _, ep := range classifierEndpoints {
		method, path, _ := strings.Cut(ep, " ")
		path = strings.Replace(path, "{case_name}", "nudt15-r139c", 1)
		rec := ts.do(t, method, path, "application/json", strings.NewReader(`{"gene":"TPMT","protein_change":"A154T"}`))
		problem(t, rec, http.StatusServiceUnavailable)
	}
}
