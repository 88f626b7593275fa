package httpx_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

const testAudience = "pgxsafety-test-client"

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 8, 30, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// signingKey is a private key with its kid and algorithm.
type signingKey struct {
	alg jwa.SignatureAlgorithm
	key jwk.Key // private
}

func newECKey(t testing.TB, kid string) signingKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return wrapKey(t, priv, kid, jwa.ES256)
}

func newRSAKey(t testing.TB, kid string, bits int) signingKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return wrapKey(t, priv, kid, jwa.RS256)
}

func wrapKey(t testing.TB, raw any, kid string, alg jwa.SignatureAlgorithm) signingKey {
	t.Helper()
	k, err := jwk.FromRaw(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Set(jwk.KeyIDKey, kid); err != nil {
		t.Fatal(err)
	}
	return signingKey{alg: alg, key: k}
}

func (k signingKey) public(t testing.TB) jwk.Key {
	t.Helper()
	pub, err := jwk.PublicKeyOf(k.key)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// testIssuer is a local OpenID Connect issuer: discovery document and a
// JWKS whose keys the test can rotate. It counts fetches.
type testIssuer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	published []jwk.Key
	issuer    string // the issuer its discovery document names
	discovery atomic.Int32
	jwksHits  atomic.Int32
}

func newTestIssuer(t *testing.T, keys ...signingKey) *testIssuer {
	t.Helper()
	ti := &testIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		ti.discovery.Add(1)
		ti.mu.Lock()
		iss := ti.issuer
		ti.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": ti.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		ti.jwksHits.Add(1)
		ti.mu.Lock()
		set := jwk.NewSet()
		for _, k := range ti.published {
			set.AddKey(k)
		}
		ti.mu.Unlock()
		json.NewEncoder(w).Encode(set)
	})
	ti.srv = httptest.NewServer(mux)
	t.Cleanup(ti.srv.Close)
	ti.issuer = ti.srv.URL
	ti.publish(t, keys...)
	return ti
}

// publish replaces the published keys (a key rotation).
func (ti *testIssuer) publish(t testing.TB, keys ...signingKey) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.published = nil
	for _, k := range keys {
		ti.published = append(ti.published, k.public(t))
	}
}

func (ti *testIssuer) verifier(t *testing.T, c *clock) *httpx.OIDCVerifier {
	t.Helper()
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: ti.srv.URL, Audience: testAudience, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// claims are the claims of a good token at now.
func claims(iss string, now time.Time) map[string]any {
	return map[string]any{
		"iss":   iss,
		"aud":   testAudience,
		"sub":   "clinician-42",
		"name":  "Dr Ananya Rao",
		"email": "ananya@example.org",
		"iat":   now.Add(-time.Minute).Unix(),
		"nbf":   now.Add(-time.Minute).Unix(),
		"exp":   now.Add(time.Hour).Unix(),
	}
}

// sign signs claims with k (header alg and kid from k).
func sign(t testing.TB, k signingKey, c map[string]any) string {
	t.Helper()
	tok := jwt.New()
	for name, v := range c {
		if err := tok.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := jwt.Sign(tok, jwt.WithKey(k.alg, k.key))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signAsWritten signs claims with k as they are written: jwt.Set would
// turn a string date into a number.
func signAsWritten(t testing.TB, k signingKey, c map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jws.Sign(payload, jws.WithKey(k.alg, k.key))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// raw builds a compact token from a header, claims and a signature
// function over "header.payload".
func raw(t testing.TB, header, c map[string]any, sig func(signingInput []byte) []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig([]byte(input)))
}

// protectedServer is Chain over a router with one protected and one public
// route; the protected one echoes the principal.
func protectedServer(v httpx.Verifier, log *zap.Logger) (http.Handler, *atomic.Int32) {
	var reached atomic.Int32
	r := httpx.NewRouter()
	r.Handle("/pgx/check", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		reached.Add(1)
		p, ok := httpx.Principal(r.Context())
		if !ok {
			return errors.New("no principal")
		}
		return httpx.WriteJSON(w, http.StatusOK, p)
	})).Methods(http.MethodPost)
	r.Handle("/pgx/version", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return httpx.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})).Methods(http.MethodGet)
	return httpx.Chain(r, httpx.Options{Log: log, Protected: testProtection, Verifier: v}), &reached
}

func call(t *testing.T, h http.Handler, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func want401(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401; body %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	var p httpx.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Type != httpx.TypeUnauthorized || p.Status != 401 || p.RequestID == "" {
		t.Errorf("401 body = %s (%v)", rec.Body, err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != httpx.ProblemContentType {
		t.Errorf("Content-Type = %q", ct)
	}
}

// TestAttackTable sends forged, stale, misdirected and malformed tokens to
// a protected route: every one is a 401 and the handler never runs.
func TestAttackTable(t *testing.T) {
	c := newClock()
	good := newECKey(t, "key-es")
	rsaKey := newRSAKey(t, "key-rs", 2048)
	weak := newRSAKey(t, "key-weak", 1024)
	ti := newTestIssuer(t, good, rsaKey, weak)
	other := newECKey(t, "key-es") // another issuer's key, same kid
	now := c.Now()
	iss := ti.srv.URL

	with := func(mod func(map[string]any)) map[string]any {
		cl := claims(iss, now)
		mod(cl)
		return cl
	}
	rsaPubPEM := func() []byte {
		var pub rsa.PublicKey
		if err := rsaKey.public(t).Raw(&pub); err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKIXPublicKey(&pub)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}()
	valid := sign(t, good, claims(iss, now))
	parts := strings.Split(valid, ".")

	attacks := []struct {
		name   string
		header http.Header
	}{
		{"no Authorization header", nil},
		{"Basic scheme", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}},
		{"Bearer without token", http.Header{"Authorization": {"Bearer"}}},
		{"Bearer with blank token", http.Header{"Authorization": {"Bearer   "}}},
		{"two tokens", http.Header{"Authorization": {"Bearer " + valid + " " + valid}}},
		{"two Authorization headers", http.Header{"Authorization": {"Bearer " + valid, "Bearer " + valid}}},
		{"not a JWT", bearer("not-a-jwt")},
		{"alg none", bearer(raw(t, map[string]any{"alg": "none", "kid": "key-es"}, claims(iss, now),
			func([]byte) []byte { return nil }))},
		{"signature stripped", bearer(strings.Join(parts[:2], ".") + ".")},
		{"HS256 signed with the RSA public key", bearer(raw(t, map[string]any{"alg": "HS256", "kid": "key-rs", "typ": "JWT"}, claims(iss, now),
			func(in []byte) []byte { m := hmac.New(sha256.New, rsaPubPEM); m.Write(in); return m.Sum(nil) }))},
		{"HS256 signed with the JWK n value", bearer(raw(t, map[string]any{"alg": "HS256", "kid": "key-rs"}, claims(iss, now),
			func(in []byte) []byte {
				var pub rsa.PublicKey
				rsaKey.public(t).Raw(&pub)
				m := hmac.New(sha256.New, pub.N.Bytes())
				m.Write(in)
				return m.Sum(nil)
			}))},
		{"expired beyond the skew", bearer(sign(t, good, with(func(m map[string]any) { m["exp"] = now.Add(-61 * time.Second).Unix() })))},
		{"nbf in the future", bearer(sign(t, good, with(func(m map[string]any) { m["nbf"] = now.Add(5 * time.Minute).Unix() })))},
		{"iat in the future", bearer(sign(t, good, with(func(m map[string]any) { m["iat"] = now.Add(5 * time.Minute).Unix() })))},
		{"older than the maximum token age", bearer(sign(t, good, with(func(m map[string]any) { m["iat"] = now.Add(-25 * time.Hour).Unix() })))},
		{"wrong audience", bearer(sign(t, good, with(func(m map[string]any) { m["aud"] = "another-client" })))},
		{"wrong issuer", bearer(sign(t, good, with(func(m map[string]any) { m["iss"] = "https://evil.example.org" })))},
		{"missing exp", bearer(sign(t, good, with(func(m map[string]any) { delete(m, "exp") })))},
		{"missing sub", bearer(sign(t, good, with(func(m map[string]any) { delete(m, "sub") })))},
		{"control characters in sub", bearer(sign(t, good, with(func(m map[string]any) { m["sub"] = "a\nb" })))},
		{"unknown kid", bearer(sign(t, newECKey(t, "key-unknown"), claims(iss, now)))},
		{"another issuer's key under a known kid", bearer(sign(t, other, claims(iss, now)))},
		{"tampered payload", bearer(parts[0] + "." + func() string {
			b, _ := json.Marshal(with(func(m map[string]any) { m["sub"] = "admin" }))
			return base64.RawURLEncoding.EncodeToString(b)
		}() + "." + parts[2])},
		{"tampered signature", bearer(parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])))},
		{"truncated token", bearer(valid[:len(valid)-12])},
		{"truncated to two parts", bearer(parts[0] + "." + parts[1])},
		{"RSA key under 2048 bits", bearer(sign(t, weak, claims(iss, now)))},
		{"ES256 key claimed as ES384", bearer(raw(t, map[string]any{"alg": "ES384", "kid": "key-es"}, claims(iss, now),
			func([]byte) []byte { return make([]byte, 96) }))},
		{"typ at+jwt", bearer(func() string {
			hdr := jws.NewHeaders()
			hdr.Set(jws.TypeKey, "at+jwt")
			tok := jwt.New()
			for k, v := range claims(iss, now) {
				tok.Set(k, v)
			}
			b, err := jwt.Sign(tok, jwt.WithKey(good.alg, good.key, jws.WithProtectedHeaders(hdr)))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}())},
		{"oversized token", bearer(strings.Repeat("a", 17<<10) + "." + parts[1] + "." + parts[2])},
		{"exp as a string of digits", bearer(signAsWritten(t, good, with(func(m map[string]any) { m["exp"] = strconv.FormatInt(now.Add(time.Hour).Unix(), 10) })))},
		{"nbf as a string of digits", bearer(signAsWritten(t, good, with(func(m map[string]any) { m["nbf"] = strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) })))},
		{"iat as a string of digits", bearer(signAsWritten(t, good, with(func(m map[string]any) { m["iat"] = strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) })))},
		{"exp as a JSON object", bearer(signAsWritten(t, good, with(func(m map[string]any) { m["exp"] = map[string]any{"s": 1} })))},
	}

	wantReason := map[string]string{
		"no Authorization header":                "no Authorization header",
		"Basic scheme":                           "not Bearer",
		"Bearer without token":                   "not Bearer",
		"Bearer with blank token":                "empty bearer token",
		"two tokens":                             "outside token68",
		"two Authorization headers":              "more than one Authorization header",
		"not a JWT":                              "not a compact JWS",
		"alg none":                               `algorithm \"none\" is not accepted`,
		"signature stripped":                     "does not verify",
		"HS256 signed with the RSA public key":   `algorithm \"HS256\" is not accepted`,
		"HS256 signed with the JWK n value":      `algorithm \"HS256\" is not accepted`,
		"expired beyond the skew":                "expired",
		"nbf in the future":                      "nbf",
		"iat in the future":                      "iat",
		"older than the maximum token age":       "maximum age",
		"wrong audience":                         "wrong audience",
		"wrong issuer":                           "wrong issuer",
		"missing exp":                            "required claim",
		"missing sub":                            "required claim",
		"control characters in sub":              "control characters",
		"unknown kid":                            "unknown key id",
		"another issuer's key under a known kid": "does not verify",
		"tampered payload":                       "does not verify",
		"tampered signature":                     "does not verify",
		"truncated token":                        "does not verify",
		"truncated to two parts":                 "not a compact JWS",
		"RSA key under 2048 bits":                "no key of the issuer suits",
		"ES256 key claimed as ES384":             "no key of the issuer suits",
		"typ at+jwt":                             "not JWT",
		"oversized token":                        "longer than",
		"exp as a string of digits":              `\"exp\" must be a JSON number`,
		"nbf as a string of digits":              `\"nbf\" must be a JSON number`,
		"iat as a string of digits":              `\"iat\" must be a JSON number`,
		"exp as a JSON object":                   `\"exp\" must be a JSON number`,
	}
	core, logs := observer.New(zapcore.DebugLevel)
	h, reached := protectedServer(ti.verifier(t, c), zap.New(core))
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			n := len(logs.FilterMessage("bearer token rejected").All())
			want401(t, call(t, h, http.MethodPost, "/pgx/check", tc.header))
			all := logs.FilterMessage("bearer token rejected").All()
			if len(all) != n+1 {
				t.Fatalf("rejection not logged")
			}
			// Each attack fails for its own reason (the log says which; the
			// response does not).
			if got := toString(all[n].ContextMap()["reason"]); !strings.Contains(got, wantReason[tc.name]) {
				t.Errorf("rejected because %s, want a reason containing %q", got, wantReason[tc.name])
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the protected handler ran %d times for rejected tokens", n)
	}
	// Tokens never reach the logs.
	for _, e := range logs.All() {
		line := e.Message + " " + strings.Join(func() []string {
			var out []string
			for k, v := range e.ContextMap() {
				out = append(out, k+"="+toString(v))
			}
			return out
		}(), " ")
		if strings.Contains(line, parts[1]) || strings.Contains(line, parts[2]) {
			t.Errorf("a log line holds token material: %s", line)
		}
	}

	// The good tokens pass, with the principal in the context; exp within
	// the 60 s skew still passes.
	for name, tok := range map[string]string{
		"ES256":                 valid,
		"RS256":                 sign(t, rsaKey, claims(iss, now)),
		"expired within skew":   sign(t, good, with(func(m map[string]any) { m["exp"] = now.Add(-30 * time.Second).Unix() })),
		"audience in a list":    sign(t, good, with(func(m map[string]any) { m["aud"] = []string{"x", testAudience} })),
		"lower-case scheme":     valid,
		"no nbf, no name/email": sign(t, good, with(func(m map[string]any) { delete(m, "nbf"); delete(m, "name"); delete(m, "email") })),
		"signed as written":     signAsWritten(t, good, claims(iss, now)),
	} {
		t.Run("accepts "+name, func(t *testing.T) {
			hdr := bearer(tok)
			if name == "lower-case scheme" {
				hdr = http.Header{"Authorization": {"bearer " + tok}}
			}
			rec := call(t, h, http.MethodPost, "/pgx/check", hdr)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var p audit.Principal
			json.Unmarshal(rec.Body.Bytes(), &p)
			if p.Subject != "clinician-42" || p.Issuer != iss {
				t.Errorf("principal = %+v", p)
			}
		})
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPrincipalClaims(t *testing.T) {
	c := newClock()
	k := newECKey(t, "k1")
	ti := newTestIssuer(t, k)
	v := ti.verifier(t, c)
	p, err := v.Verify(context.Background(), sign(t, k, claims(ti.srv.URL, c.Now())))
	if err != nil {
		t.Fatal(err)
	}
	want := audit.Principal{Subject: "clinician-42", Issuer: ti.srv.URL, Name: "Dr Ananya Rao", Email: "ananya@example.org"}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
}

// TestKeyRotation rotates the issuer's key mid-test: tokens of the new key
// are accepted at once (an unknown kid triggers a refresh), tokens of the
// retired key are refused once the key set no longer holds it, and a stale
// key set is refreshed in the background.
func TestKeyRotation(t *testing.T) {
	c := newClock()
	oldKey, newKey := newECKey(t, "2025-05"), newECKey(t, "2025-06")
	ti := newTestIssuer(t, oldKey)
	v := ti.verifier(t, c)
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatalf("initial refresh: %v", err)
	}
	h, _ := protectedServer(v, zap.NewNop())
	check := func(k signingKey, want int) {
		t.Helper()
		rec := call(t, h, http.MethodPost, "/pgx/check", bearer(sign(t, k, claims(ti.srv.URL, c.Now()))))
		if rec.Code != want {
			t.Fatalf("token of %s: status %d, want %d (%s)", k.key.KeyID(), rec.Code, want, rec.Body)
		}
	}
	check(oldKey, 200)
	if n := ti.jwksHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}

	// The issuer publishes the new key next to the old one and starts
	// signing with it.
	ti.publish(t, oldKey, newKey)
	c.Advance(time.Minute)
	check(newKey, 200)
	check(oldKey, 200)
	if n := ti.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after the new kid appeared, want 2", n)
	}

	// The old key is retired. Until the key set is refreshed it is still
	// cached; a refresh (here: an unknown kid after MinKeyRefresh) drops it.
	ti.publish(t, newKey)
	c.Advance(time.Minute)
	check(newECKey(t, "forged-kid"), 401) // unknown kid: refresh happens, still unknown
	check(oldKey, 401)
	check(newKey, 200)

	// Forged kids cannot force a fetch more often than MinKeyRefresh.
	before := ti.jwksHits.Load()
	for i := range 5 {
		check(newECKey(t, "forged-"+string(rune('a'+i))), 401)
	}
	if n := ti.jwksHits.Load(); n != before {
		t.Errorf("forged kids caused %d JWKS fetches within MinKeyRefresh", n-before)
	}

	// A key set older than KeyRefresh is refreshed in the background.
	c.Advance(httpx.DefaultKeyRefresh + time.Second)
	check(newKey, 200)
	deadline := time.Now().Add(5 * time.Second)
	for ti.jwksHits.Load() == before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if ti.jwksHits.Load() == before {
		t.Error("a stale key set was not refreshed")
	}
	if n := ti.discovery.Load(); n != 1 {
		t.Errorf("discovery fetched %d times, want once", n)
	}
}

func TestIdentityProviderUnavailable(t *testing.T) {
	c := newClock()
	k := newECKey(t, "k1")
	ti := newTestIssuer(t, k)
	// The discovery document names another issuer: no keys are trusted.
	ti.mu.Lock()
	ti.issuer = "https://someone-else.example.org"
	ti.mu.Unlock()
	v := ti.verifier(t, c)
	if err := v.Refresh(context.Background()); !errors.Is(err, httpx.ErrKeysUnavailable) {
		t.Fatalf("Refresh = %v, want ErrKeysUnavailable", err)
	}
	h, _ := protectedServer(v, zap.NewNop())
	c.Advance(time.Minute)
	rec := call(t, h, http.MethodPost, "/pgx/check", bearer(sign(t, k, claims(ti.srv.URL, c.Now()))))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), httpx.TypeIdentityUnavailable) {
		t.Errorf("status %d %s, want 503 identity-unavailable", rec.Code, rec.Body)
	}
	// The issuer is fixed: the next token (after MinKeyRefresh) works.
	ti.mu.Lock()
	ti.issuer = ti.srv.URL
	ti.mu.Unlock()
	c.Advance(time.Minute)
	rec = call(t, h, http.MethodPost, "/pgx/check", bearer(sign(t, k, claims(ti.srv.URL, c.Now()))))
	if rec.Code != http.StatusOK {
		t.Errorf("after the issuer recovered: %d %s", rec.Code, rec.Body)
	}
}

func TestJWKSFileAndURL(t *testing.T) {
	c := newClock()
	k := newECKey(t, "file-key")
	set := jwk.NewSet()
	set.AddKey(k.public(t))
	b, _ := json.Marshal(set)
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	const iss = "https://idp.example.org"
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: iss, Audience: testAudience, JWKSFile: file, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, k, claims(iss, c.Now()))); err != nil {
		t.Errorf("token verified against a JWKS file: %v", err)
	}

	ti := newTestIssuer(t, k)
	v, err = httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: iss, Audience: testAudience, JWKSURL: ti.srv.URL + "/jwks", Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, k, claims(iss, c.Now()))); err != nil {
		t.Errorf("token verified against a JWKS URL: %v", err)
	}
	if ti.discovery.Load() != 0 {
		t.Error("a configured JWKS URL still ran discovery")
	}
}

func TestOIDCConfigRejected(t *testing.T) {
	tests := []struct {
		name string
		cfg  httpx.OIDCConfig
	}{
		{"no issuer", httpx.OIDCConfig{Audience: "a"}},
		{"no audience", httpx.OIDCConfig{Issuer: "https://idp.example.org"}},
		{"http issuer", httpx.OIDCConfig{Issuer: "http://idp.example.org", Audience: "a"}},
		{"HS256", httpx.OIDCConfig{Issuer: "https://idp.example.org", Audience: "a", Algorithms: []string{"RS256", "HS256"}}},
		{"none", httpx.OIDCConfig{Issuer: "https://idp.example.org", Audience: "a", Algorithms: []string{"none"}}},
		{"http JWKS URL", httpx.OIDCConfig{Issuer: "https://idp.example.org", Audience: "a", JWKSURL: "http://keys.example.org/jwks"}},
	}
	for _, tc := range tests {
		if _, err := httpx.NewOIDCVerifier(tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestRequiresAuth(t *testing.T) {
	tests := []struct {
		method, path string
		want         bool
	}{
		{"POST", "/pgx/check", true},
		{"GET", "/pgx/drugs", true},
		{"GET", "/pgx/variants", true},
		{"POST", "/pgx/batch_csv", true},
		{"POST", "/pgx/batch", true},
		{"GET", "/pgx/india_panel", true},
		{"GET", "/pgx/not-yet-written", true},
		{"GET", "/pgx", true},
		{"GET", "/pgx/", true},
		{"POST", "/classifier_v2/classify", true},
		{"GET", "/classifier_v2/version", true},
		{"GET", "/pgx/version", false},
		{"HEAD", "/pgx/version", false},
		{"GET", "/pgx/status", false},
		{"POST", "/pgx/version", true},
		{"DELETE", "/pgx/status", true},
		{"GET", "/pgx/version/../check", true},
		{"GET", "/pgx/status/", true},
		{"GET", "//pgx/check", true},
		{"GET", "/x/../pgx/check", true},
		{"GET", "/healthz", false},
		{"GET", "/readyz", false},
		{"GET", "/metrics", false},
		{"GET", "/openapi.json", false},
		{"GET", "/cds-services", false},
		{"POST", "/cds-services/pgx-order-select", false},
		{"GET", "/pgxfoo", false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
		if got := testProtection.RequiresAuth(r); got != tc.want {
			t.Errorf("%s %s: RequiresAuth = %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestPublicRoutesNeedNoToken(t *testing.T) {
	ti := newTestIssuer(t, newECKey(t, "k"))
	h, _ := protectedServer(ti.verifier(t, newClock()), zap.NewNop())
	if rec := call(t, h, http.MethodGet, "/pgx/version", nil); rec.Code != http.StatusOK {
		t.Errorf("GET /pgx/version without a token: %d", rec.Code)
	}
	// Unknown paths under a protected prefix answer 401, not 404: the
	// route table is not disclosed to strangers.
	want401(t, call(t, h, http.MethodGet, "/pgx/nothing", nil))
	want401(t, call(t, h, http.MethodGet, "/classifier_v2/anything", nil))
}

func TestDevMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	key, err := httpx.LoadOrCreateDevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, httpx.DevKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %o, want 600", fi.Mode().Perm())
	}
	again, err := httpx.LoadOrCreateDevKey(dir)
	if err != nil || again.KeyID() != key.KeyID() || key.KeyID() == "" {
		t.Fatalf("second load: kid %q vs %q, %v", again.KeyID(), key.KeyID(), err)
	}
	c := newClock()
	v, err := httpx.NewDevVerifier(again, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := httpx.MintDevToken(key, "alice", time.Hour, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("dev token rejected: %v", err)
	}
	if p.Subject != "alice" || p.Issuer != httpx.DevIssuer {
		t.Errorf("principal = %+v", p)
	}
	c.Advance(time.Hour + 2*time.Minute)
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, httpx.ErrInvalidToken) {
		t.Errorf("expired dev token: %v", err)
	}
	// A token of another data directory's key is refused.
	otherKey, err := httpx.LoadOrCreateDevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := httpx.MintDevToken(otherKey, "alice", time.Hour, c.Now())
	if _, err := v.Verify(context.Background(), foreign); !errors.Is(err, httpx.ErrInvalidToken) {
		t.Errorf("token of another key: %v", err)
	}
	for _, ttl := range []time.Duration{0, -time.Second, 25 * time.Hour} {
		if _, err := httpx.MintDevToken(key, "alice", ttl, c.Now()); err == nil {
			t.Errorf("ttl %s accepted", ttl)
		}
	}
	if _, err := httpx.MintDevToken(key, "", time.Hour, c.Now()); err == nil {
		t.Error("empty subject accepted")
	}
	// A key file others can read is refused.
	if err := os.Chmod(filepath.Join(dir, httpx.DevKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := httpx.LoadOrCreateDevKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: %v", err)
	}
}

func TestDevKeyConcurrentCreation(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	kids := make([]string, 8)
	for i := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := httpx.LoadOrCreateDevKey(dir)
			if err != nil {
				t.Error(err)
				return
			}
			kids[i] = k.KeyID()
		}()
	}
	wg.Wait()
	for _, kid := range kids {
		if kid != kids[0] {
			t.Fatalf("concurrent creation produced different keys: %v", kids)
		}
	}
}

// FuzzVerify feeds arbitrary bearer tokens to the verifier: it must never
// panic and never accept one (the fuzzer does not hold the key).
func FuzzVerify(f *testing.F) {
	c := newClock()
	k := newECKey(f, "k1")
	set := jwk.NewSet()
	set.AddKey(k.public(f))
	const iss = "https://idp.example.org"
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: iss, Audience: testAudience, Keys: set, Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	valid := sign(f, k, claims(iss, c.Now()))
	f.Add(valid)
	f.Add(valid[:len(valid)-1] + "A")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("...")
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := v.Verify(context.Background(), tok)
		if err == nil && !sameSegments(tok, valid) {
			t.Fatalf("accepted a token the fuzzer made: %q → %+v", tok, p)
		}
		if err != nil && !errors.Is(err, httpx.ErrInvalidToken) {
			t.Fatalf("error %v is not ErrInvalidToken", err)
		}
	})
}

// sameSegments reports whether two compact tokens have the same header and
// payload text and decode to the same signature bytes (base64 leaves the
// low bits of the last character free, so one signature has several
// spellings).
func sameSegments(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != 3 || len(pb) != 3 || pa[0] != pb[0] || pa[1] != pb[1] {
		return false
	}
	sa, err1 := base64.RawURLEncoding.DecodeString(pa[2])
	sb, err2 := base64.RawURLEncoding.DecodeString(pb[2])
	return err1 == nil && err2 == nil && string(sa) == string(sb)
}

// FuzzAuthorizationHeader sends arbitrary Authorization headers through
// the middleware: never a panic, never a 200.
func FuzzAuthorizationHeader(f *testing.F) {
	c := newClock()
	k := newECKey(f, "k1")
	set := jwk.NewSet()
	set.AddKey(k.public(f))
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{Issuer: "https://idp.example.org", Audience: testAudience, Keys: set, Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	h, _ := protectedServer(v, zap.NewNop())
	for _, seed := range []string{"", "Bearer", "Bearer ", "bearer a.b.c", "Basic eA==", "Bearer \x00", "Bearer a b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		req := httptest.NewRequest(http.MethodPost, "/pgx/check", nil)
		req.Header["Authorization"] = []string{header}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("header %q: status %d", header, rec.Code)
		}
	})
}

// testProtection protects what the REST surface protects (pgxapi.Protection).
var testProtection = httpx.Protection{
	Prefixes: []string{"/pgx", "/classifier_v2"},
	Public:   []string{"/pgx/version", "/pgx/status"},
}
