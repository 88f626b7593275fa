package httpx_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// TestVerifiedTokenCacheKeepsEveryCheck: a token verified once (and so
// cached) is still refused once it expires, and once the key that signed
// it has left the key set; another token is never answered from the cache.
func TestVerifiedTokenCacheKeepsEveryCheck(t *testing.T) {
	c := newClock()
	const iss = "https://idp.example.org"
	k := newECKey(t, "old-key")
	other := newECKey(t, "new-key")
	file := filepath.Join(t.TempDir(), "jwks.json")
	writeSet := func(keys ...signingKey) {
		set := jwk.NewSet()
		for _, key := range keys {
			set.AddKey(key.public(t))
		}
		b, _ := json.Marshal(set)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSet(k, other)
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: iss, Audience: testAudience, JWKSFile: file, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	cl := claims(iss, c.Now())
	cl["exp"] = c.Now().Add(2 * time.Minute).Unix()
	tok := sign(t, k, cl)
	for i := range 2 {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
	}
	// A different subject signed by a key the verifier does not know: not
	// answered from the cache.
	stranger := newECKey(t, "old-key")
	cl2 := claims(iss, c.Now())
	cl2["sub"] = "mallory"
	if _, err := v.Verify(ctx, sign(t, stranger, cl2)); err == nil {
		t.Error("a token signed by an unknown key with a known kid verified")
	}
	// Expired (beyond the 60 s skew): refused although it verified before.
	c.Advance(4 * time.Minute)
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Error("an expired token was accepted from the cache")
	}

	// Key rotation: the signing key leaves the set; after the refresh the
	// cached token no longer verifies.
	cl = claims(iss, c.Now())
	tok = sign(t, k, cl)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	writeSet(other)
	c.Advance(time.Second)
	if err := v.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Error("a token signed by a retired key was accepted from the cache after the key set was refreshed")
	}
}
