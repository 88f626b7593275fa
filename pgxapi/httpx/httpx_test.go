package httpx_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

type body struct {
	Drug     string   `json:"drug"`
	Variants []string `json:"variants"`
	Patient  *struct {
		AgeYears *float64 `json:"age_years"`
	} `json:"patient"`
}

func serve(t *testing.T, h http.Handler, req *http.Request) (*httptest.ResponseRecorder, httpx.Problem) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var p httpx.Problem
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != httpx.ProblemContentType {
			t.Errorf("error response Content-Type = %q, want %q", ct, httpx.ProblemContentType)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("error body is not a problem: %v\n%s", err, rec.Body)
		}
		if p.Status != rec.Code {
			t.Errorf("problem status %d, response status %d", p.Status, rec.Code)
		}
		if p.Type == "" || p.Title == "" {
			t.Errorf("problem without type or title: %+v", p)
		}
	}
	return rec, p
}

func TestDecodeJSON(t *testing.T) {
	const limit = 64
	h := httpx.Wrap(httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		var b body
		if err := httpx.DecodeJSON(w, r, &b, limit); err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, b)
	}), zap.NewNop())

	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantParams  []httpx.Param
		wantDetail  string // substring
	}{
		{name: "ok", contentType: "application/json", body: `{"drug":"x"}`, wantStatus: 200},
		{name: "ok with charset and whitespace", contentType: "application/json; charset=UTF-8", body: " {\"drug\":\"x\"} \n", wantStatus: 200},
		{name: "text/plain", contentType: "text/plain", body: `{"drug":"x"}`, wantStatus: 415},
		{name: "no content type", body: `{"drug":"x"}`, wantStatus: 415},
		{name: "other charset", contentType: "application/json; charset=latin1", body: `{}`, wantStatus: 415},
		{name: "empty body", contentType: "application/json", body: "", wantStatus: 400, wantDetail: "empty"},
		{name: "syntax error", contentType: "application/json", body: `{"drug":}`, wantStatus: 400, wantDetail: "offset 9"},
		{name: "truncated", contentType: "application/json", body: `{"drug":"x"`, wantStatus: 400, wantDetail: "ends before"},
		{name: "unknown field", contentType: "application/json", body: `{"drug":"x","dose":5}`, wantStatus: 400,
			wantParams: []httpx.Param{{Name: "dose", Reason: "unknown field"}}},
		{name: "wrong type", contentType: "application/json", body: `{"drug":5}`, wantStatus: 400,
			wantParams: []httpx.Param{{Name: "drug", Reason: "must be a string, not number"}}},
		{name: "wrong nested type", contentType: "application/json", body: `{"patient":{"age_years":"old"}}`, wantStatus: 400,
			wantParams: []httpx.Param{{Name: "patient.age_years", Reason: "must be a number, not string"}}},
		{name: "not an object", contentType: "application/json", body: `["x"]`, wantStatus: 400, wantDetail: "must be an object"},
		{name: "two values", contentType: "application/json", body: `{"drug":"x"} {"drug":"y"}`, wantStatus: 400, wantDetail: "exactly one JSON value"},
		{name: "trailing garbage", contentType: "application/json", body: `{"drug":"x"} xyz`, wantStatus: 400, wantDetail: "exactly one JSON value"},
		{name: "too large", contentType: "application/json", body: `{"drug":"` + strings.Repeat("a", 100) + `"}`, wantStatus: 413, wantDetail: "64 bytes"},
		{name: "key differing only in case", contentType: "application/json", body: `{"drug":"x","Variants":["rs1"]}`, wantStatus: 400,
			wantParams: []httpx.Param{{Name: "Variants", Reason: `unknown key; did you mean "variants"?`}}},
		{name: "nested key differing only in case", contentType: "application/json", body: `{"patient":{"AGE_YEARS":4}}`, wantStatus: 400,
			wantParams: []httpx.Param{{Name: "patient.AGE_YEARS", Reason: `unknown key; did you mean "age_years"?`}}},
		{name: "too large after value", contentType: "application/json", body: `{"drug":"x"}` + strings.Repeat(" ", 100), wantStatus: 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec, p := serve(t, h, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantStatus >= 400 {
				if diff := cmp.Diff(tc.wantParams, p.InvalidParams); diff != "" {
					t.Errorf("invalid_params (-want +got):\n%s", diff)
				}
				if !strings.Contains(p.Detail, tc.wantDetail) {
					t.Errorf("detail %q does not contain %q", p.Detail, tc.wantDetail)
				}
				if p.RequestID == "" || p.RequestID != rec.Header().Get(httpx.RequestIDHeader) {
					t.Errorf("problem request_id %q, header %q", p.RequestID, rec.Header().Get(httpx.RequestIDHeader))
				}
			}
		})
	}
}

func TestErrorTable(t *testing.T) {
	secret := errors.New("pq: password authentication failed for user secretuser")
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantType   string
		wantDetail string
		wantParams []httpx.Param
	}{
		{
			name: "validation",
			err: fmt.Errorf("check: %w", &engine.ValidationError{Fields: []engine.FieldError{
				{Field: "variants[0]", Reason: "not an rsID"}, {Field: "zygosity.rs1", Reason: "must be het, hom or hemi"},
			}}),
			wantStatus: 422, wantType: httpx.TypeInvalidParams,
			wantDetail: "the request has invalid values; see invalid_params",
			wantParams: []httpx.Param{{Name: "variants[0]", Reason: "not an rsID"}, {Name: "zygosity.rs1", Reason: "must be het, hom or hemi"}},
		},
		{
			name: "bare ErrInvalid", err: fmt.Errorf("%w: drug is required", engine.ErrInvalid),
			wantStatus: 422, wantType: httpx.TypeInvalidParams, wantDetail: "invalid input: drug is required",
		},
		{
			name: "audit unavailable", err: fmt.Errorf("%w: %v", audit.ErrUnavailable, secret),
			wantStatus: 503, wantType: httpx.TypeAuditUnavailable, wantDetail: "audit log unavailable; no advice was given",
		},
		{
			name: "explicit", err: fmt.Errorf("wrapped: %w", &httpx.Error{Kind: httpx.KindForbidden, Detail: "busy"}),
			wantStatus: 403, wantType: httpx.TypeForbidden, wantDetail: "busy",
		},
		{
			name: "anything else", err: secret,
			wantStatus: 500, wantType: httpx.TypeInternal, wantDetail: "an internal error occurred; quote the request_id when reporting it",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			h := httpx.Wrap(httpx.Handle(func(http.ResponseWriter, *http.Request) error { return tc.err }), zap.New(core))
			rec, p := serve(t, h, httptest.NewRequest(http.MethodGet, "/x", nil))
			if rec.Code != tc.wantStatus || p.Type != tc.wantType || p.Detail != tc.wantDetail {
				t.Errorf("got %d %q %q, want %d %q %q", rec.Code, p.Type, p.Detail, tc.wantStatus, tc.wantType, tc.wantDetail)
			}
			if diff := cmp.Diff(tc.wantParams, p.InvalidParams); diff != "" {
				t.Errorf("invalid_params (-want +got):\n%s", diff)
			}
			if strings.Contains(rec.Body.String(), "secretuser") {
				t.Errorf("response leaks the internal error: %s", rec.Body)
			}
			if tc.wantStatus >= 500 {
				failed := logs.FilterMessage("request failed").All()
				if len(failed) != 1 {
					t.Fatalf("want the 5xx logged once, got %v", logs.All())
				}
				if cause := fmt.Sprint(failed[0].ContextMap()["error"]); !strings.Contains(cause, "secretuser") {
					t.Errorf("5xx log does not carry the cause: %q", cause)
				}
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	h := httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusCreated, map[string]string{"html": "<b>&</b>"})
	})
	rec, _ := serve(t, h, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusCreated || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("got %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if got, want := rec.Body.String(), "{\"html\":\"<b>&</b>\"}\n"; got != want {
		t.Errorf("body %q, want %q (no HTML escaping)", got, want)
	}

	// An encoding failure writes nothing of the body and becomes a 500.
	h = httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]any{"ok": 1, "bad": math.NaN()})
	})
	rec, p := serve(t, h, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusInternalServerError || p.Type != httpx.TypeInternal {
		t.Errorf("encode failure: got %d %+v", rec.Code, p)
	}
	if strings.Contains(rec.Body.String(), `"ok"`) {
		t.Errorf("half a body was written: %s", rec.Body)
	}
}

func TestRequestID(t *testing.T) {
	var seen string
	h := httpx.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = httpx.RequestID(r.Context())
		if httpx.StartTime(r.Context()).IsZero() {
			t.Error("no start time in context")
		}
	}), zap.NewNop())
	tests := []struct {
		in       string
		keep     bool
		generate bool
	}{
		{in: "abc-123_X.y", keep: true},
		{in: strings.Repeat("a", 128), keep: true},
		{in: strings.Repeat("a", 129), generate: true},
		{in: "has space", generate: true},
		{in: "semi;colon", generate: true},
		{in: "<script>", generate: true},
		{in: "", generate: true},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.in != "" {
			req.Header.Set(httpx.RequestIDHeader, tc.in)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(httpx.RequestIDHeader)
		if got != seen {
			t.Errorf("%q: header %q, context %q", tc.in, got, seen)
		}
		if tc.keep && got != tc.in {
			t.Errorf("%q: replaced by %q, want kept", tc.in, got)
		}
		if tc.generate && (got == tc.in || !strings.HasPrefix(got, "req_") || len(got) != 36) {
			t.Errorf("%q: got %q, want a generated req_ id", tc.in, got)
		}
	}
}

// TestNewRequestIDSortsByTime: generated ids lead with their millisecond
// time (so the audit log's request_id index grows at its right edge) and
// differ within one millisecond.
func TestNewRequestIDSortsByTime(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 19, 30, 0, 0, time.UTC)
	a, b := httpx.NewRequestID(t0), httpx.NewRequestID(t0)
	later := httpx.NewRequestID(t0.Add(time.Millisecond))
	if a == b {
		t.Errorf("two ids in one millisecond are equal: %q", a)
	}
	if !(a < later && b < later) {
		t.Errorf("ids %q, %q do not sort before the next millisecond's %q", a, b, later)
	}
	want := fmt.Sprintf("req_%012x", t0.UnixMilli())
	if !strings.HasPrefix(a, want) || len(a) != 36 {
		t.Errorf("id %q: want %s followed by 20 hex digits", a, want)
	}
	if _, err := hex.DecodeString(a[4:]); err != nil {
		t.Errorf("id %q is not hex: %v", a, err)
	}
}

func TestRecover(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h := httpx.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom: internal detail")
	}), zap.New(core))
	rec, p := serve(t, h, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusInternalServerError || p.Type != httpx.TypeInternal {
		t.Errorf("got %d %+v", rec.Code, p)
	}
	if strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("panic value leaked: %s", rec.Body)
	}
	if n := logs.FilterMessage("panic in handler").Len(); n != 1 {
		t.Errorf("panic logged %d times", n)
	}
	access := logs.FilterMessage("http request").All()
	if len(access) != 1 || access[0].ContextMap()["status"] != int64(500) {
		t.Errorf("access log after panic: %v", access)
	}
}

func TestAccessLogNeverLogsSecrets(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	h := httpx.Wrap(httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		var b body
		if err := httpx.DecodeJSON(w, r, &b, 1024); err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{"answer": "response-secret"})
	}), zap.New(core))
	req := httptest.NewRequest(http.MethodPost, "/pgx/check?token=query-secret", strings.NewReader(`{"drug":"body-secret"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer token-secret")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("want one access log line, got %v", entries)
	}
	fields := entries[0].ContextMap()
	want := map[string]any{
		// The raw path is not logged (it may hold patient data): the route
		// template is, and this handler is not behind a router.
		"method": "POST", "route": "unmatched", "status": int64(200),
		"bytes": int64(rec.Body.Len()), "request_id": rec.Header().Get(httpx.RequestIDHeader),
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("access log %s = %v, want %v", k, fields[k], v)
		}
	}
	if _, ok := fields["duration"]; !ok {
		t.Error("access log has no duration")
	}
	if _, ok := fields["path"]; ok {
		t.Error("access log has the raw path")
	}
	all := fmt.Sprint(fields)
	for _, s := range []string{"token-secret", "query-secret", "body-secret", "response-secret"} {
		if strings.Contains(all, s) {
			t.Errorf("access log contains %s: %v", s, fields)
		}
	}
}

func TestRouterNotFoundAndMethodNotAllowed(t *testing.T) {
	r := httpx.NewRouter()
	ok := func(w http.ResponseWriter, _ *http.Request) {}
	r.HandleFunc("/pgx/check", ok).Methods(http.MethodPost)
	r.HandleFunc("/pgx/version", ok).Methods(http.MethodGet)
	r.HandleFunc("/both", ok).Methods(http.MethodGet, http.MethodPut)
	h := httpx.Wrap(r, zap.NewNop())

	rec, p := serve(t, h, httptest.NewRequest(http.MethodGet, "/pgx/check", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" || p.Type != httpx.TypeMethodNotAllowed {
		t.Errorf("GET /pgx/check: %d Allow=%q %+v", rec.Code, rec.Header().Get("Allow"), p)
	}
	rec, _ = serve(t, h, httptest.NewRequest(http.MethodDelete, "/both", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, PUT" {
		t.Errorf("DELETE /both: %d Allow=%q", rec.Code, rec.Header().Get("Allow"))
	}
	rec, p = serve(t, h, httptest.NewRequest(http.MethodGet, "/nowhere", nil))
	if rec.Code != http.StatusNotFound || p.Type != httpx.TypeNotFound || p.RequestID == "" {
		t.Errorf("GET /nowhere: %d %+v", rec.Code, p)
	}
}

// TestDecodeJSONExtensibleCase: the extensible intake (CDS Hooks bodies)
// allows unknown members but refuses a key that differs from a known
// field only in case.
func TestDecodeJSONExtensibleCase(t *testing.T) {
	h := httpx.Wrap(httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		var b body
		if err := httpx.DecodeJSONExtensible(w, r, &b, 1024); err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, b)
	}), zap.NewNop())
	for in, want := range map[string]int{
		`{"drug":"x","extension":{"a":1}}`: 200,
		`{"drug":"x","DRUG":"y"}`:          400,
		`{"Drug":"x"}`:                     400,
	} {
		req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(in))
		req.Header.Set("Content-Type", "application/json")
		rec, p := serve(t, h, req)
		if rec.Code != want {
			t.Errorf("%s: status %d, want %d (%+v)", in, rec.Code, want, p)
		}
	}
}

// TestRequestLoggerCarriesRequestID: what a handler logs through Logger
// carries the request's id, however often it logs, and from concurrent
// goroutines of the request.
func TestRequestLoggerCarriesRequestID(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h := httpx.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				httpx.Logger(r.Context()).Info("from the handler")
			}()
		}
		wg.Wait()
		if first, again := httpx.Logger(r.Context()), httpx.Logger(r.Context()); first != again {
			t.Error("Logger returns a new logger on every call")
		}
	}), zap.New(core))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set(httpx.RequestIDHeader, "req-logged")
	h.ServeHTTP(httptest.NewRecorder(), req)
	lines := logs.FilterMessage("from the handler").All()
	if len(lines) != 4 {
		t.Fatalf("%d handler lines, want 4", len(lines))
	}
	for _, l := range lines {
		if got := l.ContextMap()["request_id"]; got != "req-logged" {
			t.Errorf("handler line request_id = %v, want req-logged", got)
		}
	}
}
