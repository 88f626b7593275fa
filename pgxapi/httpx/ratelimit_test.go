package httpx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// fixedVerifier accepts any token "sub:<subject>" (a test double: the
// rate-limit tests are not about tokens).
type fixedVerifier struct{ issuer string }

func (f fixedVerifier) Verify(_ context.Context, tok string) (audit.Principal, error) {
	sub, ok := strings.CutPrefix(tok, "sub-")
	if !ok {
		return audit.Principal{}, &httpx.TokenError{Reason: "test verifier"}
	}
	return audit.Principal{Subject: sub, Issuer: f.issuer}, nil
}

// limitedServer is Chain with a limiter over a router whose POST
// /pgx/batch charges one unit per started 100 rows (?rows=N), as the
// batch endpoints are documented to.
func limitedServer(l *httpx.RateLimiter, m *httpx.Metrics) http.Handler {
	r := httpx.NewRouter()
	r.Handle("/pgx/check", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})).Methods(http.MethodPost)
	r.Handle("/pgx/batch", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		rows, _ := strconv.Atoi(r.URL.Query().Get("rows"))
		if err := httpx.RateLimitCost(r, (rows+99)/100); err != nil {
			return err
		}
		return httpx.WriteJSON(w, http.StatusOK, map[string]int{"rows": rows})
	})).Methods(http.MethodPost)
	r.Handle("/pgx/version", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})).Methods(http.MethodGet)
	return httpx.Chain(r, httpx.Options{Protected: testProtection, Verifier: fixedVerifier{issuer: "https://idp.test"}, Limiter: l, Metrics: m})
}

func send(t *testing.T, h http.Handler, method, path, sub string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if sub != "" {
		req.Header.Set("Authorization", "Bearer sub-"+sub)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func rateHeaders(rec *httptest.ResponseRecorder) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "Retry-After"} {
		if v := rec.Header().Get(k); v != "" {
			out[k] = v
		}
		if n := len(rec.Header().Values(k)); n > 1 {
			out[k] += " (repeated)"
		}
	}
	return out
}

// TestSixtyFirstRequestIsRefused: with the default 60 per minute, 60
// requests in a burst pass and the 61st gets 429 with Retry-After and the
// RateLimit headers; a second later one more passes; budgets are per
// (issuer, subject).
func TestSixtyFirstRequestIsRefused(t *testing.T) {
	c := newClock()
	m := httpx.NewMetrics()
	l, err := httpx.NewRateLimiter(nil, httpx.PerMinute(60, 0), nil, m, zap.NewNop(), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := limitedServer(l, m)
	for i := 1; i <= 60; i++ {
		rec := send(t, h, http.MethodPost, "/pgx/check", "alice")
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: status %d", i, rec.Code)
		}
		if got, want := rec.Header().Get("RateLimit-Remaining"), strconv.Itoa(60-i); got != want {
			t.Fatalf("request %d: RateLimit-Remaining %s, want %s", i, got, want)
		}
	}
	rec := send(t, h, http.MethodPost, "/pgx/check", "alice")
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("61st request: status %d, want 429", rec.Code)
	}
	var p httpx.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Type != httpx.TypeRateLimited || p.Status != 429 {
		t.Errorf("429 body = %s", rec.Body)
	}
	want := map[string]string{
		"RateLimit-Limit":     "60",
		"RateLimit-Remaining": "0",
		"RateLimit-Reset":     "60",
		"RateLimit-Policy":    "60;w=60;burst=60",
		"Retry-After":         "1",
	}
	if diff := cmp.Diff(want, rateHeaders(rec)); diff != "" {
		t.Errorf("429 headers (-want +got):\n%s", diff)
	}
	if got := metricValue(t, m, "pgxsafety_rate_limit_rejections_total", nil); got != 1 {
		t.Errorf("rejections metric = %v", got)
	}

	// Another caller, or the same subject of another issuer, has its own
	// budget; the public endpoints are not limited.
	if rec := send(t, h, http.MethodPost, "/pgx/check", "bob"); rec.Code != http.StatusOK {
		t.Errorf("bob: %d", rec.Code)
	}
	if rec := send(t, h, http.MethodGet, "/pgx/version", ""); rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Limit") != "" {
		t.Errorf("public endpoint: %d, RateLimit-Limit %q", rec.Code, rec.Header().Get("RateLimit-Limit"))
	}

	// One second later one more request fits, not two.
	c.Advance(time.Second)
	if rec := send(t, h, http.MethodPost, "/pgx/check", "alice"); rec.Code != http.StatusOK {
		t.Errorf("after 1 s: %d", rec.Code)
	}
	if rec := send(t, h, http.MethodPost, "/pgx/check", "alice"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("second request after 1 s: %d, want 429", rec.Code)
	}
	// A minute later the whole budget is back.
	c.Advance(time.Minute)
	for i := range 60 {
		if rec := send(t, h, http.MethodPost, "/pgx/check", "alice"); rec.Code != http.StatusOK {
			t.Fatalf("after a minute, request %d: %d", i+1, rec.Code)
		}
	}
}

func TestRateLimitOverrides(t *testing.T) {
	file := filepath.Join(t.TempDir(), "limits.json")
	doc := `{"overrides": [
  {"subject": "lab-pilot", "per_minute": 600, "burst": 120, "note": "lab API pilot, contract LP-1"},
  {"issuer": "https://other.idp", "subject": "alice", "per_minute": 5}
]}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ov, err := httpx.LoadRateOverrides(file)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	l, err := httpx.NewRateLimiter(nil, httpx.PerMinute(60, 0), ov, nil, nil, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		p    audit.Principal
		want httpx.Limit
	}{
		{audit.Principal{Subject: "lab-pilot", Issuer: "https://idp.test"}, httpx.Limit{Rate: 600, Period: time.Minute, Burst: 120}},
		{audit.Principal{Subject: "alice", Issuer: "https://other.idp"}, httpx.Limit{Rate: 5, Period: time.Minute, Burst: 5}},
		{audit.Principal{Subject: "alice", Issuer: "https://idp.test"}, httpx.Limit{Rate: 60, Period: time.Minute, Burst: 60}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, l.LimitFor(tc.p)); diff != "" {
			t.Errorf("LimitFor(%+v) (-want +got):\n%s", tc.p, diff)
		}
	}
	h := limitedServer(l, nil)
	for i := range 120 {
		if rec := send(t, h, http.MethodPost, "/pgx/check", "lab-pilot"); rec.Code != http.StatusOK {
			t.Fatalf("lab pilot request %d: %d", i+1, rec.Code)
		}
	}
	if rec := send(t, h, http.MethodPost, "/pgx/check", "lab-pilot"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("lab pilot request 121: %d", rec.Code)
	}

	for name, bad := range map[string]string{
		"unknown field": `{"overrides": [{"subject": "x", "per_minute": 5, "rpm": 1}]}`,
		"no subject":    `{"overrides": [{"per_minute": 5}]}`,
		"zero limit":    `{"overrides": [{"subject": "x", "per_minute": 0}]}`,
		"duplicate":     `{"overrides": [{"subject": "x", "per_minute": 5}, {"subject": "x", "per_minute": 6}]}`,
	} {
		if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := httpx.LoadRateOverrides(file); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRateLimitCost: a batch of N rows costs 1 + ceil(N/100) units; a
// refused charge costs nothing and answers 429 with the headers once.
func TestRateLimitCost(t *testing.T) {
	c := newClock()
	l, err := httpx.NewRateLimiter(nil, httpx.PerMinute(60, 0), nil, nil, nil, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := limitedServer(l, nil)
	rec := send(t, h, http.MethodPost, "/pgx/batch?rows=250", "lab")
	if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Remaining") != "56" {
		t.Fatalf("250 rows: %d, remaining %s; want 200 and 56 (1 + 3 units charged)", rec.Code, rec.Header().Get("RateLimit-Remaining"))
	}
	rec = send(t, h, http.MethodPost, "/pgx/batch?rows=5700", "lab") // 1 + 57 units: more than the 55 left after the request unit
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("5700 rows with 56 units left: %d, want 429", rec.Code)
	}
	if h := rateHeaders(rec); h["RateLimit-Remaining"] != "55" || h["Retry-After"] == "" || strings.Contains(fmt.Sprint(h), "repeated") {
		t.Errorf("429 headers = %v", h)
	}
	// The refused batch charged only its request unit.
	rec = send(t, h, http.MethodPost, "/pgx/check", "lab")
	if rec.Header().Get("RateLimit-Remaining") != "54" {
		t.Errorf("after the refused batch: remaining %s, want 54", rec.Header().Get("RateLimit-Remaining"))
	}
	// A batch dearer than the whole budget is capped at it: with a full
	// budget it passes and empties it; right after, it is refused.
	rec = send(t, h, http.MethodPost, "/pgx/batch?rows=100000", "lab2")
	if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Remaining") != "0" {
		t.Errorf("huge batch with a full budget: %d, remaining %s; want 200 and 0", rec.Code, rec.Header().Get("RateLimit-Remaining"))
	}
	if rec := send(t, h, http.MethodPost, "/pgx/batch?rows=100000", "lab2"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("second huge batch: %d, want 429", rec.Code)
	}
}

// metricValue sums the samples of the metric family name whose labels
// include labels.
func metricValue(t *testing.T, m *httpx.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, mt := range f.GetMetric() {
			have := map[string]string{}
			for _, lp := range mt.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch {
			case mt.GetCounter() != nil:
				sum += mt.GetCounter().GetValue()
			case mt.GetGauge() != nil:
				sum += mt.GetGauge().GetValue()
			case mt.GetHistogram() != nil:
				sum += float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// downStore is a budget store (a test double) whose backend does not
// answer.
type downStore struct{}

func (downStore) AllowN(context.Context, string, httpx.Limit, int) (httpx.Decision, error) {
	return httpx.Decision{}, errors.New("rate limit: backend down")
}

// TestStoreDownFallsBackToMemory: when the shared budget store (Redis in
// production, cmd/pgxsafety/internal/redisstore) fails, each replica
// limits from its own memory (never unlimited, never refusing everyone)
// and counts the failures.
func TestStoreDownFallsBackToMemory(t *testing.T) {
	c := newClock()
	m := httpx.NewMetrics()
	l, err := httpx.NewRateLimiter(downStore{}, httpx.PerMinute(60, 0), nil, m, zap.NewNop(), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := limitedServer(l, m)
	for i := range 60 {
		if rec := send(t, h, http.MethodPost, "/pgx/check", "alice"); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, rec.Code)
		}
	}
	if rec := send(t, h, http.MethodPost, "/pgx/check", "alice"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("61st request with the store down: %d, want 429 from the memory fallback", rec.Code)
	}
	// The store was tried once; the limiter then stayed on memory for the
	// back-off instead of waiting on the store for every request.
	if got := metricValue(t, m, "pgxsafety_rate_limit_backend_errors_total", nil); got != 1 {
		t.Errorf("backend errors metric = %v, want 1", got)
	}
	c.Advance(6 * time.Second)
	send(t, h, http.MethodPost, "/pgx/check", "alice")
	if got := metricValue(t, m, "pgxsafety_rate_limit_backend_errors_total", nil); got != 2 {
		t.Errorf("after the back-off the store was not tried again: errors = %v", got)
	}
}
