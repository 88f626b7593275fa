package cdshooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/internal/cdsvalidate"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// golden compares got with testdata/cds/golden/<name>.json (rewritten with
// -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	// The knowledge version changes with every data update; it is not
	// what these files pin.
	got = bytes.ReplaceAll(got, []byte(kb.Version.Label), []byte("<knowledge-version>"))
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	pretty := buf.Bytes()
	path := filepath.Join(testdataCD, "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if diff := cmp.Diff(string(want), string(pretty)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, diff)
	}
}

// TestDiscovery: GET /cds-services passes the validator and the golden.
func TestDiscovery(t *testing.T) {
	e := newEnv(t)
	rec := e.get("/cds-services")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if p := cdsvalidate.Discovery(rec.Body.Bytes(), cdsvalidate.Options{Strict: true}); len(p) > 0 {
		t.Fatalf("discovery fails the validator: %v", p)
	}
	golden(t, "discovery", rec.Body.Bytes())
}

// TestFixtures posts every request fixture (ours and the official hook
// examples, as published and repaired), checks every answer with the
// validator and compares it with its golden file.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataCD, "requests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	e := newEnv(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			rec := e.hook(readRequest(t, name))
			decodeResponse(t, rec)
			golden(t, name, rec.Body.Bytes())
		})
	}
}

func findCard(r cdshooks.Response, substr string) (cdshooks.Card, bool) {
	for _, c := range r.Cards {
		if strings.Contains(c.Summary, substr) {
			return c, true
		}
	}
	return cdshooks.Card{}, false
}

// TestClopidogrelPoorMetabolizer: a CYP2C19 *2/*2 Genotype Observation and
// a clopidogrel MedicationRequest (RxNorm) at order-select give a critical
// card replacing the order with prasugrel or ticagrelor; the same request
// without prefetch, against a fake FHIR server, gives the same card; with
// neither, 412.
func TestClopidogrelPoorMetabolizer(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	withPrefetch := decodeResponse(t, e.hook(body))
	card, ok := findCard(withPrefetch, "CYP2C19")
	if !ok || card.Indicator != cdshooks.IndicatorCritical {
		t.Fatalf("no critical CYP2C19 card: %+v", withPrefetch.Cards)
	}
	var labels []string
	for _, s := range card.Suggestions {
		labels = append(labels, s.Label)
		if len(s.Actions) != 2 || s.Actions[0].Type != "delete" || s.Actions[0].ResourceID != "MedicationRequest/draft-clopidogrel-1" ||
			s.Actions[1].Type != "create" || !bytes.Contains(s.Actions[1].Resource, []byte(`"MedicationRequest"`)) {
			t.Errorf("suggestion %q is not delete + create MedicationRequest: %+v", s.Label, s.Actions)
		}
	}
	if diff := cmp.Diff([]string{"Replace clopidogrel with prasugrel", "Replace clopidogrel with ticagrelor"}, labels); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
	if card.SelectionBehavior != "at-most-one" {
		t.Errorf("selectionBehavior = %q", card.SelectionBehavior)
	}

	// No prefetch: the fake FHIR server serves the same resources, paged.
	f := newFakeFHIR(t, prefetchOf(t, body))
	viaFHIR := decodeResponse(t, e.hook(withoutPrefetch(t, body, f)))
	if diff := cmp.Diff(withPrefetch.Cards, viaFHIR.Cards); diff != "" {
		t.Errorf("cards differ between prefetch and FHIR server (-prefetch +fhir):\n%s", diff)
	}
	pages := 0
	for _, q := range f.queries {
		if strings.Contains(q, "_page=") {
			pages++
		}
	}
	if pages == 0 {
		t.Errorf("the Observation search was not paged: %v", f.queries)
	}
	for _, a := range f.auth {
		if a != "Bearer fhir-access-token-123" {
			t.Errorf("FHIR server saw Authorization %q", a)
		}
	}

	// Neither prefetch nor FHIR server: 412 naming the keys.
	p := problemOf(t, e.hook(withoutPrefetch(t, body, nil)), http.StatusPreconditionFailed)
	if !strings.Contains(p.Detail, "patient") || !strings.Contains(p.Detail, "pgxObservations") {
		t.Errorf("412 detail = %q", p.Detail)
	}
}

// TestCarbamazepineHLA: an HLA-B*15:02 positive Genotype (with the IG's
// Therapeutic Implication) and carbamazepine → critical.
func TestCarbamazepineHLA(t *testing.T) {
	e := newEnv(t)
	r := decodeResponse(t, e.hook(readRequest(t, "order-select-carbamazepine-hla-b1502")))
	card, ok := findCard(r, "HLA-B")
	if !ok || card.Indicator != cdshooks.IndicatorCritical {
		t.Fatalf("no critical HLA-B card: %+v", r.Cards)
	}
	if !strings.Contains(card.Detail, "TherapeuticImplicationExample1") {
		t.Errorf("the lab's implication is not cited in the detail")
	}
	// Without its genotype the implication cannot be checked: a warning
	// card says so (and the HLA pre-test cards remain).
	r = decodeResponse(t, e.hook(readRequest(t, "order-select-carbamazepine-unresolved-implication")))
	if c, ok := findCard(r, "lab reports"); !ok || c.Indicator != cdshooks.IndicatorWarning {
		t.Errorf("no warning card for the unresolved implication: %+v", r.Cards)
	}
}

// TestNoPGxResults: a patient with no PGx results and clopidogrel → a
// card recommending a CYP2C19 test with a ServiceRequest suggestion.
func TestNoPGxResults(t *testing.T) {
	e := newEnv(t)
	r := decodeResponse(t, e.hook(readRequest(t, "order-select-clopidogrel-no-pgx-results")))
	card, ok := findCard(r, "CYP2C19")
	if !ok || (card.Indicator != cdshooks.IndicatorInfo && card.Indicator != cdshooks.IndicatorWarning) {
		t.Fatalf("no info/warning CYP2C19 card: %+v", r.Cards)
	}
	if len(card.Suggestions) != 1 || !card.Suggestions[0].IsRecommended || len(card.Suggestions[0].Actions) != 1 ||
		!bytes.Contains(card.Suggestions[0].Actions[0].Resource, []byte(`"ServiceRequest"`)) {
		t.Errorf("no recommended ServiceRequest suggestion: %+v", card.Suggestions)
	}
}

// TestOrderSignDeduplication: order-sign does not repeat a card the EHR
// says it showed at order-select (extension org.pgxsafety.shown-cards);
// without that extension it repeats it.
func TestOrderSignDeduplication(t *testing.T) {
	e := newEnv(t)
	sel := decodeResponse(t, e.hook(readRequest(t, "order-select-clopidogrel-cyp2c19-pm")))
	crit, _ := findCard(sel, "CYP2C19")
	sign := readRequest(t, "order-sign-clopidogrel-cyp2c19-pm")
	again := decodeResponse(t, e.hook(sign))
	if c, ok := findCard(again, "CYP2C19"); !ok || c.UUID != crit.UUID {
		t.Fatalf("order-sign without context does not repeat the identical card (uuid %s): %+v", crit.UUID, again.Cards)
	}
	shown := editJSON(t, sign, func(m map[string]any) {
		m["extension"] = map[string]any{cdshooks.ExtensionShownCards: []string{crit.UUID}}
	})
	deduped := decodeResponse(t, e.hook(shown))
	for _, c := range deduped.Cards {
		if c.UUID == crit.UUID {
			t.Errorf("order-sign repeated card %s already shown", crit.UUID)
		}
	}
	if len(deduped.Cards) != len(again.Cards)-1 {
		t.Errorf("dedup removed %d cards, want 1", len(again.Cards)-len(deduped.Cards))
	}
}

// TestDegradedInput: a bad genomic entry, a draft order naming no
// medication and an OperationOutcome prefetch do not drop the good data:
// the critical card still comes, with a warning card about the genomic
// result and an info card about the order.
func TestDegradedInput(t *testing.T) {
	e := newEnv(t)
	r := decodeResponse(t, e.hook(readRequest(t, "order-sign-degraded-input")))
	want := map[string]string{
		"CYP2C19":                                cdshooks.IndicatorCritical,
		"Some genomic results could not be used": cdshooks.IndicatorWarning,
		"was not checked":                        cdshooks.IndicatorInfo,
	}
	for sub, ind := range want {
		if c, ok := findCard(r, sub); !ok || c.Indicator != ind {
			t.Errorf("no %s card with %q: %+v", ind, sub, r.Cards)
		}
	}
}

// TestFHIRServerFailure: a FHIR server that fails (an error status, a
// refusal, or no server listening at all) makes the genomic data
// unavailable: the call answers, a warning card says the results could not
// be fetched from the EHR and that the order was not checked against them,
// and the pre-test card says a result may exist without recommending a
// test (checkUnretrievedPreTest). No card quotes the failure as raised
// (status, the server's text, "dial tcp …"): it is in the audit entry.
func TestFHIRServerFailure(t *testing.T) {
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	tests := []struct {
		name  string
		setup func(f *fakeFHIR)
		shown string // the card's words for the failure
		audit string // in the audit entry
	}{
		{"500 on the genomic search", func(f *fakeFHIR) { f.fail["Observation"] = http.StatusInternalServerError },
			"the EHR's FHIR server answered with an error", "FHIR server answered 500"},
		{"403 on the genomic search", func(f *fakeFHIR) { f.fail["Observation"] = http.StatusForbidden },
			"the EHR's FHIR server refused pgxsafety's access", "FHIR server answered 403"},
		{"server down", func(f *fakeFHIR) { f.srv.Close() },
			"the EHR's FHIR server could not be reached or its answer could not be read", "connect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := newFakeFHIR(t, prefetchOf(t, body))
			tc.setup(f)
			r := decodeResponse(t, e.hook(withoutPrefetch(t, body, f)))
			c, ok := findCard(r, genomicsNotFetched)
			if !ok || c.Indicator != cdshooks.IndicatorWarning || !strings.Contains(c.Detail, tc.shown) {
				t.Errorf("no warning card saying %q: %+v", tc.shown, r.Cards)
			}
			checkUnretrievedPreTest(t, r)
			assertNoInternals(t, r, "dial tcp", "connection refused", "127.0.0.1", "search failed", "answered 500", "answered 403", "fhir-access-token-123")
			entries := e.auditEntries()
			if len(entries) != 1 || !bytes.Contains(entries[0].Request, []byte(tc.audit)) {
				t.Errorf("the audit entry does not record the failure %q", tc.audit)
			}
			if bytes.Contains(entries[0].Request, []byte("fhir-access-token-123")) {
				t.Error("the audit entry holds the FHIR access token")
			}
		})
	}
}

// assertNoInternals fails when the text of any card (summary, detail)
// holds one of the strings.
func assertNoInternals(t *testing.T, r cdshooks.Response, internals ...string) {
	t.Helper()
	for _, c := range r.Cards {
		for _, s := range internals {
			if strings.Contains(c.Summary, s) || strings.Contains(c.Detail, s) {
				t.Errorf("card %q holds %q", c.Summary, s)
			}
		}
	}
}

// TestHookRequestErrors: the envelope rules (400), unknown service (404),
// media type (415), size (413).
func TestHookRequestErrors(t *testing.T) {
	e := newEnv(t)
	good := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	tests := []struct {
		name   string
		path   string
		body   []byte
		status int
		param  string
	}{
		{"hook of another service", "/cds-services/pgx-order-sign", good, 400, "hook"},
		{"no hookInstance", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) { delete(m, "hookInstance") }), 400, "hookInstance"},
		{"no context", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) { delete(m, "context") }), 400, "context"},
		{"no patientId", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) {
			delete(m["context"].(map[string]any), "patientId")
		}), 400, "context.patientId"},
		{"no selections", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) {
			delete(m["context"].(map[string]any), "selections")
		}), 400, "context.selections"},
		{"draftOrders not an object", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) {
			m["context"].(map[string]any)["draftOrders"] = []any{}
		}), 400, "context.draftOrders"},
		{"hookInstance of the wrong type", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) { m["hookInstance"] = 7 }), 400, "hookInstance"},
		{"fhirAuthorization without fhirServer", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) {
			m["fhirAuthorization"] = map[string]any{"access_token": "x", "token_type": "Bearer"}
		}), 400, "fhirServer"},
		{"plain-http fhirServer", "/cds-services/pgx-order-select", editJSON(t, good, func(m map[string]any) { m["fhirServer"] = "http://ehr.example/fhir" }), 400, "fhirServer"},
		{"unknown service", "/cds-services/nope", good, 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, e.post(tc.path, tc.body, &token{}), tc.status)
			if tc.param == "" {
				return
			}
			for _, ip := range p.InvalidParams {
				if ip.Name == tc.param {
					return
				}
			}
			t.Errorf("invalid_params %+v does not name %s", p.InvalidParams, tc.param)
		})
	}
	// Unknown keys and extensions are accepted.
	ext := editJSON(t, good, func(m map[string]any) {
		m["extension"] = map[string]any{"com.example.x": 1}
		m["someFutureKey"] = true
	})
	decodeResponse(t, e.hook(ext))

	req := e.post("/cds-services/pgx-order-select", []byte("{"), &token{})
	problemOf(t, req, 400)
	plain := httptest.NewRequest(http.MethodPost, "/cds-services/pgx-order-select", bytes.NewReader(good))
	plain.Header.Set("Content-Type", "text/plain")
	plain.Header.Set("Authorization", "Bearer "+(&token{}).sign(t, "/cds-services/pgx-order-select"))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, plain)
	problemOf(t, rec, http.StatusUnsupportedMediaType)
	big := bytes.Repeat([]byte(" "), cdshooks.HookBodyLimit+1)
	problemOf(t, e.post("/cds-services/pgx-order-select", big, &token{}), 413)
}

// TestHookAuditedBeforeAnswer: every answer has an audit entry (endpoint
// names the service, the FHIR access token is not stored); with the audit
// log down the answer is 503 and no card leaves.
func TestHookAuditedBeforeAnswer(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	f := newFakeFHIR(t, prefetchOf(t, body))
	rec := e.hook(withoutPrefetch(t, body, f))
	decodeResponse(t, rec)
	entries := e.auditEntries()
	if len(entries) != 1 || entries[0].Endpoint != "POST /cds-services/pgx-order-select" || entries[0].ID != rec.Header().Get("X-Audit-Log-ID") {
		t.Fatalf("audit entries: %+v", entries)
	}
	if bytes.Contains(entries[0].Request, []byte("fhir-access-token-123")) {
		t.Error("the FHIR access token was written to the audit log")
	}
	if entries[0].Principal.Issuer != specIssuer {
		t.Errorf("principal = %+v", entries[0].Principal)
	}

	down := newEnvWith(t, t.TempDir(), failingAppender{})
	p := problemOf(t, down.hook(body), http.StatusServiceUnavailable)
	if strings.Contains(p.Detail, "disk full") {
		t.Errorf("503 leaks the cause: %q", p.Detail)
	}
}

// TestPrefetchKeyStates: each prefetch key is present, null, an
// OperationOutcome or absent, independently of the others.
func TestPrefetchKeyStates(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	f := newFakeFHIR(t, prefetchOf(t, body))
	setKey := func(key string, v any, server bool) []byte {
		return editJSON(t, body, func(m map[string]any) {
			p := m["prefetch"].(map[string]any)
			if _, ok := p["conditions"]; !ok {
				p["conditions"] = nil // the EHR has none: not queried
			}
			if v == "absent" {
				delete(p, key)
			} else {
				p[key] = v
			}
			if server {
				m["fhirServer"] = f.srv.URL + "/fhir"
				m["fhirAuthorization"] = map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 300, "scope": "patient/*.read", "subject": "s"}
			}
		})
	}
	outcome := map[string]any{"resourceType": "OperationOutcome", "issue": []any{map[string]any{"severity": "error", "code": "timeout", "diagnostics": "genomics search timed out"}}}

	// An OperationOutcome and no server: the data is unavailable, the call answers.
	r := decodeResponse(t, e.hook(setKey("pgxObservations", outcome, false)))
	// The EHR's own error text goes to the log and the audit entry, not to
	// a card.
	if c, ok := findCard(r, genomicsNotFetched); !ok || !strings.Contains(c.Detail, "the EHR sent an error in place of them") {
		t.Errorf("OperationOutcome: no warning card saying so: %+v", r.Cards)
	}
	assertNoInternals(t, r, "genomics search timed out", "OperationOutcome")
	checkUnretrievedPreTest(t, r)

	// Null: no data; the pre-test card says none was found.
	r = decodeResponse(t, e.hook(setKey("pgxObservations", nil, false)))
	if c, ok := findCard(r, "no CYP2C19 result available"); !ok || !strings.Contains(c.Detail, "No genomic results") {
		t.Errorf("null: %+v", r.Cards)
	}

	// Absent with a server: only that key is queried.
	f.mu.Lock()
	f.queries = nil
	f.mu.Unlock()
	r = decodeResponse(t, e.hook(setKey("pgxObservations", "absent", true)))
	if c, ok := findCard(r, "CYP2C19 Poor Metabolizer"); !ok || c.Indicator != cdshooks.IndicatorCritical {
		t.Errorf("absent + server: %+v", r.Cards)
	}
	f.mu.Lock()
	queries := append([]string(nil), f.queries...)
	f.mu.Unlock()
	for _, q := range queries {
		if !strings.HasPrefix(q, "/fhir/Observation") {
			t.Errorf("queried %s although its prefetch was sent", q)
		}
	}

	// An OperationOutcome with a server: the server is asked instead.
	r = decodeResponse(t, e.hook(setKey("pgxObservations", outcome, true)))
	if _, ok := findCard(r, "CYP2C19 Poor Metabolizer"); !ok {
		t.Errorf("OperationOutcome + server: %+v", r.Cards)
	}

	// Patient absent, no server: 412 naming patient only.
	p := problemOf(t, e.hook(setKey("patient", "absent", false)), http.StatusPreconditionFailed)
	if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != "prefetch.patient" {
		t.Errorf("412 params = %+v", p.InvalidParams)
	}
}

// TestHookDuplicateKeyRefused: the CDS surface uses the one JSON intake of
// httpx, whose duplicate-key guard keeps the audited request unambiguous;
// unknown members (extensions) are still accepted.
func TestHookDuplicateKeyRefused(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	dup := append([]byte(`{"hook":"order-select",`), body[bytes.IndexByte(body, '{')+1:]...)
	p := problemOf(t, e.post(selectPath, dup, &token{}), http.StatusBadRequest)
	if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != "hook" {
		t.Errorf("invalid_params = %+v, want the duplicate key hook", p.InvalidParams)
	}
	ext := append([]byte(`{"extension":{"com.example":1},`), body[bytes.IndexByte(body, '{')+1:]...)
	decodeResponse(t, e.post(selectPath, ext, &token{}))
}

// flakyAppender fails while down is set (the audit log unavailable) and
// appends to the real store otherwise.
type flakyAppender struct {
	store *audittest.Memory
	down  *atomic.Bool
}

func (f flakyAppender) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if f.down.Load() {
		return audit.Entry{}, fmt.Errorf("%w: disk full", audit.ErrUnavailable)
	}
	return f.store.Append(ctx, e)
}

// TestJTISpentOnlyWhenAnswered: a hook call refused with 503 (audit log
// down) gave no answer, so its token's jti is released and the EHR's retry
// with the same token is answered; once answered, the token is spent. A
// call refused with 4xx (a malformed body) is an answer: its token stays
// spent.
func TestJTISpentOnlyWhenAnswered(t *testing.T) {
	dir := t.TempDir()
	store := audittest.NewMemory()
	down := &atomic.Bool{}
	e := newEnvWith(t, dir, flakyAppender{store: store, down: down})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	path := "/cds-services/" + serviceFor(t, body)
	tok := token{}.sign(t, path)
	call := func(b []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	down.Store(true)
	problemOf(t, call(body), http.StatusServiceUnavailable)
	down.Store(false)
	decodeResponse(t, call(body)) // the retry with the same token is answered
	problemOf(t, call(body), http.StatusUnauthorized)

	tok = token{}.sign(t, path)
	problemOf(t, call([]byte(`{"hook":`)), http.StatusBadRequest)
	problemOf(t, call(body), http.StatusUnauthorized)
}
