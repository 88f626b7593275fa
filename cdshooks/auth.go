package cdshooks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// EHR-JWT rules (docs/cds-hooks.md §5).
const (
	// ClockSkew is the tolerance on exp, iat and nbf.
	ClockSkew = 60 * time.Second
	// keySetTTL is how long a fetched key set is used before it is fetched
	// again; keySetMinRefresh is the shortest interval between fetches
	// caused by an unknown kid (key rotation).
	keySetTTL        = 10 * time.Minute
	keySetMinRefresh = 30 * time.Second
	// maxTokenBytes bounds a token (a key-set document is bounded by
	// httpx.MaxKeySetBytes, its fetch by httpx.KeySetTimeout).
	maxTokenBytes = 16 << 10
)

// DefaultAlgorithms are the signature algorithms accepted when a trusted
// client names none (CDS Hooks 2.0 names ES384 and RS384).
var DefaultAlgorithms = []string{"ES384", "RS384"}

// asymmetric lists the algorithms a trusted client may allow: never none
// and never an HMAC.
var asymmetric = map[string]jwa.SignatureAlgorithm{
	"ES256": jwa.ES256, "ES384": jwa.ES384, "ES512": jwa.ES512,
	"RS256": jwa.RS256, "RS384": jwa.RS384, "RS512": jwa.RS512,
	"PS256": jwa.PS256, "PS384": jwa.PS384, "PS512": jwa.PS512,
	"EdDSA": jwa.EdDSA,
}

// TrustedClient is one entry of the PGXSAFETY_CDS_CLIENTS file.
type TrustedClient struct {
	// Iss is the client's issuer, compared exactly with the token's iss.
	Iss string `json:"iss"`
	// JWKSURL (https) or JWKSFile holds the client's public keys; exactly
	// one is given.
	JWKSURL  string `json:"jwks_url,omitempty"`
	JWKSFile string `json:"jwks_file,omitempty"`
	// JKUAllowlist lists the key-set URLs a token's jku header may name;
	// a jku not listed is refused without being fetched.
	JKUAllowlist []string `json:"jku_allowlist,omitempty"`
	// Algorithms accepted; DefaultAlgorithms when empty.
	Algorithms []string `json:"algorithms,omitempty"`
	// Tenant, when set, must equal the token's tenant claim.
	Tenant string `json:"tenant,omitempty"`
	// MaxLifetimeSeconds, when above zero, bounds exp − iat. CDS Hooks
	// 2.0.1 sets no bound beyond exp (its example token lives 5 minutes;
	// the sandbox's may live longer), so by default there is none.
	MaxLifetimeSeconds int `json:"max_lifetime_seconds,omitempty"`
}

// LoadClients reads and checks a trusted-clients file: a JSON array of
// TrustedClient, unknown keys refused.
func LoadClients(path string) ([]TrustedClient, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CDS clients file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cs []TrustedClient
	if err := dec.Decode(&cs); err != nil {
		return nil, fmt.Errorf("CDS clients file %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("CDS clients file %s: more than one JSON value", path)
	}
	if err := checkClients(cs); err != nil {
		return nil, fmt.Errorf("CDS clients file %s: %w", path, err)
	}
	return cs, nil
}

func checkClients(cs []TrustedClient) error {
	if len(cs) == 0 {
		return errors.New("no clients listed")
	}
	var problems []string
	seen := map[string]bool{}
	for i, c := range cs {
		at := fmt.Sprintf("client %d", i)
		if strings.TrimSpace(c.Iss) == "" {
			problems = append(problems, at+": iss is required")
		} else if seen[c.Iss] {
			problems = append(problems, at+": iss "+c.Iss+" is listed twice")
		}
		seen[c.Iss] = true
		if c.MaxLifetimeSeconds < 0 {
			problems = append(problems, at+": max_lifetime_seconds must not be negative")
		}
		switch {
		case (c.JWKSURL == "") == (c.JWKSFile == ""):
			problems = append(problems, at+": give exactly one of jwks_url and jwks_file")
		case c.JWKSURL != "":
			if _, err := fhir.CheckServerURL(c.JWKSURL); err != nil {
				problems = append(problems, at+": jwks_url must be an https URL")
			}
		}
		for _, j := range c.JKUAllowlist {
			if _, err := fhir.CheckServerURL(j); err != nil {
				problems = append(problems, fmt.Sprintf("%s: jku_allowlist entry %q must be an https URL", at, j))
			}
		}
		for _, a := range c.Algorithms {
			if _, ok := asymmetric[a]; !ok {
				problems = append(problems, fmt.Sprintf("%s: algorithm %q is not allowed (asymmetric algorithms only: never none or HMAC)", at, a))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// AuthError is a refused EHR token: 401. Reason is safe to show (it never
// holds the token).
type AuthError struct{ Reason string }

// Error describes the refusal.
func (e *AuthError) Error() string { return "invalid CDS client token: " + e.Reason }

func authErr(format string, args ...any) error {
	return &AuthError{Reason: fmt.Sprintf(format, args...)}
}

// ErrReplayCheck is returned (wrapped) when the jti replay cache cannot be
// consulted: the call is refused with 503 rather than risk a replay.
var ErrReplayCheck = errors.New("jti replay cache unavailable")

// EpochError is a replay cache's refusal of a token issued before its
// record of used token ids began (plus the clock skew: a client whose clock
// runs ahead may have used such a token before): the cache started empty
// or lost what it held (a Redis restarted without persistence, flushed or
// failed over), so a replay of it could not be detected. The call is
// refused (401) and the client sends a newly issued token.
type EpochError struct {
	// Since is when the record began.
	Since time.Time
}

func (e *EpochError) Error() string {
	return "the token was issued before " + e.Since.UTC().Format(time.RFC3339) +
		", when the record of used token ids (jti) began"
}

// ReplayCache remembers token ids until they expire.
type ReplayCache interface {
	// Claim records key, the id of a token issued at issued, until the
	// given time; it reports false when key is already recorded (a
	// replay). A cache that knows its record of used ids began after the
	// token could have been used (it started empty or lost its record)
	// returns an *EpochError: whether the token was used cannot be known.
	Claim(ctx context.Context, key string, issued, until time.Time) (bool, error)
	// Release forgets a key this process claimed, when the call that
	// claimed it ended without an answer (a 5xx): the token was not used,
	// so the client's retry with it is accepted.
	Release(ctx context.Context, key string) error
}

// Authenticator verifies the JWTs CDS clients send (CDS Hooks 2.0 "Trusting
// CDS Clients").
type Authenticator struct {
	clients map[string]*clientKeys
	replay  ReplayCache
	now     func() time.Time
	keys    *httpx.KeySetCache
}

type clientKeys struct {
	TrustedClient
	algs map[jwa.SignatureAlgorithm]bool
}

// NewAuthenticator returns an Authenticator for the trusted clients. keys
// is the process's key-set cache (nil: one of its own, whose client
// follows no redirects); now is the clock.
func NewAuthenticator(clients []TrustedClient, replay ReplayCache, keys *httpx.KeySetCache, now func() time.Time) (*Authenticator, error) {
	if err := checkClients(clients); err != nil {
		return nil, err
	}
	if keys == nil {
		keys = httpx.NewKeySetCache(context.Background(), nil, now)
	}
	a := &Authenticator{clients: map[string]*clientKeys{}, replay: replay, now: now, keys: keys}
	for _, c := range clients {
		ck := &clientKeys{TrustedClient: c, algs: map[jwa.SignatureAlgorithm]bool{}}
		algs := c.Algorithms
		if len(algs) == 0 {
			algs = DefaultAlgorithms
		}
		for _, n := range algs {
			ck.algs[asymmetric[n]] = true
		}
		a.clients[c.Iss] = ck
	}
	return a, nil
}

var compactJWS = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

// claims are the registered claims CDS Hooks uses.
type claims struct {
	Iss    string          `json:"iss"`
	Sub    string          `json:"sub"`
	Exp    json.RawMessage `json:"exp"`
	Iat    json.RawMessage `json:"iat"`
	Nbf    json.RawMessage `json:"nbf"`
	Jti    string          `json:"jti"`
	Tenant string          `json:"tenant"`
}

// Verify checks the Authorization header of a call to audience (the exact
// URL called) and returns the caller. Failures are *AuthError (401), or
// wrap ErrReplayCheck (503).
func (a *Authenticator) Verify(ctx context.Context, authorization, audience string) (audit.Principal, error) {
	p, _, err := a.VerifyClaim(ctx, authorization, audience)
	return p, err
}

// VerifyClaim is Verify also returning release, which forgets the token's
// jti claim: the caller calls it when the call ends without an answer for
// a reason on the server's side, so that a jti is spent only when an
// answer is given.
func (a *Authenticator) VerifyClaim(ctx context.Context, authorization, audience string) (_ audit.Principal, release func(context.Context) error, _ error) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return audit.Principal{}, nil, authErr("an Authorization: Bearer token is required")
	}
	tok = strings.TrimSpace(tok)
	if len(tok) > maxTokenBytes || !compactJWS.MatchString(tok) {
		return audit.Principal{}, nil, authErr("the token is not a compact JWS")
	}
	msg, err := jws.Parse([]byte(tok))
	if err != nil || len(msg.Signatures()) != 1 {
		return audit.Principal{}, nil, authErr("the token is not a compact JWS")
	}
	hdr := msg.Signatures()[0].ProtectedHeaders()
	alg := hdr.Algorithm()
	if !strings.EqualFold(hdr.Type(), "JWT") {
		return audit.Principal{}, nil, authErr(`the header must carry typ "JWT"`)
	}
	if hdr.KeyID() == "" {
		return audit.Principal{}, nil, authErr("the header must carry kid")
	}
	if len(hdr.Critical()) > 0 {
		return audit.Principal{}, nil, authErr("critical header parameters are not supported")
	}
	// The payload is read before verification only to find the issuer;
	// nothing else is trusted until the signature is checked.
	var unverified claims
	if err := json.Unmarshal(msg.Payload(), &unverified); err != nil || unverified.Iss == "" {
		return audit.Principal{}, nil, authErr("the payload has no iss")
	}
	c, ok := a.clients[unverified.Iss]
	if !ok {
		return audit.Principal{}, nil, authErr("the issuer is not a trusted CDS client")
	}
	if !c.algs[alg] {
		return audit.Principal{}, nil, authErr("algorithm %s is not accepted for this client", alg)
	}
	src := c.source()
	if jku := hdr.JWKSetURL(); jku != "" {
		allowed := false
		for _, j := range c.JKUAllowlist {
			if j == jku {
				allowed = true
			}
		}
		if !allowed {
			return audit.Principal{}, nil, authErr("the jku header names a key set that is not allowlisted for this client")
		}
		src = jku
	}
	key, err := a.key(ctx, c, src, hdr.KeyID())
	if err != nil {
		return audit.Principal{}, nil, err
	}
	if ka := key.Algorithm().String(); ka != "" && ka != alg.String() {
		return audit.Principal{}, nil, authErr("the key is for %s, the token says %s", ka, alg)
	}
	if u := key.KeyUsage(); u != "" && u != "sig" {
		return audit.Principal{}, nil, authErr("the key is not a signing key")
	}
	payload, err := jws.Verify([]byte(tok), jws.WithKey(alg, key))
	if err != nil {
		return audit.Principal{}, nil, authErr("the signature does not verify")
	}
	var cl claims
	if err := json.Unmarshal(payload, &cl); err != nil {
		return audit.Principal{}, nil, authErr("the payload is not a JSON object")
	}
	if err := a.checkClaims(c, payload, cl, audience); err != nil {
		return audit.Principal{}, nil, err
	}
	exp, _ := seconds("exp", cl.Exp)
	iat, _ := seconds("iat", cl.Iat)
	fresh, err := a.replay.Claim(ctx, replayKey(cl.Iss, cl.Jti), iat, exp.Add(ClockSkew))
	var ee *EpochError
	if errors.As(err, &ee) {
		return audit.Principal{}, nil, authErr("%s (the replay store started or lost its record then); send a newly issued token", ee.Error())
	}
	if err != nil {
		return audit.Principal{}, nil, fmt.Errorf("%w: %v", ErrReplayCheck, err)
	}
	if !fresh {
		return audit.Principal{}, nil, authErr("the token has been used before (jti replay)")
	}
	claimed := replayKey(cl.Iss, cl.Jti)
	release = func(ctx context.Context) error { return a.replay.Release(ctx, claimed) }
	p := audit.Principal{Subject: cl.Sub, Issuer: cl.Iss}
	if p.Subject == "" {
		// CDS Hooks 2.0 does not require sub: the client is the caller.
		p.Subject = "cds-client"
	}
	if cl.Tenant != "" {
		p.Name = "tenant " + cl.Tenant
	}
	return p, release, nil
}

// checkClaims checks the verified claims: iss, aud, exp, iat and nbf
// (with ClockSkew) by jwt.Validate; by hand what jwx does not express:
// NumericDates must be JSON numbers in range (jwx also reads strings of
// digits), exp − iat within the client's limit without skew (jwx's
// WithMaxDelta widens it by the skew), a non-blank jti of at most 256
// bytes (jwx's required-claim check accepts a blank one) and the tenant.
func (a *Authenticator) checkClaims(c *clientKeys, payload []byte, cl claims, audience string) error {
	exp, err := seconds("exp", cl.Exp)
	if err != nil {
		return err
	}
	iat, err := seconds("iat", cl.Iat)
	if err != nil {
		return err
	}
	if len(cl.Nbf) > 0 && string(cl.Nbf) != "null" {
		if _, err := seconds("nbf", cl.Nbf); err != nil {
			return err
		}
	}
	tok := jwt.New()
	if err := json.Unmarshal(payload, tok); err != nil {
		return authErr("the registered claims are malformed")
	}
	err = jwt.Validate(tok,
		jwt.WithClock(jwt.ClockFunc(a.now)),
		jwt.WithAcceptableSkew(ClockSkew),
		jwt.WithIssuer(c.Iss),
		jwt.WithAudience(audience),
	)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer()):
		return authErr("iss changed between the header check and verification")
	case errors.Is(err, jwt.ErrInvalidAudience()):
		return authErr("aud must be the exact URL called")
	case errors.Is(err, jwt.ErrTokenExpired()):
		return authErr("the token has expired")
	case errors.Is(err, jwt.ErrInvalidIssuedAt()):
		return authErr("iat is in the future")
	case errors.Is(err, jwt.ErrTokenNotYetValid()):
		return authErr("the token is not valid yet (nbf)")
	case err != nil:
		return authErr("the claims do not validate")
	}
	if max := time.Duration(c.MaxLifetimeSeconds) * time.Second; max > 0 && exp.Sub(iat) > max {
		return authErr("the token lives longer than %s (exp − iat), the limit set for this client", max)
	}
	if strings.TrimSpace(cl.Jti) == "" || len(cl.Jti) > 256 {
		return authErr("jti is required")
	}
	if c.Tenant != "" && cl.Tenant != c.Tenant {
		return authErr("the tenant claim does not match this client")
	}
	return nil
}

// seconds reads a NumericDate claim: a JSON number of seconds since the
// epoch (RFC 7519 §2). A string, even of digits, is refused.
func seconds(name string, raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, authErr("%s is required", name)
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return time.Time{}, authErr("%s must be a JSON number (NumericDate)", name)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return time.Time{}, authErr("%s is not a valid NumericDate", name)
	}
	return time.Unix(int64(f), 0), nil
}

func replayKey(iss, jti string) string {
	h := sha256.Sum256([]byte(iss + "\x00" + jti))
	return hex.EncodeToString(h[:])
}

func (c *clientKeys) source() string {
	if c.JWKSURL != "" {
		return c.JWKSURL
	}
	return "file:" + c.JWKSFile
}

// key returns the key with kid from the client's key set at src (from
// the shared key-set cache), fetching the set when it is missing or older
// than keySetTTL, and again (at most every keySetMinRefresh) when the kid
// is unknown: keys rotate. Only public keys are used, whatever the
// document holds.
func (a *Authenticator) key(ctx context.Context, c *clientKeys, src, kid string) (jwk.Key, error) {
	set, fetched, err := a.keys.Get(ctx, src, keySetTTL)
	if err != nil {
		return nil, keySetProblem(err)
	}
	k, err := publicKey(set, kid)
	if err == nil || a.now().Sub(fetched) < keySetMinRefresh {
		return k, err
	}
	if set, _, rerr := a.keys.Refresh(ctx, src, keySetMinRefresh); rerr == nil {
		return publicKey(set, kid)
	}
	return nil, err
}

// publicKey returns the public key with kid of set.
func publicKey(set jwk.Set, kid string) (jwk.Key, error) {
	pub, err := jwk.PublicSetOf(set)
	if err != nil {
		return nil, authErr("the client's key set holds unusable keys")
	}
	if k, ok := pub.LookupKeyID(kid); ok {
		return k, nil
	}
	return nil, authErr("no key with the token's kid in the client's key set")
}

// keySetProblem is the 401 of a key set that could not be had.
func keySetProblem(err error) error {
	var ke *httpx.KeySetError
	if errors.As(err, &ke) {
		return authErr("the client's %s", ke.Reason)
	}
	return authErr("the client's key set cannot be fetched")
}

// memoryReplay is the in-process jti cache.
type memoryReplay struct {
	mu   sync.Mutex
	seen map[string]time.Time
	now  func() time.Time
	// sweepAt is the size at which expired entries are swept.
	sweepAt int
}

// maxReplayEntries bounds the in-memory cache: beyond it (after sweeping
// expired entries) new tokens are refused rather than remembered less.
const maxReplayEntries = 1 << 20

// NewMemoryReplayCache returns a ReplayCache kept in memory (one process).
// It is lost when the process ends and keeps no epoch: a token used before
// a restart and still unexpired is accepted again by the new process.
// Deployments that restart or run several replicas use Redis (its cache
// detects its own loss, see EpochError).
func NewMemoryReplayCache(now func() time.Time) ReplayCache {
	return &memoryReplay{seen: map[string]time.Time{}, now: now, sweepAt: 1024}
}

// Claim implements ReplayCache.
func (m *memoryReplay) Claim(_ context.Context, key string, _, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if exp, ok := m.seen[key]; ok && now.Before(exp) {
		return false, nil
	}
	if len(m.seen) >= m.sweepAt {
		for k, exp := range m.seen {
			if !now.Before(exp) {
				delete(m.seen, k)
			}
		}
		if len(m.seen) >= maxReplayEntries {
			return false, errors.New("in-memory jti cache is full")
		}
		m.sweepAt = max(1024, 2*len(m.seen))
	}
	m.seen[key] = until
	return true, nil
}

// Release implements ReplayCache.
func (m *memoryReplay) Release(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.seen, key)
	m.mu.Unlock()
	return nil
}
