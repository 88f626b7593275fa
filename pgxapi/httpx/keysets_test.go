package httpx_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

const oneKeyJWKS = `{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}`

// TestKeySetCache: a set is fetched once while fresh, again when older
// than the maximum age, refreshes are throttled, a failed refetch keeps
// the cached set, and failures carry a reason.
func TestKeySetCache(t *testing.T) {
	var hits atomic.Int32
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		if s := int(status.Load()); s != http.StatusOK {
			w.WriteHeader(s)
			return
		}
		_, _ = w.Write([]byte(oneKeyJWKS))
	}))
	defer srv.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := httpx.NewKeySetCache(t.Context(), srv.Client(), clock)
	ctx := context.Background()
	src := srv.URL + "/jwks"

	for range 3 {
		set, _, err := c.Get(ctx, src, time.Minute)
		if err != nil || set.Len() != 1 {
			t.Fatalf("Get: %v (%v keys)", err, set)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d fetches for a fresh set, want 1", n)
	}
	if _, _, err := c.Refresh(ctx, src, time.Minute); !errors.Is(err, httpx.ErrKeySetThrottled) {
		t.Errorf("Refresh within the interval = %v, want ErrKeySetThrottled", err)
	}
	now = now.Add(2 * time.Minute)
	status.Store(http.StatusInternalServerError)
	set, _, err := c.Get(ctx, src, time.Minute)
	if err != nil || set == nil || hits.Load() != 2 {
		t.Errorf("stale Get with the source failing: %v, set %v, %d fetches; want the cached set after a second fetch", err, set, hits.Load())
	}
	_, _, err = c.Refresh(ctx, src, 0)
	var ke *httpx.KeySetError
	if !errors.As(err, &ke) || ke.Reason != "key set cannot be fetched (status 500)" {
		t.Errorf("Refresh of a failing source = %v", err)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"keys":`), 0o600); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"file:" + bad:                        "key set is not a JWK Set",
		"file:" + filepath.Join(dir, "none"): "key set cannot be read",
		"ftp://example.test/jwks":            "key-set URL is invalid",
	} {
		_, _, err := c.Get(ctx, src, 0)
		if !errors.As(err, &ke) || ke.Reason != want {
			t.Errorf("Get(%s) = %v, want reason %q", src, err, want)
		}
	}
}

// TestKeySetCacheFileRotation: a "file:" source is read again on Refresh,
// so replacing the file rotates keys; a set over MaxKeySetBytes is refused.
func TestKeySetCacheFileRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := httpx.NewKeySetCache(t.Context(), nil, nil)
	ctx := context.Background()
	if set, _, err := c.Get(ctx, "file:"+path, 0); err != nil || set.Len() != 0 {
		t.Fatalf("Get: %v, %v", set, err)
	}
	if err := os.WriteFile(path, []byte(oneKeyJWKS), 0o600); err != nil {
		t.Fatal(err)
	}
	if set, _, err := c.Get(ctx, "file:"+path, 0); err != nil || set.Len() != 0 {
		t.Errorf("Get of a cached set read the file again: %v, %v", set, err)
	}
	if set, _, err := c.Refresh(ctx, "file:"+path, 0); err != nil || set.Len() != 1 {
		t.Errorf("Refresh after rotation: %v, %v", set, err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, httpx.MaxKeySetBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	var ke *httpx.KeySetError
	if _, _, err := c.Get(ctx, "file:"+big, 0); !errors.As(err, &ke) || ke.Reason != "key set is too large" {
		t.Errorf("Get of a large set = %v", err)
	}
}
