package cdshooks_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/internal/cdsvalidate"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/cds/golden")

// fixedNow is the service clock of every test; tokens are minted against it.
var fixedNow = time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

const (
	publicURL = "https://cds.example.org"
	// specIssuer is the iss of the CDS Hooks 2.0.1 JWT example.
	specIssuer = "https://fhir-ehr.example.com/"
	specKid    = "example-kid"
)

var (
	kb         *evaluate.Engine
	specKey    jwk.Key // the spec's published ES384 private key (tests only)
	testdataCD = filepath.Join("..", "testdata", "cds")
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	kb, err = knowledge.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := os.ReadFile(filepath.Join(testdataCD, "spec", "spec-2.0.1_jwk-private-SPEC-EXAMPLE-ONLY.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	specKey, err = jwk.ParseKey(b)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// env is one CDS server under test: the real router over the real
// knowledge and an in-memory audit log and feedback store (the storage is
// tested by engine/audit's conformance suite).
type env struct {
	t      testing.TB
	h      http.Handler
	store  *audittest.Memory
	server *cdshooks.Server
}

type envOption func(*cdshooks.Config, *[]cdshooks.TrustedClient)

// newEnv builds a server trusting the spec's example client (its public
// JWKS as a file).
func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	return newEnvWith(t, t.TempDir(), audittest.NewMemory(), opts...)
}

// newEnvWith builds a server auditing to app; app is also the feedback
// store when it is one (an audittest.Memory), else the feedback store is
// a fresh in-memory one.
func newEnvWith(t testing.TB, dir string, app audit.Appender, opts ...envOption) *env {
	t.Helper()
	clients := []cdshooks.TrustedClient{{
		Iss:      specIssuer,
		JWKSFile: filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json"),
	}}
	feedback, ok := app.(service.FeedbackStore)
	if !ok {
		feedback = audittest.NewMemory()
	}
	cfg := cdshooks.Config{PublicURL: publicURL, Feedback: feedback, ListenAddr: "127.0.0.1:0"}
	for _, o := range opts {
		o(&cfg, &clients)
	}
	if len(clients) > 0 {
		b, _ := json.Marshal(clients)
		cfg.ClientsFile = filepath.Join(dir, "clients.json")
		if err := os.WriteFile(cfg.ClientsFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	svc := service.New(kb, nil, app, fixedClock)
	srv, err := cdshooks.New(svc, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	r := httpx.NewRouter()
	srv.Register(r)
	e := &env{t: t, h: httpx.Wrap(r, zap.NewNop()), server: srv}
	if m, ok := app.(*audittest.Memory); ok {
		e.store = m
	}
	return e
}

// token describes a CDS client JWT; zero fields take valid defaults.
type token struct {
	alg      jwa.SignatureAlgorithm
	key      any // signing key; specKey by default
	header   map[string]any
	claims   map[string]any
	drop     []string // claims to remove
	dropHdr  []string // header fields to remove
	audPath  string   // path for aud (default: the path called)
	rawToken string   // used as is when set
}

func newJTI() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sign mints the token for a call to path.
func (tk token) sign(t testing.TB, path string) string {
	t.Helper()
	if tk.rawToken != "" {
		return tk.rawToken
	}
	alg := tk.alg
	if alg == "" {
		alg = jwa.ES384
	}
	aud := publicURL + path
	if tk.audPath != "" {
		aud = publicURL + tk.audPath
	}
	cl := map[string]any{
		"iss": specIssuer, "aud": aud,
		"iat": fixedNow.Add(-10 * time.Second).Unix(), "exp": fixedNow.Add(4 * time.Minute).Unix(),
		"jti": newJTI(),
	}
	for k, v := range tk.claims {
		cl[k] = v
	}
	for _, k := range tk.drop {
		delete(cl, k)
	}
	payload, _ := json.Marshal(cl)
	hdr := jws.NewHeaders()
	_ = hdr.Set("typ", "JWT")
	_ = hdr.Set("kid", specKid)
	for k, v := range tk.header {
		_ = hdr.Set(k, v)
	}
	for _, k := range tk.dropHdr {
		_ = hdr.Remove(k)
	}
	key := tk.key
	if key == nil {
		// The raw key: a jwk.Key would put its own kid in the header.
		var raw any
		if err := specKey.Raw(&raw); err != nil {
			t.Fatal(err)
		}
		key = raw
	}
	signed, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return string(signed)
}

// post sends a JSON body to path with the token (no Authorization header
// when tok is nil).
func (e *env) post(path string, body []byte, tok *token) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if tok != nil {
		req.Header.Set("Authorization", "Bearer "+tok.sign(e.t, path))
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

func (e *env) get(path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// hook posts a hook request to its service with a valid token.
func (e *env) hook(body []byte) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.post("/cds-services/"+serviceFor(e.t, body), body, &token{})
}

func serviceFor(t testing.TB, body []byte) string {
	var h struct {
		Hook string `json:"hook"`
	}
	_ = json.Unmarshal(body, &h)
	switch h.Hook {
	case "order-select":
		return cdshooks.ServiceOrderSelect
	case "order-sign":
		return cdshooks.ServiceOrderSign
	}
	t.Fatalf("fixture has hook %q", h.Hook)
	return ""
}

// readRequest reads testdata/cds/requests/<name>.json.
func readRequest(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataCD, "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editJSON decodes raw, applies fn and encodes it again.
func editJSON(t testing.TB, raw []byte, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeResponse(t testing.TB, rec *httptest.ResponseRecorder) cdshooks.Response {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if p := cdsvalidate.Response(rec.Body.Bytes(), cdsvalidate.Options{Strict: true}); len(p) > 0 {
		t.Fatalf("response fails the CDS Hooks validator:\n%s\n%s", strings.Join(p, "\n"), rec.Body)
	}
	var r cdshooks.Response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func problemOf(t testing.TB, rec *httptest.ResponseRecorder, status int) httpx.Problem {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d: %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != httpx.ProblemContentType {
		t.Errorf("Content-Type = %q", ct)
	}
	var p httpx.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// auditEntries returns the audit entries of the store.
func (e *env) auditEntries() []audit.Entry {
	e.t.Helper()
	var out []audit.Entry
	if err := e.store.Entries(context.Background(), 0, func(en audit.Entry) error {
		out = append(out, en)
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// failingAppender refuses every append (audit log down).
type failingAppender struct{}

func (failingAppender) Append(context.Context, audit.Entry) (audit.Entry, error) {
	return audit.Entry{}, errors.New("disk full")
}

// fakeFHIR is a FHIR server double for the no-prefetch path: it serves the
// resources of a request fixture's prefetch, pages searches two entries at
// a time, and records the Authorization headers it saw.
type fakeFHIR struct {
	srv     *httptest.Server
	mu      sync.Mutex
	auth    []string
	queries []string
	fail    map[string]int // resource type → status to answer
}

func newFakeFHIR(t testing.TB, prefetch map[string]json.RawMessage) *fakeFHIR {
	f := &fakeFHIR{fail: map[string]int{}}
	var patient json.RawMessage = prefetch["patient"]
	entries := func(key string) []json.RawMessage {
		var b struct {
			Entry []struct {
				Resource json.RawMessage `json:"resource"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(prefetch[key], &b)
		var out []json.RawMessage
		for _, e := range b.Entry {
			out = append(out, e.Resource)
		}
		return out
	}
	searches := map[string][]json.RawMessage{
		"Observation":       entries("pgxObservations"),
		"MedicationRequest": entries("activeMedications"),
	}
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, status int, body []byte) {
		w.Header().Set("Content-Type", "application/fhir+json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
	mux.HandleFunc("GET /fhir/Patient/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		if st := f.failing("Patient"); st != 0 {
			write(w, st, []byte(`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"forbidden"}]}`))
			return
		}
		write(w, 200, patient)
	})
	mux.HandleFunc("GET /fhir/{type}", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		typ := r.PathValue("type")
		if st := f.failing(typ); st != 0 {
			write(w, st, []byte(`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"exception","diagnostics":"search failed"}]}`))
			return
		}
		all := searches[typ]
		page := 0
		fmt.Sscan(r.URL.Query().Get("_page"), &page)
		const per = 2
		lo, hi := page*per, min(page*per+per, len(all))
		if lo > len(all) {
			lo = len(all)
		}
		b := map[string]any{"resourceType": "Bundle", "type": "searchset", "total": len(all)}
		var es []any
		for _, res := range all[lo:hi] {
			es = append(es, map[string]any{"resource": res})
		}
		b["entry"] = es
		if hi < len(all) {
			q := r.URL.Query()
			q.Set("_page", fmt.Sprint(page+1))
			b["link"] = []any{map[string]any{"relation": "next", "url": f.srv.URL + r.URL.Path + "?" + q.Encode()}}
		}
		body, _ := json.Marshal(b)
		write(w, 200, body)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeFHIR) record(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.queries = append(f.queries, r.URL.Path+"?"+r.URL.RawQuery)
}

func (f *fakeFHIR) failing(typ string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail[typ]
}

// withoutPrefetch turns a fixture into a request that names the fake FHIR
// server instead of sending the prefetch.
func withoutPrefetch(t testing.TB, body []byte, f *fakeFHIR) []byte {
	return editJSON(t, body, func(m map[string]any) {
		delete(m, "prefetch")
		if f != nil {
			m["fhirServer"] = f.srv.URL + "/fhir"
			m["fhirAuthorization"] = map[string]any{
				"access_token": "fhir-access-token-123", "token_type": "Bearer", "expires_in": 300,
				"scope": "patient/Patient.read patient/Observation.read patient/MedicationRequest.read", "subject": "pgxsafety",
			}
		}
	})
}

func prefetchOf(t testing.TB, body []byte) map[string]json.RawMessage {
	var r struct {
		Prefetch map[string]json.RawMessage `json:"prefetch"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r.Prefetch
}
