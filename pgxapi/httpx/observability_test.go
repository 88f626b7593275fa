package httpx_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// countingAppender is an audit.Appender test double that numbers entries.
type countingAppender struct{ n int }

func (c *countingAppender) Append(_ context.Context, e audit.Entry) (audit.Entry, error) {
	c.n++
	e.ID = "aud_TEST" + strings.Repeat("0", 21) + string(rune('0'+c.n))
	return e, nil
}

// TestAccessLogLine: one line per request with the route template, the
// status, the latency, the request id, the caller's subject hash and the
// audit id — and no token, path parameter, query or body.
func TestAccessLogLine(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	app := httpx.AuditIDs(&countingAppender{})
	r := httpx.NewRouter()
	r.Handle("/pgx/things/{patient}", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		n := 1
		if r.URL.Query().Get("two") != "" {
			n = 2
		}
		for range n {
			if _, err := app.Append(r.Context(), audit.Entry{Time: time.Now()}); err != nil {
				return err
			}
		}
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})).Methods(http.MethodPost)
	h := httpx.Chain(r, httpx.Options{Log: zap.New(core), Protected: testProtection, Verifier: fixedVerifier{issuer: "https://idp.test"}})

	for _, query := range []string{"", "?two=1"} {
		req := httptest.NewRequest(http.MethodPost, "/pgx/things/MRN-0012345"+query, strings.NewReader(`{"genotype":"*2/*2"}`))
		req.Header.Set("Authorization", "Bearer sub-alice")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	lines := logs.FilterMessage("http request").All()
	if len(lines) != 2 {
		t.Fatalf("%d access log lines, want 2", len(lines))
	}
	subject := httpx.SubjectHash(audit.Principal{Subject: "alice", Issuer: "https://idp.test"})
	for i, line := range lines {
		f := line.ContextMap()
		want := map[string]any{
			"method": "POST", "route": "/pgx/things/{patient}", "status": int64(200),
			"subject_hash": subject, "audit_id": "aud_TEST" + strings.Repeat("0", 21) + string(rune('1'+i)),
		}
		for k, v := range want {
			if f[k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, f[k], v)
			}
		}
		if f["request_id"] == "" || f["duration"] == nil {
			t.Errorf("line %d lacks request_id or duration: %v", i, f)
		}
		all := toString(f)
		for _, secret := range []string{"MRN-0012345", "sub-alice", "*2/*2", "two=1"} {
			if strings.Contains(all, secret) {
				t.Errorf("line %d holds %q: %s", i, secret, all)
			}
		}
	}
	if f := lines[1].ContextMap(); f["audit_entries"] != int64(2) {
		t.Errorf("second line: audit_entries = %v, want 2", f["audit_entries"])
	}
	if len(subject) != 16 {
		t.Errorf("subject hash %q is not 16 hex digits", subject)
	}
}

func TestMetrics(t *testing.T) {
	m := httpx.NewMetrics()
	m.SetKnowledge("kv-test", "sha256:abc")
	m.SetBuild("engine/1", "1.1.0")
	m.ObserveAuditCommit(7, 3*time.Millisecond, nil)
	m.ObserveAuditCommit(2, time.Second, errors.New("disk full"))
	m.AddPurged(5)
	r := httpx.NewRouter()
	r.Handle("/pgx/check", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	})).Methods(http.MethodPost)
	r.Handle("/metrics", m.Handler()).Methods(http.MethodGet)
	h := httpx.Chain(r, httpx.Options{Metrics: m, Protected: testProtection, Verifier: fixedVerifier{}})
	send(t, h, http.MethodPost, "/pgx/check", "alice")
	send(t, h, http.MethodPost, "/pgx/check", "")    // 401
	send(t, h, http.MethodGet, "/nowhere/12345", "") // 404

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"pgxsafety_http_request_duration_seconds", map[string]string{"route": "/pgx/check", "method": "POST", "status": "200"}, 1},
		{"pgxsafety_http_request_duration_seconds", map[string]string{"route": "/pgx/check", "method": "POST", "status": "401"}, 1},
		{"pgxsafety_http_request_duration_seconds", map[string]string{"route": "unmatched", "method": "GET", "status": "404"}, 1},
		{"pgxsafety_auth_failures_total", map[string]string{"reason": "invalid_token"}, 1},
		{"pgxsafety_audit_batch_entries", nil, 2},
		{"pgxsafety_audit_commit_duration_seconds", map[string]string{"result": "error"}, 1},
		{"pgxsafety_audit_commit_failures_total", nil, 1},
		{"pgxsafety_audit_purged_entries_total", nil, 5},
		{"pgxsafety_knowledge_info", map[string]string{"version": "kv-test", "digest": "sha256:abc"}, 1},
		{"pgxsafety_build_info", map[string]string{"engine_version": "engine/1", "api_version": "1.1.0"}, 1},
		{"pgxsafety_http_requests_in_flight", nil, 0},
	}
	for _, tc := range tests {
		if got := metricValue(t, m, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	rec := send(t, h, http.MethodGet, "/metrics", "")
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{"pgxsafety_http_request_duration_seconds_bucket", "pgxsafety_knowledge_info{", "go_goroutines", "pgxsafety_audit_batch_entries_sum 9"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// A nil *Metrics is a no-op.
	var none *httpx.Metrics
	none.ObserveAuditCommit(1, time.Millisecond, nil)
	none.SetKnowledge("x", "y")
}

func TestSecurityHeaders(t *testing.T) {
	r := httpx.NewRouter()
	r.Handle("/pgx/version", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	})).Methods(http.MethodGet)
	want := map[string]string{
		"X-Content-Type-Options":     "nosniff",
		"X-Frame-Options":            "DENY",
		"Content-Security-Policy":    "default-src 'none'; frame-ancestors 'none'",
		"Referrer-Policy":            "no-referrer",
		"Cross-Origin-Opener-Policy": "same-origin",
	}
	for _, hsts := range []bool{false, true} {
		h := httpx.Chain(r, httpx.Options{Protected: testProtection, Verifier: fixedVerifier{}, HSTS: hsts})
		for _, path := range []string{"/pgx/version", "/pgx/check", "/nowhere"} {
			rec := send(t, h, http.MethodGet, path, "")
			got := map[string]string{}
			for k := range want {
				got[k] = rec.Header().Get(k)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (status %d) headers (-want +got):\n%s", path, rec.Code, diff)
			}
			if hv := rec.Header().Get("Strict-Transport-Security"); (hv != "") != hsts {
				t.Errorf("HSTS %v: Strict-Transport-Security = %q", hsts, hv)
			}
			if rec.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header without a CORS configuration")
			}
		}
	}
}

func TestCORS(t *testing.T) {
	origins, err := httpx.ParseCORSOrigins(" https://app.example.org, http://localhost:3000 ")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://app.example.org", "http://localhost:3000"}, origins); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"*", "https://app.example.org/path", "app.example.org", "ftp://x.org", "https://u:p@x.org"} {
		if _, err := httpx.ParseCORSOrigins(bad); err == nil {
			t.Errorf("ParseCORSOrigins(%q) accepted", bad)
		}
	}
	r := httpx.NewRouter()
	r.Handle("/pgx/check", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	})).Methods(http.MethodPost)
	h := httpx.Chain(r, httpx.Options{Protected: testProtection, Verifier: fixedVerifier{}, CORS: httpx.CORS{AllowedOrigins: origins}})
	do := func(method, origin, sub string, preflight bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/pgx/check", nil)
		req.Header.Set("Origin", origin)
		if preflight {
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		}
		if sub != "" {
			req.Header.Set("Authorization", "Bearer sub-"+sub)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// Allowed origin: the preflight needs no token.
	rec := do(http.MethodOptions, "https://app.example.org", "", true)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	rec = do(http.MethodPost, "https://app.example.org", "alice", false)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.org" ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "RateLimit-Remaining") {
		t.Errorf("allowed request: %d %v", rec.Code, rec.Header())
	}
	// A 401 carries CORS headers too, so the page can read it.
	if rec := do(http.MethodPost, "https://app.example.org", "", false); rec.Code != 401 || rec.Header().Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("401 for an allowed origin: %d %v", rec.Code, rec.Header())
	}
	// Other origins get no CORS headers; their preflight is not answered.
	rec = do(http.MethodOptions, "https://evil.example.org", "", true)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Code == http.StatusNoContent {
		t.Errorf("preflight from another origin: %d %v", rec.Code, rec.Header())
	}
	if rec := do(http.MethodPost, "https://evil.example.org", "alice", false); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("request from another origin got CORS headers")
	}
}

func TestBodyCap(t *testing.T) {
	r := httpx.NewRouter()
	r.Handle("/upload", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if _, err := io.ReadAll(r.Body); err != nil {
			return &httpx.Error{Kind: httpx.KindTooLarge, Err: err}
		}
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	})).Methods(http.MethodPost)
	h := httpx.Chain(r, httpx.Options{MaxBodyBytes: 10})
	for body, want := range map[string]int{"short": 200, "much too long for the cap": 413} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/upload", strings.NewReader(body)))
		if rec.Code != want {
			t.Errorf("%q: %d, want %d", body, rec.Code, want)
		}
	}
}

// TestFeedbackAuditIDInAccessLog: the entry a feedback store appends for
// a post is named in the access-log line, as the service's entries are.
func TestFeedbackAuditIDInAccessLog(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	fs := httpx.FeedbackAuditIDs(audittest.NewMemory())
	var id string
	r := httpx.NewRouter()
	r.Handle("/feedback", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		e, err := fs.AppendFeedback(r.Context(), nil, func(int, int) (audit.Entry, error) { return audittest.Entry(1), nil })
		if err != nil {
			return err
		}
		id = e.ID
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	})).Methods(http.MethodPost)
	h := httpx.Chain(r, httpx.Options{Log: zap.New(core), Protected: testProtection, Verifier: fixedVerifier{issuer: "https://idp.test"}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/feedback", nil))
	lines := logs.FilterMessage("http request").All()
	if rec.Code != http.StatusOK || len(lines) != 1 || id == "" || lines[0].ContextMap()["audit_id"] != id {
		t.Errorf("status %d, %d lines, audit id %q: %+v", rec.Code, len(lines), id, lines)
	}
}
