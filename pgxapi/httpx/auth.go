package httpx

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// Verifier verifies a bearer token and returns the caller it identifies.
type Verifier interface {
	// Verify returns the principal of a valid token. Errors wrap
	// ErrInvalidToken (the caller's fault: 401) or ErrKeysUnavailable
	// (ours: 503).
	Verify(ctx context.Context, token string) (audit.Principal, error)
}

// ErrInvalidToken is the kind of every rejected token.
var ErrInvalidToken = errors.New("invalid bearer token")

// ErrKeysUnavailable is returned when the identity provider's keys cannot
// be obtained, so no token can be checked.
var ErrKeysUnavailable = errors.New("identity provider keys unavailable")

// TokenError is a rejected token with the reason, for logs (never the
// token itself). It wraps ErrInvalidToken.
type TokenError struct {
	Reason string
}

// Error describes the rejection.
func (e *TokenError) Error() string { return "invalid bearer token: " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidToken) true.
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

func invalid(format string, args ...any) error {
	return &TokenError{Reason: fmt.Sprintf(format, args...)}
}

// DefaultAlgorithms are the signature algorithms accepted when none are
// configured.
var DefaultAlgorithms = []string{"RS256", "RS384", "PS256", "ES256", "ES384"}

// asymmetricAlgorithms are the only algorithms that may be configured:
// never "none", never HMAC (a verifier holding an HMAC key could mint
// tokens, and HS256 "signed" with a public key is a classic forgery).
var asymmetricAlgorithms = map[string]jwa.SignatureAlgorithm{
	"RS256": jwa.RS256, "RS384": jwa.RS384, "RS512": jwa.RS512,
	"PS256": jwa.PS256, "PS384": jwa.PS384, "PS512": jwa.PS512,
	"ES256": jwa.ES256, "ES384": jwa.ES384, "ES512": jwa.ES512,
	"EdDSA": jwa.EdDSA,
}

// Defaults of OIDCConfig.
const (
	DefaultClockSkew          = 60 * time.Second
	DefaultMaxTokenAge        = 24 * time.Hour
	DefaultKeyRefresh         = 15 * time.Minute
	DefaultMinKeyRefresh      = 30 * time.Second
	maxTokenBytes             = 16 << 10
	maxDiscoveryBytes         = 1 << 20
	defaultFetchTimeout       = 10 * time.Second
	minRSABits                = 2048
	maxClaimLen               = 255
	wellKnownOpenIDConfigPath = "/.well-known/openid-configuration"
)

// OIDCConfig configures an OIDCVerifier.
type OIDCConfig struct {
	// Issuer is the exact "iss" of accepted tokens. Unless JWKSURL,
	// JWKSFile or Keys is set, the key set is found by OpenID Connect
	// discovery at Issuer + "/.well-known/openid-configuration", which
	// must name the same issuer. It must be an https URL (http is
	// accepted for loopback hosts, for tests).
	Issuer string
	// Audience must be one of the token's "aud" values (the client id).
	Audience string
	// JWKSURL, when set, is fetched instead of discovering it.
	JWKSURL string
	// JWKSFile, when set, is read instead of fetching keys (air-gapped
	// deployments); it is read again on every refresh, so replacing the
	// file rotates keys.
	JWKSFile string
	// Keys, when set, is a fixed key set (local development mode).
	Keys jwk.Set
	// Algorithms lists the accepted "alg" values (DefaultAlgorithms when
	// empty); only asymmetric algorithms are allowed.
	Algorithms []string
	// ClockSkew is the leeway for exp, nbf and iat (DefaultClockSkew).
	ClockSkew time.Duration
	// MaxTokenAge rejects tokens issued ("iat") longer ago than this
	// (DefaultMaxTokenAge), whatever their "exp".
	MaxTokenAge time.Duration
	// KeyRefresh is how old the cached key set may grow before it is
	// fetched again in the background (DefaultKeyRefresh).
	KeyRefresh time.Duration
	// MinKeyRefresh is the least time between two fetches triggered by a
	// token whose "kid" is unknown (DefaultMinKeyRefresh), so forged kids
	// cannot make us hammer the issuer.
	MinKeyRefresh time.Duration
	// HTTPClient fetches discovery and keys (a client with a 10 s timeout
	// when nil).
	HTTPClient *http.Client
	// KeySets is the process's key-set cache, shared with the CDS
	// authenticator; nil means one of the verifier's own (over
	// HTTPClient).
	KeySets *KeySetCache
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives key-refresh failures (no logging when nil).
	Log *zap.Logger
}

// OIDCVerifier verifies OpenID Connect ID tokens: compact JWS, an allowed
// asymmetric algorithm, a key of the issuer's key set chosen by "kid", the
// signature, "iss", "aud", "exp", "nbf" and "iat" (with skew), a maximum
// token age and a usable "sub". The key set is cached, refreshed in the
// background when stale and at once (rate-limited) when a token names an
// unknown key, so issuer key rotation is picked up without a restart.
type OIDCVerifier struct {
	cfg     OIDCConfig
	algs    map[jwa.SignatureAlgorithm]bool
	client  *http.Client
	jwksURL string // discovered or configured; guarded by refreshMu

	mu        sync.RWMutex
	keys      []jwk.Key // public signing keys
	fetchedAt time.Time

	refreshMu   sync.Mutex // one fetch at a time
	lastAttempt time.Time  // guarded by refreshMu
	background  atomic.Bool

	// verified caches the principals of tokens that verified, keyed by
	// the SHA-256 of the token (see cachedPrincipal).
	verifiedMu sync.Mutex
	verified   map[[sha256.Size]byte]verifiedToken
}

// Verified-token cache bounds: a token's signature and claims are checked
// once, and its principal reused until the token expires, reaches its
// maximum age, verifiedTokenTTL passes or the key set changes, whichever
// comes first. At most verifiedTokenCap tokens are remembered.
const (
	verifiedTokenCap = 4096
	verifiedTokenTTL = 5 * time.Minute
)

// verifiedToken is one entry of the verified-token cache.
type verifiedToken struct {
	p      audit.Principal
	until  time.Time // first instant the entry is no longer used
	keysAt time.Time // fetchedAt of the key set the token verified with
}

// cachedPrincipal returns the principal of a token verified before with
// the current key set and still within its validity.
func (v *OIDCVerifier) cachedPrincipal(sum [sha256.Size]byte, now time.Time) (audit.Principal, bool) {
	v.mu.RLock()
	keysAt := v.fetchedAt
	v.mu.RUnlock()
	v.verifiedMu.Lock()
	e, ok := v.verified[sum]
	v.verifiedMu.Unlock()
	if !ok || !now.Before(e.until) || !e.keysAt.Equal(keysAt) {
		return audit.Principal{}, false
	}
	if v.cfg.Keys == nil && now.Sub(keysAt) > v.cfg.KeyRefresh {
		v.refreshInBackground()
	}
	return e.p, true
}

// remember caches a verified token's principal until until.
func (v *OIDCVerifier) remember(sum [sha256.Size]byte, p audit.Principal, keysAt, now, until time.Time) {
	until = minTime(until, now.Add(verifiedTokenTTL))
	v.verifiedMu.Lock()
	defer v.verifiedMu.Unlock()
	if v.verified == nil {
		v.verified = make(map[[sha256.Size]byte]verifiedToken)
	}
	if len(v.verified) >= verifiedTokenCap {
		for k, e := range v.verified {
			if !now.Before(e.until) {
				delete(v.verified, k)
			}
		}
		// Still full: drop entries at random (map order) until there is room.
		for k := range v.verified {
			if len(v.verified) < verifiedTokenCap {
				break
			}
			delete(v.verified, k)
		}
	}
	v.verified[sum] = verifiedToken{p: p, until: until, keysAt: keysAt}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// NewOIDCVerifier checks cfg and returns a verifier. It does not fetch
// keys; call Refresh to fetch them up front (a failed fetch is retried
// when tokens arrive).
func NewOIDCVerifier(cfg OIDCConfig) (*OIDCVerifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oidc: issuer is required")
	}
	if cfg.Audience == "" {
		return nil, errors.New("oidc: audience is required")
	}
	if cfg.Keys == nil && cfg.JWKSFile == "" {
		if err := checkFetchURL("issuer", cfg.Issuer); err != nil {
			return nil, err
		}
		if cfg.JWKSURL != "" {
			if err := checkFetchURL("JWKS URL", cfg.JWKSURL); err != nil {
				return nil, err
			}
		}
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms
	}
	algs := map[jwa.SignatureAlgorithm]bool{}
	for _, a := range cfg.Algorithms {
		alg, ok := asymmetricAlgorithms[strings.TrimSpace(a)]
		if !ok {
			return nil, fmt.Errorf("oidc: algorithm %q is not allowed (allowed: RS256/384/512, PS256/384/512, ES256/384/512, EdDSA)", a)
		}
		algs[alg] = true
	}
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.MaxTokenAge <= 0 {
		cfg.MaxTokenAge = DefaultMaxTokenAge
	}
	if cfg.KeyRefresh <= 0 {
		cfg.KeyRefresh = DefaultKeyRefresh
	}
	if cfg.MinKeyRefresh <= 0 {
		cfg.MinKeyRefresh = DefaultMinKeyRefresh
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: defaultFetchTimeout}
	}
	if cfg.KeySets == nil {
		cfg.KeySets = NewKeySetCache(context.Background(), client, cfg.Now)
	}
	v := &OIDCVerifier{cfg: cfg, algs: algs, client: client, jwksURL: cfg.JWKSURL}
	if cfg.Keys != nil {
		keys, err := signingKeys(cfg.Keys)
		if err != nil {
			return nil, err
		}
		v.keys, v.fetchedAt = keys, cfg.Now()
	}
	return v, nil
}

// checkFetchURL requires https, or http on a loopback host.
func checkFetchURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oidc: %s %q is not an absolute URL", what, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("oidc: %s %q must use https", what, raw)
}

// Issuer returns the configured issuer.
func (v *OIDCVerifier) Issuer() string { return v.cfg.Issuer }

// Refresh fetches the key set now (discovering its URL first when
// needed). A fixed key set (Keys) is never refreshed.
func (v *OIDCVerifier) Refresh(ctx context.Context) error {
	if v.cfg.Keys != nil {
		return nil
	}
	v.refreshMu.Lock()
	defer v.refreshMu.Unlock()
	return v.refreshLocked(ctx)
}

func (v *OIDCVerifier) refreshLocked(ctx context.Context) error {
	v.lastAttempt = v.cfg.Now()
	set, err := v.fetchKeySet(ctx)
	if err != nil {
		v.cfg.Log.Warn("identity provider key refresh failed", zap.String("issuer", v.cfg.Issuer), zap.Error(err))
		return fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
	}
	keys, err := signingKeys(set)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
	}
	v.mu.Lock()
	v.keys, v.fetchedAt = keys, v.cfg.Now()
	v.mu.Unlock()
	return nil
}

func (v *OIDCVerifier) fetchKeySet(ctx context.Context) (jwk.Set, error) {
	src := "file:" + v.cfg.JWKSFile
	if v.cfg.JWKSFile == "" {
		if v.jwksURL == "" {
			u, err := v.discover(ctx)
			if err != nil {
				return nil, err
			}
			v.jwksURL = u
		}
		src = v.jwksURL
	}
	// The verifier throttles its own refreshes (MinKeyRefresh): the
	// shared cache fetches whenever asked.
	set, _, err := v.cfg.KeySets.Refresh(ctx, src, 0)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	return set, nil
}

// discover reads the issuer's OpenID configuration and returns its
// jwks_uri.
func (v *OIDCVerifier) discover(ctx context.Context) (string, error) {
	b, err := v.get(ctx, strings.TrimSuffix(v.cfg.Issuer, "/")+wellKnownOpenIDConfigPath)
	if err != nil {
		return "", fmt.Errorf("discovery: %w", err)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("discovery document: %w", err)
	}
	if doc.Issuer != v.cfg.Issuer {
		return "", fmt.Errorf("discovery document names issuer %q, configured %q", doc.Issuer, v.cfg.Issuer)
	}
	if err := checkFetchURL("jwks_uri", doc.JWKSURI); err != nil {
		return "", err
	}
	return doc.JWKSURI, nil
}

func (v *OIDCVerifier) get(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDiscoveryBytes {
		return nil, fmt.Errorf("GET %s: body over %d bytes", u, maxDiscoveryBytes)
	}
	return b, nil
}

// signingKeys returns the public signature keys of set: RSA, EC and OKP
// keys whose "use" is absent or "sig". Symmetric keys are dropped, so an
// HMAC key can never verify a token.
func signingKeys(set jwk.Set) ([]jwk.Key, error) {
	var keys []jwk.Key
	for i := range set.Len() {
		k, _ := set.Key(i)
		if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
			continue
		}
		switch k.KeyType() {
		case jwa.RSA, jwa.EC, jwa.OKP:
		default:
			continue
		}
		pub, err := jwk.PublicKeyOf(k)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID(), err)
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set has no usable signature keys")
	}
	return keys, nil
}

// Verify implements Verifier.
func (v *OIDCVerifier) Verify(ctx context.Context, token string) (audit.Principal, error) {
	if len(token) > maxTokenBytes {
		return audit.Principal{}, invalid("token longer than %d bytes", maxTokenBytes)
	}
	if strings.Count(token, ".") != 2 {
		return audit.Principal{}, invalid("not a compact JWS")
	}
	sum := sha256.Sum256([]byte(token))
	if p, ok := v.cachedPrincipal(sum, v.cfg.Now()); ok {
		return p, nil
	}
	v.mu.RLock()
	keysAt := v.fetchedAt
	v.mu.RUnlock()
	msg, err := jws.Parse([]byte(token), jws.WithCompact())
	if err != nil {
		return audit.Principal{}, invalid("malformed JWS")
	}
	sigs := msg.Signatures()
	if len(sigs) != 1 {
		return audit.Principal{}, invalid("want exactly one signature")
	}
	if err := CheckNumericDates(msg.Payload()); err != nil {
		return audit.Principal{}, invalid("%s", err)
	}
	h := sigs[0].ProtectedHeaders()
	alg := h.Algorithm()
	if !v.algs[alg] {
		return audit.Principal{}, invalid("algorithm %q is not accepted", alg)
	}
	if len(h.Critical()) > 0 {
		return audit.Principal{}, invalid("critical header parameters are not supported")
	}
	if typ := h.Type(); typ != "" && !strings.EqualFold(typ, "JWT") {
		return audit.Principal{}, invalid("token type %q is not JWT", typ)
	}
	key, err := v.key(ctx, h.KeyID(), alg)
	if err != nil {
		return audit.Principal{}, err
	}
	now := v.cfg.Now()
	tok, err := jwt.Parse([]byte(token),
		jwt.WithKey(alg, key),
		jwt.WithValidate(true),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
		jwt.WithAcceptableSkew(v.cfg.ClockSkew),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithAudience(v.cfg.Audience),
		jwt.WithRequiredClaim(jwt.SubjectKey),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithRequiredClaim(jwt.IssuedAtKey),
		jwt.WithValidator(jwt.ValidatorFunc(v.maxAge)),
	)
	if err != nil {
		return audit.Principal{}, invalid("%s", v.claimReason(err))
	}
	sub := tok.Subject()
	if !cleanClaim(sub) {
		return audit.Principal{}, invalid(`"sub" is empty, too long or holds control characters`)
	}
	p := audit.Principal{Subject: sub, Issuer: tok.Issuer()}
	if name, ok := stringClaim(tok, "name"); ok {
		p.Name = name
	}
	if email, ok := stringClaim(tok, "email"); ok {
		p.Email = email
	}
	// keysAt was read before the key lookup: if the set was refreshed
	// meanwhile, the entry is simply never used.
	v.remember(sum, p, keysAt, now, minTime(tok.Expiration(), tok.IssuedAt().Add(v.cfg.MaxTokenAge)))
	return p, nil
}

// errTooOld is the cause of maxAge's validation error.
var errTooOld = errors.New("token older than the maximum age")

// maxAge refuses a token issued more than MaxTokenAge (plus the skew)
// ago: jwx's MaxDelta check between now ("") and iat, with its own error.
func (v *OIDCVerifier) maxAge(ctx context.Context, tok jwt.Token) jwt.ValidationError {
	if jwt.MaxDeltaIs("", jwt.IssuedAtKey, v.cfg.MaxTokenAge).Validate(ctx, tok) != nil {
		return jwt.NewValidationError(errTooOld)
	}
	return nil
}

// claimReason turns a jwx validation error into a short reason.
func (v *OIDCVerifier) claimReason(err error) string {
	switch {
	case errors.Is(err, errTooOld):
		return fmt.Sprintf("token issued more than the maximum age %s ago", v.cfg.MaxTokenAge)
	case errors.Is(err, jwt.ErrTokenExpired()):
		return "token expired"
	case errors.Is(err, jwt.ErrTokenNotYetValid()):
		return `token not valid yet ("nbf")`
	case errors.Is(err, jwt.ErrInvalidIssuedAt()):
		return `"iat" is in the future`
	case errors.Is(err, jwt.ErrInvalidAudience()):
		return "wrong audience"
	case errors.Is(err, jwt.ErrInvalidIssuer()):
		return "wrong issuer"
	case errors.Is(err, jwt.ErrRequiredClaim()):
		return "a required claim (sub, exp, iat) is missing"
	}
	var ve jwt.ValidationError
	if errors.As(err, &ve) {
		return "claims do not validate"
	}
	return "signature or payload does not verify"
}

func cleanClaim(s string) bool {
	if s == "" || len(s) > maxClaimLen || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, unicode.IsControl)
}

func stringClaim(tok jwt.Token, name string) (string, bool) {
	v, ok := tok.Get(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok || !cleanClaim(s) {
		return "", false
	}
	return s, true
}

// key returns the key for kid that can verify alg, refreshing the key set
// when it is stale (in the background) or does not know kid (at once, at
// most every MinKeyRefresh).
func (v *OIDCVerifier) key(ctx context.Context, kid string, alg jwa.SignatureAlgorithm) (jwk.Key, error) {
	v.mu.RLock()
	keys, fetchedAt := v.keys, v.fetchedAt
	v.mu.RUnlock()

	if keys == nil {
		if err := v.refreshIfAllowed(ctx); err != nil {
			return nil, err
		}
		v.mu.RLock()
		keys = v.keys
		v.mu.RUnlock()
		if keys == nil {
			return nil, fmt.Errorf("%w: no key set fetched yet", ErrKeysUnavailable)
		}
	} else if v.cfg.Keys == nil && v.cfg.Now().Sub(fetchedAt) > v.cfg.KeyRefresh {
		v.refreshInBackground()
	}

	if k, err := pickKey(keys, kid, alg); err == nil || !errors.Is(err, errUnknownKey) {
		return k, err
	}
	// Unknown kid: the issuer may have rotated its keys.
	if v.cfg.Keys != nil {
		return nil, invalid("unknown key id")
	}
	if err := v.refreshIfAllowed(ctx); err != nil && !errors.Is(err, errRefreshThrottled) {
		return nil, err
	}
	v.mu.RLock()
	keys = v.keys
	v.mu.RUnlock()
	k, err := pickKey(keys, kid, alg)
	if errors.Is(err, errUnknownKey) {
		return nil, invalid("unknown key id")
	}
	return k, err
}

var (
	errUnknownKey       = errors.New("unknown key id")
	errRefreshThrottled = errors.New("key refresh throttled")
)

// refreshIfAllowed fetches the key set unless a fetch started less than
// MinKeyRefresh ago. Callers arriving while a fetch runs wait for it and
// share its result.
func (v *OIDCVerifier) refreshIfAllowed(ctx context.Context) error {
	before := v.cfg.Now()
	v.refreshMu.Lock()
	defer v.refreshMu.Unlock()
	if !v.lastAttempt.IsZero() && !v.lastAttempt.Before(before.Add(-v.cfg.MinKeyRefresh)) {
		// Someone fetched recently (maybe while we waited): use that.
		v.mu.RLock()
		have := v.keys != nil
		v.mu.RUnlock()
		if have {
			return errRefreshThrottled
		}
		return fmt.Errorf("%w: last fetch failed; retrying after %s", ErrKeysUnavailable, v.cfg.MinKeyRefresh)
	}
	return v.refreshLocked(ctx)
}

func (v *OIDCVerifier) refreshInBackground() {
	if !v.background.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer v.background.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), defaultFetchTimeout)
		defer cancel()
		_ = v.Refresh(ctx) // failures are logged; the cached keys stay in use
	}()
}

// pickKey finds the key named kid that suits alg. A token without kid is
// accepted only when exactly one key suits alg.
func pickKey(keys []jwk.Key, kid string, alg jwa.SignatureAlgorithm) (jwk.Key, error) {
	var named, suitable []jwk.Key
	for _, k := range keys {
		if kid != "" && k.KeyID() != kid {
			continue
		}
		named = append(named, k)
		if suits(k, alg) {
			suitable = append(suitable, k)
		}
	}
	switch {
	case kid != "" && len(named) == 0:
		return nil, errUnknownKey
	case len(suitable) == 0:
		return nil, invalid("no key of the issuer suits algorithm %q", alg)
	case kid == "" && len(suitable) > 1:
		return nil, invalid(`the token names no key ("kid") and several keys suit it`)
	}
	return suitable[0], nil
}

// suits reports whether k may verify alg: the key's own "alg" (when set)
// must match, its type must be the algorithm's, EC curves must match, and
// RSA keys must have at least 2048 bits.
func suits(k jwk.Key, alg jwa.SignatureAlgorithm) bool {
	if ka := k.Algorithm().String(); ka != "" && ka != alg.String() {
		return false
	}
	var raw any
	if err := k.Raw(&raw); err != nil {
		return false
	}
	switch alg {
	case jwa.RS256, jwa.RS384, jwa.RS512, jwa.PS256, jwa.PS384, jwa.PS512:
		pub, ok := raw.(*rsa.PublicKey)
		return ok && pub.N.BitLen() >= minRSABits
	case jwa.ES256, jwa.ES384, jwa.ES512:
		pub, ok := raw.(*ecdsa.PublicKey)
		if !ok {
			return false
		}
		want := map[jwa.SignatureAlgorithm]elliptic.Curve{jwa.ES256: elliptic.P256(), jwa.ES384: elliptic.P384(), jwa.ES512: elliptic.P521()}[alg]
		return pub.Curve == want
	case jwa.EdDSA:
		return k.KeyType() == jwa.OKP
	}
	return false
}

// --- middleware ---------------------------------------------------------

// Protection says which requests need a bearer token. A surface states
// its own (pgxapi.Protection) and the server hands it to Chain: httpx
// knows no surface's paths.
type Protection struct {
	// Prefixes are the path prefixes ("/pgx") whose every route requires
	// a token, including routes added later and paths no route matches.
	Prefixes []string
	// Public are the only routes under Prefixes answered without a token,
	// for GET and HEAD.
	Public []string
}

// RequiresAuth reports whether r needs a bearer token: everything under
// the protected prefixes except GET (or HEAD) of a public route. The rule
// works on path prefixes, so routes added later under those prefixes are
// protected without registering them anywhere. Both the raw and the
// cleaned path are checked, so dot segments or doubled slashes cannot
// step around it.
func (pr Protection) RequiresAuth(r *http.Request) bool {
	p := r.URL.Path
	clean := path.Clean("/" + p)
	if !pr.under(p) && !pr.under(clean) {
		return false
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && p == clean && slices.Contains(pr.Public, p) {
		return false
	}
	return true
}

func (pr Protection) under(p string) bool {
	for _, prefix := range pr.Prefixes {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// bearerToken returns the token of the request's single Authorization
// header of scheme Bearer (RFC 6750 §2.1).
func bearerToken(h http.Header) (string, error) {
	vals := h.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", invalid("no Authorization header")
	case 1:
	default:
		return "", invalid("more than one Authorization header")
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", invalid("the Authorization scheme is not Bearer")
	}
	token = strings.TrimLeft(token, " ")
	if token == "" {
		return "", invalid("empty bearer token")
	}
	for _, c := range []byte(token) {
		// token68 characters.
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
		if !ok {
			return "", invalid("the bearer token holds characters outside token68")
		}
	}
	return token, nil
}

// unauthorized is the 401 problem of every missing or rejected token. The
// detail never says which check failed (the log does, at debug level).
func unauthorized() *Error {
	return &Error{
		Kind:   KindUnauthorized,
		Detail: "this endpoint requires Authorization: Bearer <id_token> with a valid, unexpired OpenID Connect ID token",
		Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}},
	}
}

// Authenticate requires a valid bearer token on every request that pr
// protects, and puts the verified principal into the request context
// (WithPrincipal). Missing or invalid tokens get 401 problems with
// WWW-Authenticate; when the identity provider's keys cannot be obtained
// the answer is 503. Tokens are never logged.
func Authenticate(v Verifier, pr Protection, m *Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !pr.RequiresAuth(r) {
				next.ServeHTTP(w, r)
				return
			}
			token, err := bearerToken(r.Header)
			var p audit.Principal
			if err == nil {
				p, err = v.Verify(r.Context(), token)
			}
			if err != nil {
				reason := "invalid"
				var te *TokenError
				if errors.As(err, &te) {
					reason = te.Reason
				}
				if errors.Is(err, ErrKeysUnavailable) {
					m.authFailure("keys_unavailable")
					Logger(r.Context()).Error("cannot verify tokens", zap.Error(err))
					WriteProblem(w, r, &Error{
						Kind:   KindIdentityUnavailable,
						Detail: "the identity provider's keys are unavailable; no request can be authenticated now",
						Header: http.Header{"Retry-After": {"30"}},
					})
					return
				}
				m.authFailure("invalid_token")
				Logger(r.Context()).Debug("bearer token rejected", zap.String("reason", reason))
				WriteProblem(w, r, unauthorized())
				return
			}
			infoFrom(r.Context()).setSubject(SubjectHash(p))
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
		})
	}
}
