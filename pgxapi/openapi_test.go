package pgxapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// fullServer is the router composed as cmd/pgxsafety/serve.go composes it:
// the pgxapi surface, the CDS Hooks surface and /metrics. (serve.go lives
// in package main, which tests cannot import; keep this in step with it.)
// Authentication sits in httpx.Chain outside the router and is not applied
// here, as in the other pgxapi tests.
type fullServer struct {
	router *mux.Router
	h      http.Handler
}

func newFullServer(t *testing.T) fullServer {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlstore.Open(ctx, "", dir)
	if err != nil {
		t.Fatalf("open audit store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	// Answers carry receipts, as serve's do, so their documented form is
	// checked.
	svc := service.New(kb, ck, store, fixedClock, service.WithReceipts(audit.NewReceiptSigner(audittest.Signer())))
	r := httpx.NewRouter()
	pgxapi.New(svc, store, zap.NewNop(), pgxapi.Config{RateLimitPerMinute: 60}).Register(r)
	pgxapi.RegisterTransparency(r, newTestTransparency(store))
	cds, err := cdshooks.New(svc, cdshooks.Config{Feedback: store.Feedback(), ListenAddr: "127.0.0.1:0"}, zap.NewNop())
	if err != nil {
		t.Fatalf("cdshooks: %v", err)
	}
	cds.Register(r)
	app, err := smart.New(smart.Config{PublicURL: "https://pgx.example.org"}, svc, zap.NewNop())
	if err != nil {
		t.Fatalf("smart: %v", err)
	}
	app.Register(r)
	r.Handle("/metrics", httpx.NewMetrics().Handler()).Methods(http.MethodGet, http.MethodHead)
	return fullServer{router: r, h: httpx.Wrap(r, zap.NewNop())}
}

// openAPIDoc fetches GET /openapi.json and decodes it with numbers kept
// exact.
func openAPIDoc(t *testing.T, fs fullServer) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	fs.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	v, err := decodeExact(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("GET /openapi.json is not one JSON value: %v", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("the document is %T, not an object", v)
	}
	return doc
}

func decodeExact(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// TestOpenAPIDocumentMatchesRouter: the document is OpenAPI 3.1.0 and its
// operations are exactly the routes of the real router.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)
	if got := doc["openapi"]; got != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", got)
	}
	if _, ok := doc["servers"]; ok {
		t.Errorf("the document names servers; clients should use the URL they fetched it from")
	}

	var documented []string
	for path, item := range doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if slices.Contains(httpMethods, m) {
				documented = append(documented, strings.ToUpper(m)+" "+path)
			}
		}
	}
	var served []string
	err := fs.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		methods, err := route.GetMethods()
		if err != nil {
			return fmt.Errorf("route %s has no methods: %w", tpl, err)
		}
		for _, m := range methods {
			served = append(served, m+" "+tpl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(documented)
	sort.Strings(served)
	if diff := cmp.Diff(served, documented); diff != "" {
		t.Errorf("routes served (-) vs operations documented (+):\n%s", diff)
	}
	// The list the brief (DESIGN.md §4) names is all there.
	for _, want := range []string{"POST /pgx/check", "POST /pgx/batch_csv", "POST /pgx/batch", "GET /pgx/india_panel",
		"GET /pgx/version", "GET /pgx/status", "GET /pgx/drugs", "GET /pgx/variants",
		"GET /cds-services", "POST /cds-services/{id}", "POST /cds-services/{id}/feedback",
		"GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json",
		"GET /smart/launch", "GET /smart/callback", "GET /smart/review/{id}"} {
		if !slices.Contains(served, want) {
			t.Errorf("the router does not serve %s", want)
		}
	}
}

// TestOpenAPIDocumentConsistent: every $ref resolves, every operation has
// an id, and the auth rule (pgxapi.Protection) agrees with each
// operation's security.
func TestOpenAPIDocumentConsistent(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if _, err := resolveRef(doc, r); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
			for k, c := range v {
				walk(c, at+"/"+k)
			}
		case []any:
			for i, c := range v {
				walk(c, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")

	ids := map[string]string{}
	for path, item := range doc["paths"].(map[string]any) {
		for m, o := range item.(map[string]any) {
			op := o.(map[string]any)
			name := strings.ToUpper(m) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" {
				t.Errorf("%s has no operationId", name)
			} else if prev, dup := ids[id]; dup {
				t.Errorf("operationId %q used by %s and %s", id, prev, name)
			}
			ids[id] = name
			sec, ok := op["security"].([]any)
			if !ok {
				t.Errorf("%s does not state its security", name)
				continue
			}
			bearer := false
			for _, s := range sec {
				if _, ok := s.(map[string]any)["bearerAuth"]; ok {
					bearer = true
				}
			}
			req := httptest.NewRequest(strings.ToUpper(m), strings.ReplaceAll(strings.ReplaceAll(path, "{", "x"), "}", ""), nil)
			if want := pgxapi.Protection.RequiresAuth(req); bearer != want {
				t.Errorf("%s: bearerAuth documented %v, httpx.RequiresAuth %v", name, bearer, want)
			}
			if want := pgxapi.Protection.RequiresAuth(req); want && op["responses"].(map[string]any)["401"] == nil {
				t.Errorf("%s requires a token but documents no 401", name)
			}
		}
	}
}

// strictSchemas are the response schemas the brief names: every object in
// them must be closed (additionalProperties false), so that the real
// response tests below prove every field the code emits is declared.
var strictSchemas = []string{"CheckResponse", "VersionResponse", "StatusResponse", "DrugsResponse", "VariantsResponse", "Problem", "BatchResponse"}

func TestOpenAPIStrictSchemasAreClosed(t *testing.T) {
	doc := openAPIDoc(t, newFullServer(t))
	seen := map[string]bool{}
	var visit func(s map[string]any, at string)
	visit = func(s map[string]any, at string) {
		if r, ok := s["$ref"].(string); ok {
			if seen[r] {
				return
			}
			seen[r] = true
			target, err := resolveRef(doc, r)
			if err != nil {
				t.Fatal(err)
			}
			visit(target, r)
			return
		}
		if s["type"] == "object" {
			props, _ := s["properties"].(map[string]any)
			ap, hasAP := s["additionalProperties"]
			if len(props) > 0 && ap != false {
				t.Errorf("%s: an object with properties is not closed (additionalProperties false)", at)
			}
			if len(props) == 0 && !hasAP {
				t.Errorf("%s: an object with neither properties nor additionalProperties", at)
			}
			if sub, ok := ap.(map[string]any); ok {
				visit(sub, at+"/additionalProperties")
			}
			for k, p := range props {
				visit(p.(map[string]any), at+"/"+k)
			}
		}
		if it, ok := s["items"].(map[string]any); ok {
			visit(it, at+"/items")
		}
	}
	for _, name := range strictSchemas {
		visit(map[string]any{"$ref": "#/components/schemas/" + name}, name)
	}
}

// TestOpenAPIRealResponses sends real requests through the real router and
// checks each response body against the schema the document declares for
// that operation, status and content type: every field present is
// declared (where the schema is closed), every required field is present,
// and every value has the declared type.
func TestOpenAPIRealResponses(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)

	csvBody, csvCT := multipartCSV(t, []byte("drug,variants,state,ethnicity,indication,patient_ref\n"+
		"clopidogrel,rs4244285;rs12769205,Tamil Nadu,Tamil,PCI,P1\n"+
		",rs4244285,,,,P2\n"))

	vcfData := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n" +
		"chr10\t94781859\trs4244285\tG\tA\t.\tLowQual\t.\tGT\t0/1\t./.\n")
	vcfBody, vcfCT := multipartBody(t, vcfFile("two.vcf", vcfData))
	vcfDrugBody, vcfDrugCT := multipartBody(t, vcfFile("two.vcf", vcfData), formPart{name: "drug", data: []byte("clopidogrel")},
		formPart{name: "drug", data: []byte("clopidogrl")})
	vcf37Body, vcf37CT := multipartBody(t, vcfFile("b37.vcf", []byte("##fileformat=VCFv4.2\n##contig=<ID=1,length=249250621>\n")))

	type tc struct {
		name, method, path, template string
		ct                           string
		accept                       string
		body                         []byte
		status                       int
	}
	json := func(s string) []byte { return []byte(s) }
	cases := []tc{
		{name: "check diplotype", method: "POST", path: "/pgx/check", ct: "application/json", body: json(clopidogrelPM), status: 200},
		{name: "check rsids", method: "POST", path: "/pgx/check", ct: "application/json", body: json(clopidogrelRsIDs), status: 200},
		{name: "check hla", method: "POST", path: "/pgx/check", ct: "application/json",
			body: json(`{"drug":"carbamazepine","hla":{"HLA-B*15:02":"positive"},"state":"Kerala"}`), status: 200},
		{name: "check no genotype", method: "POST", path: "/pgx/check", ct: "application/json",
			body: json(`{"drug":"warfarin","state":"Punjab","ethnicity":"Punjabi","patient":{"sex":"female","age_years":61,"months_on_drug":2}}`), status: 200},
		{name: "check unknown drug", method: "POST", path: "/pgx/check", ct: "application/json", body: json(`{"drug":"clopidogrl","variants":["rs999999999"]}`), status: 200},
		{name: "check 422", method: "POST", path: "/pgx/check", ct: "application/json", body: json(`{"drug":"clopidogrel","variants":["not-an-rsid"],"zygosity":{"rs4244285":"double"}}`), status: 422},
		{name: "check position calls, HGVS and rsID:allele", method: "POST", path: "/pgx/check", ct: "application/json",
			body: json(`{"drug":"atazanavir","genes_tested":["UGT1A1"],"variants":["rs3064744:TA(8)@definitions","NC_000002.12:g.233759924C>T"],"zygosity":{"rs3064744":"het","NC_000002.12:g.233759924C>T":"het"},` +
				`"calls":[{"chrom":"chr10","pos":94781859,"ref":"G","alt":"A","genotype":"0/1"},{"chrom":"chr10","pos":94761900,"ref":"C","alt":"T","genotype":"./."}]}`), status: 200},
		{name: "check 422 calls and one allele", method: "POST", path: "/pgx/check", ct: "application/json",
			body: json(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*17"},"calls":[{"chrom":"chr10","pos":94781859,"ref":"G","alt":"A","genotype":"0/3"}]}`), status: 422},
		{name: "check 422 GRCh37", method: "POST", path: "/pgx/check", ct: "application/json",
			body: json(`{"drug":"clopidogrel","variants":["NC_000010.10:g.96541616G>A"],"calls":[{"chrom":"chr10","pos":94781859,"ref":"C","alt":"A","genotype":"0/1"}]}`), status: 422},
		{name: "check 422 no drug", method: "POST", path: "/pgx/check", ct: "application/json", body: json(`{"variants":["rs4244285"]}`), status: 422},
		{name: "check 400", method: "POST", path: "/pgx/check", ct: "application/json", body: json(`{"drug":"clopidogrel","dose":75}`), status: 400},
		{name: "check 415", method: "POST", path: "/pgx/check", ct: "text/plain", body: json(`{"drug":"clopidogrel"}`), status: 415},
		{name: "check 413", method: "POST", path: "/pgx/check", ct: "application/json", body: json(`{"drug":"` + strings.Repeat("a", pgxapi.CheckBodyLimit) + `"}`), status: 413},
		{name: "batch", method: "POST", path: "/pgx/batch", ct: "application/json",
			body: json(`{"drugs":["clopidogrel","warfarin","codeine"],"diplotypes":{"CYP2C19":"*2/*2"},"genes_tested":["CYP2C19"],"state":"Tamil Nadu"}`), status: 200},
		{name: "batch_csv json", method: "POST", path: "/pgx/batch_csv", ct: csvCT, body: csvBody.Bytes(), status: 200},
		{name: "vcf json", method: "POST", path: "/pgx/vcf", ct: vcfCT, body: vcfBody.Bytes(), status: 200},
		{name: "vcf drugs", method: "POST", path: "/pgx/vcf", ct: vcfDrugCT, body: vcfDrugBody.Bytes(), status: 200},
		{name: "vcf 422 build", method: "POST", path: "/pgx/vcf", ct: vcf37CT, body: vcf37Body.Bytes(), status: 422},
		{name: "version", method: "GET", path: "/pgx/version", status: 200},
		{name: "status", method: "GET", path: "/pgx/status", status: 200},
		{name: "drugs", method: "GET", path: "/pgx/drugs", status: 200},
		{name: "variants", method: "GET", path: "/pgx/variants", status: 200},
		{name: "india_panel", method: "GET", path: "/pgx/india_panel", status: 200},
		{name: "classify", method: "POST", path: "/classifier_v2/classify", ct: "application/json", body: json(`{"gene":"TPMT","protein_change":"p.Ala154Thr"}`), status: 200},
		{name: "classify 422", method: "POST", path: "/classifier_v2/classify", ct: "application/json", body: json(`{"gene":"DPYD","variant":"rs1"}`), status: 422},
		{name: "demo 404", method: "POST", path: "/classifier_v2/demo/no-such-case", template: "/classifier_v2/demo/{case_name}", status: 404},
		{name: "demo_cases", method: "GET", path: "/classifier_v2/demo_cases", status: 200},
		{name: "curated_substrate", method: "GET", path: "/classifier_v2/curated_substrate", status: 200},
		{name: "citations", method: "GET", path: "/classifier_v2/citations", status: 200},
		{name: "classifier version", method: "GET", path: "/classifier_v2/version", status: 200},
		{name: "cds discovery", method: "GET", path: "/cds-services", status: 200},
		{name: "cds hook 401", method: "POST", path: "/cds-services/pgx-order-select", template: "/cds-services/{id}", ct: "application/json", body: json(`{}`), status: 401},
		{name: "cds feedback 401", method: "POST", path: "/cds-services/pgx-order-sign/feedback", template: "/cds-services/{id}/feedback", ct: "application/json", body: json(`{"feedback":[]}`), status: 401},
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "readyz", method: "GET", path: "/readyz", status: 200},
	}

	// A demo case by its real id.
	rec := httptest.NewRecorder()
	fs.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/classifier_v2/demo_cases", nil))
	var dc struct {
		DemoCases []struct{ Path string } `json:"demo_cases"`
	}
	if err := jsonUnmarshal(rec.Body.Bytes(), &dc); err != nil || len(dc.DemoCases) == 0 {
		t.Fatalf("demo cases: %v %s", err, rec.Body)
	}
	cases = append(cases, tc{name: "demo", method: "POST", path: dc.DemoCases[0].Path, template: "/classifier_v2/demo/{case_name}", status: 200})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, bytes.NewReader(c.body))
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			rec := httptest.NewRecorder()
			fs.h.ServeHTTP(rec, req)
			if rec.Code != c.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			tpl := c.template
			if tpl == "" {
				tpl = c.path
			}
			checkResponse(t, doc, tpl, c.method, rec)
		})
	}

	// NDJSON: every line against the stream-line schema.
	t.Run("batch_csv ndjson", func(t *testing.T) {
		body, ct := multipartCSV(t, []byte("drug,variants,state,ethnicity,indication,patient_ref\nclopidogrel,rs4244285,,,,P1\nwarfarin,bad,,,,P2\n"))
		req := httptest.NewRequest(http.MethodPost, "/pgx/batch_csv", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Accept", pgxapi.NDJSONContentType)
		rec := httptest.NewRecorder()
		fs.h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		schema, err := responseSchema(doc, "/pgx/batch_csv", "POST", 200, pgxapi.NDJSONContentType)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("got %d lines, want a receipt, 2 rows and a summary:\n%s", len(lines), rec.Body)
		}
		for i, l := range lines {
			v, err := decodeExact([]byte(l))
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			for _, e := range validate(doc, schema, v, fmt.Sprintf("line %d", i+1)) {
				t.Error(e)
			}
		}
	})
}

// TestOpenAPIVCFStream checks every line of a POST /pgx/vcf NDJSON answer
// against the stream-line schema.
func TestOpenAPIVCFStream(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)
	body, ct := multipartBody(t, vcfFile("two.vcf", []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n"+
		"chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\t1/1\n")))
	req := httptest.NewRequest(http.MethodPost, "/pgx/vcf", body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", pgxapi.NDJSONContentType)
	rec := httptest.NewRecorder()
	fs.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	schema, err := responseSchema(doc, "/pgx/vcf", "POST", 200, pgxapi.NDJSONContentType)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want a receipt, 2 samples and a summary:\n%s", len(lines), rec.Body)
	}
	for i, l := range lines {
		v, err := decodeExact([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, e := range validate(doc, schema, v, fmt.Sprintf("line %d", i+1)) {
			t.Error(e)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// checkResponse validates rec's body against the schema documented for
// tpl, method, its status and content type, and checks that every header
// documented for that response is present.
func checkResponse(t *testing.T, doc map[string]any, tpl, method string, rec *httptest.ResponseRecorder) {
	t.Helper()
	ct, _, _ := strings.Cut(rec.Header().Get("Content-Type"), ";")
	schema, err := responseSchema(doc, tpl, method, rec.Code, ct)
	if err != nil {
		t.Fatal(err)
	}
	body, err := decodeExact(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	for _, e := range validate(doc, schema, body, "$") {
		t.Error(e)
	}
	for _, h := range responseHeaders(doc, tpl, method, rec.Code) {
		if rec.Header().Get(h) == "" {
			t.Errorf("%s %s %d: documented header %s is missing", method, tpl, rec.Code, h)
		}
	}
}

// responseHeaders lists the headers documented for a response.
func responseHeaders(doc map[string]any, tpl, method string, status int) []string {
	op := doc["paths"].(map[string]any)[tpl].(map[string]any)[strings.ToLower(method)].(map[string]any)
	resp := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if r, ok := resp["$ref"].(string); ok {
		resp, _ = resolveRef(doc, r)
	}
	var out []string
	hs, _ := resp["headers"].(map[string]any)
	for h := range hs {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIAuthenticatedResponses runs the router behind httpx.Chain with
// the local-development verifier and a one-request-per-minute limit: a
// call with a minted token (200), the next one (429) and one without a
// token (401) match the document, headers included.
func TestOpenAPIAuthenticatedResponses(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)
	key, err := httpx.LoadOrCreateDevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := httpx.NewDevVerifier(key, fixedClock)
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := httpx.NewRateLimiter(nil, httpx.PerMinute(1, 1), nil, nil, zap.NewNop(), fixedClock)
	if err != nil {
		t.Fatal(err)
	}
	h := httpx.Chain(fs.router, httpx.Options{Log: zap.NewNop(), Protected: pgxapi.Protection, Verifier: verifier, Limiter: limiter})
	token, err := httpx.MintDevToken(key, "openapi-test", time.Hour, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	call := func(withToken bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(clopidogrelPM))
		req.Header.Set("Content-Type", "application/json")
		if withToken {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, step := range []struct {
		name       string
		withToken  bool
		wantStatus int
	}{{"token", true, 200}, {"over the limit", true, 429}, {"no token", false, 401}} {
		t.Run(step.name, func(t *testing.T) {
			rec := call(step.withToken)
			if rec.Code != step.wantStatus {
				t.Fatalf("status = %d, want %d: %s", rec.Code, step.wantStatus, rec.Body)
			}
			checkResponse(t, doc, "/pgx/check", http.MethodPost, rec)
		})
	}
}

// responseSchema finds paths[tpl][method].responses[status].content[ct].schema,
// following a $ref to components/responses.
func responseSchema(doc map[string]any, tpl, method string, status int, ct string) (map[string]any, error) {
	item, ok := doc["paths"].(map[string]any)[tpl].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document has no path %s", tpl)
	}
	op, ok := item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document has no %s %s", method, tpl)
	}
	resp, ok := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s does not document status %d", method, tpl, status)
	}
	if r, ok := resp["$ref"].(string); ok {
		var err error
		if resp, err = resolveRef(doc, r); err != nil {
			return nil, err
		}
	}
	media, ok := resp["content"].(map[string]any)[ct].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s status %d does not document content type %q", method, tpl, status, ct)
	}
	return media["schema"].(map[string]any), nil
}

func resolveRef(doc map[string]any, ref string) (map[string]any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local", ref)
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not an object", ref)
	}
	return m, nil
}

// validate checks v against the subset of JSON Schema (2020-12) the
// document uses: $ref, oneOf, allOf, type (one or a list; null included),
// const, enum, properties, required, additionalProperties (false or a
// schema), items, minimum, maximum, maxLength. Keywords outside that subset
// are reported, so that the walker cannot silently pass what it does not
// check.
func validate(doc, s map[string]any, v any, at string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	for k := range s {
		switch k {
		case "$ref", "oneOf", "allOf", "type", "const", "enum", "properties", "required", "additionalProperties",
			"items", "minimum", "maximum", "maxLength", "description", "format", "contentMediaType":
		default:
			fail("schema keyword %q is not checked by this walker", k)
		}
	}
	if r, ok := s["$ref"].(string); ok {
		target, err := resolveRef(doc, r)
		if err != nil {
			fail("%v", err)
			return errs
		}
		return append(errs, validate(doc, target, v, at)...)
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, validate(doc, sub.(map[string]any), v, at)...)
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		matched := 0
		var why []string
		for _, sub := range one {
			e := validate(doc, sub.(map[string]any), v, at)
			if len(e) == 0 {
				matched++
			} else {
				why = append(why, strings.Join(e, "; "))
			}
		}
		if matched != 1 {
			fail("matches %d of the oneOf schemas, want 1 (%s)", matched, strings.Join(why, " | "))
		}
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
			fail("%s is not of type %v", short(v), types)
			return errs
		}
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, v) {
		fail("%s is not the constant %v", short(v), c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return jsonEqual(x, v) }) {
		fail("%s is not one of %v", short(v), e)
	}
	if n, ok := v.(json.Number); ok {
		f, _ := new(big.Float).SetString(n.String())
		if lo, ok := s["minimum"].(json.Number); ok {
			l, _ := new(big.Float).SetString(lo.String())
			if f.Cmp(l) < 0 {
				fail("%s is below the minimum %s", n, lo)
			}
		}
		if hi, ok := s["maximum"].(json.Number); ok {
			h, _ := new(big.Float).SetString(hi.String())
			if f.Cmp(h) > 0 {
				fail("%s is above the maximum %s", n, hi)
			}
		}
	}
	if str, ok := v.(string); ok {
		if ml, ok := s["maxLength"].(json.Number); ok {
			if n, _ := ml.Int64(); int64(len([]rune(str))) > n {
				fail("%q is longer than %d", str, n)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("required field %q is missing", r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k]; ok {
				errs = append(errs, validate(doc, ps.(map[string]any), obj[k], at+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("field %q is not declared", k)
				}
			case map[string]any:
				errs = append(errs, validate(doc, ap, obj[k], at+"."+k)...)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				errs = append(errs, validate(doc, items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, _, err := big.ParseFloat(n.String(), 10, 200, big.ToNearestEven)
		return err == nil && f.IsInt()
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func jsonEqual(a, b any) bool {
	if na, ok := a.(json.Number); ok {
		nb, ok := b.(json.Number)
		if !ok {
			return false
		}
		fa, _ := new(big.Float).SetString(na.String())
		fb, _ := new(big.Float).SetString(nb.String())
		return fa != nil && fb != nil && fa.Cmp(fb) == 0
	}
	return cmp.Equal(a, b)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// TestOpenAPIValidatorRejects proves the walker fails what it should: an
// undeclared field, a missing required field and a wrong type, each in a
// check response.
func TestOpenAPIValidatorRejects(t *testing.T) {
	fs := newFullServer(t)
	doc := openAPIDoc(t, fs)
	schema, err := responseSchema(doc, "/pgx/check", "POST", 200, "application/json")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(clopidogrelPM))
	req.Header.Set("Content-Type", "application/json")
	fs.h.ServeHTTP(rec, req)
	for name, mutate := range map[string]func(m map[string]any){
		"undeclared field":        func(m map[string]any) { m["extra"] = "x" },
		"missing required":        func(m map[string]any) { delete(m, "audit_log_id") },
		"wrong type":              func(m map[string]any) { m["latency_ms"] = "fast" },
		"nested undeclared field": func(m map[string]any) { m["alerts"].([]any)[0].(map[string]any)["colour"] = "red" },
		"bad enum":                func(m map[string]any) { m["overall_severity"] = "SEVERE" },
	} {
		t.Run(name, func(t *testing.T) {
			v, err := decodeExact(rec.Body.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if errs := validate(doc, schema, v, "$"); len(errs) != 0 {
				t.Fatalf("the unmodified response fails: %v", errs)
			}
			mutate(v.(map[string]any))
			if errs := validate(doc, schema, v, "$"); len(errs) == 0 {
				t.Errorf("the walker accepted a response with a %s", name)
			}
		})
	}
}
