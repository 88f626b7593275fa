package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadyzURL(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		":8080":          "http://127.0.0.1:8080/readyz",
		"[::]:8080":      "http://[::1]:8080/readyz",
		"127.0.0.1:8081": "http://127.0.0.1:8081/readyz",
		"pgx.local:80":   "http://pgx.local:80/readyz",
	} {
		if got := readyzURL(addr); got != want {
			t.Errorf("readyzURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestHealthcheck: 200 passes; a 503, no answer and a bad URL fail, naming
// the status or the URL.
func TestHealthcheck(t *testing.T) {
	clearEnv(t)
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	t.Setenv("PGXSAFETY_ADDR", strings.TrimPrefix(srv.URL, "http://"))
	if out, _, err := runArgs(t, "healthcheck"); err != nil || !strings.Contains(out, "200 OK") {
		t.Errorf("ready server: %q, %v", out, err)
	}
	status = http.StatusServiceUnavailable
	if _, _, err := runArgs(t, "healthcheck"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("not ready: %v, want the 503 named", err)
	}
	srv.Close()
	if _, _, err := runArgs(t, "healthcheck", "--url", srv.URL+"/readyz"); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("no server: %v", err)
	}
	if _, _, err := runArgs(t, "healthcheck", "--url", "ftp://x/readyz"); err == nil || !strings.Contains(err.Error(), "--url") {
		t.Errorf("bad URL: %v", err)
	}
}
