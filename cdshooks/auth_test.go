package cdshooks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

const selectPath = "/cds-services/pgx-order-select"

// TestAttackTable: every forged, stale, misdirected or replayed token is
// refused with 401 and WWW-Authenticate; a valid one is accepted.
func TestAttackTable(t *testing.T) {
	// A key server that must never be contacted (its jku is not allowlisted).
	var jkuHits atomic.Int32
	evil := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		jkuHits.Add(1)
		w.WriteHeader(200)
	}))
	defer evil.Close()

	otherEC, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaRaw, _ := rsa.GenerateKey(rand.Reader, 2048)
	pubJSON, _ := os.ReadFile(filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json"))

	valid := token{}
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")

	b64 := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	claims := map[string]any{"iss": specIssuer, "aud": publicURL + selectPath, "iat": fixedNow.Unix(), "exp": fixedNow.Add(time.Minute).Unix(), "jti": "x1"}
	noneToken := b64(map[string]any{"alg": "none", "typ": "JWT", "kid": specKid}) + "." + b64(claims) + "."
	signedValid := valid.sign(t, selectPath)
	parts := strings.Split(signedValid, ".")
	tampered := parts[0] + "." + b64(map[string]any{"iss": specIssuer, "aud": publicURL + selectPath, "iat": fixedNow.Unix(),
		"exp": fixedNow.Add(time.Minute).Unix(), "jti": "tampered", "sub": "admin"}) + "." + parts[2]

	tests := []struct {
		name   string
		reason string // in the problem detail
		tok    *token
	}{
		{"no Authorization header", "Bearer token is required", nil},
		{"alg none", "not a compact JWS", &token{rawToken: noneToken}},
		{"HS384 signed with the public key set as secret", "HS384 is not accepted", &token{alg: jwa.HS384, key: pubJSON}},
		{"expired", "expired", &token{claims: map[string]any{"iat": fixedNow.Add(-10 * time.Minute).Unix(), "exp": fixedNow.Add(-5 * time.Minute).Unix()}}},
		{"iat in the future", "iat is in the future", &token{claims: map[string]any{"iat": fixedNow.Add(10 * time.Minute).Unix(), "exp": fixedNow.Add(12 * time.Minute).Unix()}}},
		{"exp as a string of digits", "exp must be a JSON number", &token{claims: map[string]any{"exp": fmt.Sprint(fixedNow.Add(time.Minute).Unix())}}},
		{"iat as a string of digits", "iat must be a JSON number", &token{claims: map[string]any{"iat": fmt.Sprint(fixedNow.Unix())}}},
		{"nbf as a string", "nbf must be a JSON number", &token{claims: map[string]any{"nbf": "0"}}},
		{"nbf in the future", "nbf", &token{claims: map[string]any{"nbf": fixedNow.Add(3 * time.Minute).Unix()}}},
		{"no exp", "exp is required", &token{drop: []string{"exp"}}},
		{"no iat", "iat is required", &token{drop: []string{"iat"}}},
		{"no jti", "jti is required", &token{drop: []string{"jti"}}},
		{"wrong aud path (the other service)", "aud must be", &token{audPath: "/cds-services/pgx-order-sign"}},
		{"aud of another host", "aud must be", &token{claims: map[string]any{"aud": "https://evil.example/cds-services/pgx-order-select"}}},
		{"aud array without the URL called", "aud must be", &token{claims: map[string]any{"aud": []string{"https://other", publicURL + "/cds-services/pgx-order-sign"}}}},
		{"untrusted issuer", "not a trusted CDS client", &token{claims: map[string]any{"iss": "https://other-ehr.example/"}}},
		{"unknown kid", "no key with the token's kid", &token{header: map[string]any{"kid": "rotated-away"}}},
		{"kid missing", "must carry kid", &token{dropHdr: []string{"kid"}}},
		{"typ missing", "typ", &token{dropHdr: []string{"typ"}}},
		{"typ not JWT", "typ", &token{header: map[string]any{"typ": "at+jwt"}}},
		{"jku not allowlisted", "not allowlisted", &token{header: map[string]any{"jku": evil.URL + "/jwks.json"}}},
		{"signed by another issuer's key", "signature does not verify", &token{key: otherEC}},
		{"RS384 not in the client's key set", "the key is for ES384", &token{alg: jwa.RS384, key: rsaRaw}},
		{"ES512 not allowed", "ES512 is not accepted", &token{alg: jwa.ES512, key: otherEC}},
		{"tampered payload", "signature does not verify", &token{rawToken: tampered}},
		{"truncated", "signature does not verify", &token{rawToken: signedValid[:len(signedValid)-10]}},
		{"two parts", "not a compact JWS", &token{rawToken: parts[0] + "." + parts[1]}},
		{"garbage", "not a compact JWS", &token{rawToken: "not-a-token"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.post(selectPath, body, tc.tok)
			p := problemOf(t, rec, http.StatusUnauthorized)
			if !strings.Contains(p.Detail, tc.reason) {
				t.Errorf("refused for %q, want a reason containing %q", p.Detail, tc.reason)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
		})
	}
	if n := jkuHits.Load(); n != 0 {
		t.Errorf("a non-allowlisted jku was fetched %d times", n)
	}
	// A Bearer header that is not one.
	req := httptest.NewRequest(http.MethodPost, selectPath, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Basic dXNlcjpwdw==")
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	problemOf(t, rec, http.StatusUnauthorized)

	// The valid token works once; replayed, it is refused.
	replayed := &token{rawToken: valid.sign(t, selectPath)}
	decodeResponse(t, e.post(selectPath, body, replayed))
	p := problemOf(t, e.post(selectPath, body, replayed), http.StatusUnauthorized)
	if !strings.Contains(p.Detail, "jti") {
		t.Errorf("replay detail = %q", p.Detail)
	}
	// No test leaked a token into a problem body.
	if strings.Contains(p.Detail, parts[1]) {
		t.Error("problem detail echoes the token")
	}
}

// TestAllowlistedJKU: a jku on the client's allowlist is fetched and used.
func TestAllowlistedJKU(t *testing.T) {
	pub, _ := os.ReadFile(filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json"))
	var hits atomic.Int32
	ks := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pub)
	}))
	defer ks.Close()
	jku := ks.URL + "/jwks.json"
	e := newEnv(t, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) {
		c.KeySets = httpx.NewKeySetCache(t.Context(), ks.Client(), fixedClock)
		(*cs)[0] = cdshooks.TrustedClient{Iss: specIssuer, JWKSURL: ks.URL + "/other.json", JKUAllowlist: []string{jku}, Algorithms: []string{"ES384"}}
	})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	decodeResponse(t, e.post(selectPath, body, &token{header: map[string]any{"jku": jku}}))
	decodeResponse(t, e.post(selectPath, body, &token{header: map[string]any{"jku": jku}}))
	if n := hits.Load(); n != 1 {
		t.Errorf("key set fetched %d times, want 1 (cached)", n)
	}
}

// TestTokenLifetime: CDS Hooks 2.0.1 bounds a token by exp only, so a
// 10-minute token (as the sandbox may send) is accepted by default; a
// client's max_lifetime_seconds bounds exp − iat when configured.
func TestTokenLifetime(t *testing.T) {
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	long := func() *token {
		return &token{claims: map[string]any{"iat": fixedNow.Add(-time.Minute).Unix(), "exp": fixedNow.Add(9 * time.Minute).Unix()}}
	}
	e := newEnv(t)
	decodeResponse(t, e.post(selectPath, body, long()))
	decodeResponse(t, e.post(selectPath, body, &token{claims: map[string]any{"exp": fixedNow.Add(24 * time.Hour).Unix()}}))

	bounded := newEnv(t, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) { (*cs)[0].MaxLifetimeSeconds = 300 })
	p := problemOf(t, bounded.post(selectPath, body, long()), http.StatusUnauthorized)
	if !strings.Contains(p.Detail, "lives longer than 5m0s") {
		t.Errorf("detail %q", p.Detail)
	}
	decodeResponse(t, bounded.post(selectPath, body, &token{}))
}

// TestAudienceArray: an aud array holding the URL called among others is
// accepted (RFC 7519 §4.1.3, CDS Hooks 2.0.1).
func TestAudienceArray(t *testing.T) {
	e := newEnv(t)
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	decodeResponse(t, e.post(selectPath, body, &token{claims: map[string]any{"aud": []string{"https://ehr.example/other", publicURL + selectPath}}}))
}

// TestTenant: a client configured with a tenant accepts only its tenant.
func TestTenant(t *testing.T) {
	e := newEnv(t, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) { (*cs)[0].Tenant = "2ddd6c3a" })
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	problemOf(t, e.post(selectPath, body, &token{}), http.StatusUnauthorized)
	problemOf(t, e.post(selectPath, body, &token{claims: map[string]any{"tenant": "other"}}), http.StatusUnauthorized)
	decodeResponse(t, e.post(selectPath, body, &token{claims: map[string]any{"tenant": "2ddd6c3a"}}))
}

func TestLoadClients(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "c.json")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The shape of the issue, verbatim.
	ok := `[{"iss": "https://ehr.example", "jwks_url": "https://ehr.example/jwks.json", "jku_allowlist": ["https://ehr.example/jwks.json"], "algorithms": ["ES384", "RS384"], "tenant": "optional"}]`
	if _, err := cdshooks.LoadClients(write(ok)); err != nil {
		t.Errorf("valid file refused: %v", err)
	}
	bad := map[string]string{
		"both key sources": `[{"iss":"a","jwks_url":"https://a/j","jwks_file":"/x"}]`,
		"no key source":    `[{"iss":"a"}]`,
		"HS256":            `[{"iss":"a","jwks_file":"/x","algorithms":["HS256"]}]`,
		"none":             `[{"iss":"a","jwks_file":"/x","algorithms":["none"]}]`,
		"http jwks_url":    `[{"iss":"a","jwks_url":"http://a.example/j"}]`,
		"unknown key":      `[{"iss":"a","jwks_file":"/x","secret":"s"}]`,
		"duplicate iss":    `[{"iss":"a","jwks_file":"/x"},{"iss":"a","jwks_file":"/y"}]`,
		"empty":            `[]`,
	}
	for name, s := range bad {
		if _, err := cdshooks.LoadClients(write(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestConfigRefusals: clients without a public URL, and the development
// switch on a non-loopback address, refuse to start.
func TestConfigRefusals(t *testing.T) {
	svc := service.New(kb, nil, failingAppender{}, fixedClock)
	dir := t.TempDir()
	clients := filepath.Join(dir, "c.json")
	_ = os.WriteFile(clients, []byte(`[{"iss":"a","jwks_file":"/x"}]`), 0o600)
	fb := audittest.NewMemory()
	for name, cfg := range map[string]cdshooks.Config{
		"clients without public URL": {ClientsFile: clients, Feedback: fb},
		"dev switch on 0.0.0.0":      {DevUnauthenticated: true, ListenAddr: "0.0.0.0:8080", Feedback: fb},
		"no feedback store":          {PublicURL: "https://cds.example", ClientsFile: clients},
	} {
		if _, err := cdshooks.New(svc, cfg, nil); err == nil {
			t.Errorf("%s: started", name)
		}
	}
}

// TestDevSwitchRemote: with the development switch, unauthenticated calls
// from loopback are served (and audited as such); from elsewhere they are
// not.
func TestDevSwitchRemote(t *testing.T) {
	e := newEnv(t, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) {
		c.DevUnauthenticated = true
		*cs = nil
	})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	call := func(remote string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, selectPath, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return rec
	}
	decodeResponse(t, call("127.0.0.1:5555"))
	decodeResponse(t, call("[::1]:5555"))
	problemOf(t, call("192.0.2.1:5555"), http.StatusUnauthorized)
	entries := e.auditEntries()
	if len(entries) != 2 || entries[0].Principal.Subject != "unauthenticated-dev-client" {
		t.Errorf("dev calls are not audited as unauthenticated: %+v", entries)
	}
}

// TestNoClientsConfigured: without clients or the switch, hook calls are
// refused; discovery still answers.
func TestNoClientsConfigured(t *testing.T) {
	e := newEnv(t, func(_ *cdshooks.Config, cs *[]cdshooks.TrustedClient) { *cs = nil })
	problemOf(t, e.post(selectPath, readRequest(t, "order-select-clopidogrel-cyp2c19-pm"), &token{}), http.StatusUnauthorized)
	if rec := e.get("/cds-services"); rec.Code != http.StatusOK {
		t.Errorf("discovery: %d", rec.Code)
	}
}

// TestMemoryReplayExpiry: a jti is forgotten once its token has expired.
func TestMemoryReplayExpiry(t *testing.T) {
	now := fixedNow
	c := cdshooks.NewMemoryReplayCache(func() time.Time { return now })
	ctx := context.Background()
	if ok, _ := c.Claim(ctx, "k", now, now.Add(time.Minute)); !ok {
		t.Fatal("first claim refused")
	}
	if ok, _ := c.Claim(ctx, "k", now, now.Add(time.Minute)); ok {
		t.Fatal("replay accepted")
	}
	now = now.Add(2 * time.Minute)
	if ok, _ := c.Claim(ctx, "k", now, now.Add(time.Minute)); !ok {
		t.Fatal("expired key still remembered")
	}
}
