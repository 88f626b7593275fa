package smart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"go.uber.org/zap"
	"golang.org/x/oauth2"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// smartConfiguration is the part of {iss}/.well-known/smart-configuration
// the app reads.
type smartConfiguration struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
	Capabilities          []string `json:"capabilities"`
}

// discoveryTTL is how long a smart-configuration is reused.
const discoveryTTL = 10 * time.Minute

type discoveryCache struct {
	hc  *http.Client
	now func() time.Time
	mu  sync.Mutex
	m   map[string]cachedConfig
}

type cachedConfig struct {
	cfg     smartConfiguration
	expires time.Time
}

func newDiscoveryCache(hc *http.Client, now func() time.Time) *discoveryCache {
	return &discoveryCache{hc: hc, now: now, m: map[string]cachedConfig{}}
}

// errAuthServer is the kind of every failure of an EHR's authorization
// server (discovery, token, keys).
var errAuthServer = errors.New("authorization server error")

// get returns the checked smart-configuration of the EHR at iss.
func (d *discoveryCache) get(ctx context.Context, iss string) (smartConfiguration, error) {
	key := normISS(iss)
	d.mu.Lock()
	c, ok := d.m[key]
	d.mu.Unlock()
	if ok && d.now().Before(c.expires) {
		return c.cfg, nil
	}
	var cfg smartConfiguration
	if err := getJSON(ctx, d.hc, key+"/.well-known/smart-configuration", &cfg); err != nil {
		return cfg, fmt.Errorf("%w: the EHR's SMART configuration: %v", errAuthServer, err)
	}
	for name, u := range map[string]string{"authorization_endpoint": cfg.AuthorizationEndpoint, "token_endpoint": cfg.TokenEndpoint} {
		if err := checkEndpoint(u); err != nil {
			return cfg, fmt.Errorf("%w: the EHR's SMART configuration: %s %v", errAuthServer, name, err)
		}
	}
	if cfg.CodeChallengeMethods != nil && !contains(cfg.CodeChallengeMethods, "S256") {
		return cfg, fmt.Errorf("%w: the EHR's authorization server does not support PKCE S256 (code_challenge_methods_supported); pgxsafety never uses plain", errAuthServer)
	}
	d.mu.Lock()
	d.m[key] = cachedConfig{cfg: cfg, expires: d.now().Add(discoveryTTL)}
	d.mu.Unlock()
	return cfg, nil
}

// checkEndpoint accepts an absolute https URL (http for loopback hosts
// only, as the FHIR client does).
func checkEndpoint(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return errors.New("is missing")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("is not an absolute URL")
	}
	if u.Scheme == "https" {
		return nil
	}
	if _, err := fhir.CheckServerURL(u.Scheme + "://" + u.Host); err != nil || u.Scheme != "http" {
		return errors.New("must be https")
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// getJSON fetches a JSON document (bounded, 200 only).
func getJSON(ctx context.Context, hc *http.Client, u string, dst any) error {
	ctx, cancel := context.WithTimeout(ctx, httpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return errors.New("bad URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("no answer in time")
		}
		return errors.New("could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("answered %q, not JSON", clip(mt, 60))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAuthBody+1))
	if err != nil || len(b) > maxAuthBody {
		return errors.New("answer unreadable or too large")
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return errors.New("answer is not the JSON expected")
	}
	return nil
}

// oauthConfig is the oauth2 configuration of one EHR.
func (s *Server) oauthConfig(e *EHR, sc smartConfiguration, standalone bool) *oauth2.Config {
	scopes := firstNonEmpty(e.Scopes, DefaultScopes)
	if standalone {
		scopes = firstNonEmpty(e.StandaloneScopes, DefaultStandaloneScopes)
	}
	c := &oauth2.Config{
		ClientID:    e.ClientID,
		RedirectURL: s.RedirectURI(),
		Scopes:      strings.Fields(scopes),
		Endpoint: oauth2.Endpoint{AuthURL: sc.AuthorizationEndpoint, TokenURL: sc.TokenEndpoint,
			AuthStyle: oauth2.AuthStyleInParams},
	}
	if e.ClientType == ClientConfidentialSymmetric {
		c.ClientSecret = e.ClientSecret
		c.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	return c
}

// maxLaunchParam bounds the iss and launch parameters.
const maxLaunchParam = 2048

// launch starts an EHR launch (iss and launch) or a standalone launch
// (iss alone): it checks iss against the registered EHRs, discovers the
// authorization server, and redirects there with PKCE S256, an
// unpredictable state bound to this browser, and aud = iss.
func (s *Server) launch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	iss, launch := strings.TrimSpace(q.Get("iss")), strings.TrimSpace(q.Get("launch"))
	if iss == "" {
		return &pageError{Kind: httpx.KindMalformed, Title: "The launch names no EHR",
			Detail: "The launch URL needs an iss parameter naming the EHR's FHIR server. Open the review from the EHR (or from the list of EHRs on the app's start page).",
			Link:   PathIndex}
	}
	if len(iss) > maxLaunchParam || len(launch) > maxLaunchParam {
		return &pageError{Kind: httpx.KindMalformed, Title: "The launch is not valid", Detail: "The iss or launch parameter is too long."}
	}
	ehr, ok := s.ehrs[normISS(iss)]
	if !ok {
		return &pageError{Kind: httpx.KindForbidden, Title: "This EHR is not registered",
			Detail: "pgxsafety accepts launches only from the EHRs its operator registered. The FHIR server named in the launch (iss) is not one of them, so no data was requested."}
	}
	sc, err := s.disco.get(r.Context(), ehr.ISS)
	if err != nil {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR's authorization server could not be used", Detail: err.Error(), Err: err}
	}
	browser := s.browserID(w, r)
	state := randomToken(32)
	verifier := oauth2.GenerateVerifier()
	p := &pending{browser: browser, ehr: ehr, iss: iss, verifier: verifier, launch: launch,
		standalone: launch == "", expires: s.now().Add(launchTTL)}
	if err := s.store.putPending(r.Context(), state, p); err != nil {
		return storeFailure(err, "Too many launches in progress")
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("aud", iss)}
	if launch != "" {
		opts = append(opts, oauth2.SetAuthURLParam("launch", launch))
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.oauthConfig(ehr, sc, p.standalone).AuthCodeURL(state, opts...), http.StatusFound)
	return nil
}

// callback completes a launch: it checks state against this browser's
// pending launch, exchanges the code with the PKCE verifier, verifies the
// id_token, keeps the session on the server and redirects to the review.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		detail := "The EHR's authorization server answered " + clip(e, 80)
		if d := q.Get("error_description"); d != "" {
			detail += ": " + clip(d, 300)
		}
		return &pageError{Kind: httpx.KindForbidden, Title: "Access was not granted", Detail: detail + ". Launch the review again from the EHR."}
	}
	state, code := q.Get("state"), q.Get("code")
	if state == "" || code == "" {
		return &pageError{Kind: httpx.KindMalformed, Title: "The authorization answer is incomplete",
			Detail: "The callback needs code and state. Launch the review again from the EHR."}
	}
	p, err := s.store.takePending(r.Context(), state, existingBrowserID(r))
	if err != nil {
		return lookupFailure(r.Context(), err, "launch", &pageError{Kind: httpx.KindMalformed, Title: "This sign-in is not valid",
			Detail: "The state of the authorization answer does not match a launch made from this browser in the last 10 minutes (it may have been used already, have expired, or come from elsewhere). Launch the review again from the EHR."})
	}
	ctx := r.Context()
	sc, err := s.disco.get(ctx, p.ehr.ISS)
	if err != nil {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR's authorization server could not be used", Detail: err.Error(), Err: err}
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(p.verifier)}
	if p.ehr.ClientType == ClientConfidentialAsymmetric {
		assertion, err := s.clientAssertion(p.ehr, sc.TokenEndpoint)
		if err != nil {
			return err
		}
		opts = append(opts,
			oauth2.SetAuthURLParam("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
			oauth2.SetAuthURLParam("client_assertion", assertion))
	}
	xctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, s.hc), httpTimeout)
	defer cancel()
	tok, err := s.oauthConfig(p.ehr, sc, p.standalone).Exchange(xctx, code, opts...)
	if err != nil {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR did not issue an access token",
			Detail: tokenErrorText(err) + " Launch the review again from the EHR.", Err: errors.New(tokenErrorText(err))}
	}
	if !strings.EqualFold(tok.Type(), "Bearer") || tok.AccessToken == "" {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR did not issue an access token", Detail: "The token response holds no bearer access token."}
	}
	patient, _ := tok.Extra("patient").(string)
	if !validID(patient) {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR named no patient",
			Detail: "The token response has no valid patient id, so there is no patient to review. Launch from a patient's chart, or pick a patient when the EHR asks."}
	}
	idToken, _ := tok.Extra("id_token").(string)
	principal, err := s.verifyIDToken(ctx, p.ehr, sc, idToken)
	if err != nil {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR did not identify the user",
			Detail: "pgxsafety records who views each review and takes the user from the id_token's fhirUser: " + err.Error() + ".", Err: err}
	}
	ss := &session{browser: p.browser, ehr: p.ehr, iss: p.iss, accessToken: tok.AccessToken, patient: patient,
		principal: principal, needBanner: true, standalone: p.standalone}
	ss.scope, _ = tok.Extra("scope").(string)
	if enc, ok := tok.Extra("encounter").(string); ok && validID(enc) {
		ss.encounter = enc
	}
	if nb, ok := tok.Extra("need_patient_banner").(bool); ok {
		ss.needBanner = nb
	}
	ss.appContext = appContextString(tok.Extra("appContext"))
	ss.cardDrug = s.cardDrug(ss.appContext)
	ss.expires = s.now().Add(s.cfg.SessionTTL)
	if !tok.Expiry.IsZero() && tok.Expiry.Before(ss.expires) {
		ss.expires = tok.Expiry
	}
	sid := randomToken(32)
	if err := s.store.putSession(ctx, sid, ss); err != nil {
		return storeFailure(err, "Too many review sessions")
	}
	httpx.Logger(ctx).Info("SMART launch completed", zap.Bool("standalone", p.standalone), zap.String("subject_hash", httpx.SubjectHash(principal)))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, PathReview+sid, http.StatusSeeOther)
	return nil
}

// tokenErrorText describes a failed code exchange without the response
// body (it may echo credentials).
func tokenErrorText(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		s := "The token endpoint refused the authorization code"
		if re.ErrorCode != "" {
			s += " (" + clip(re.ErrorCode, 80) + ")"
		} else if re.Response != nil {
			s += fmt.Sprintf(" (HTTP %d)", re.Response.StatusCode)
		}
		return s + "."
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "The token endpoint did not answer in time."
	}
	return "The token endpoint could not be reached or its answer was not a token."
}

// validID accepts a FHIR resource id.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// appContextString reads the token response's appContext (a string; an
// object is kept as its JSON).
func appContextString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return clip(x, 4096)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return ""
		}
		return clip(string(b), 4096)
	}
}

// cardDrug reads the drug of the card the app was launched from (the
// appContext pgxsafety's cards carry: {"hookInstance", "cardUuid",
// "drug"}); "" when there is none.
func (s *Server) cardDrug(appContext string) string {
	var ac struct {
		Drug string `json:"drug"`
	}
	if appContext == "" || json.Unmarshal([]byte(appContext), &ac) != nil {
		return ""
	}
	d := strings.TrimSpace(ac.Drug)
	if d == "" || len(d) > engine.MaxDrugNameBytes || strings.ContainsFunc(d, unicode.IsControl) {
		return ""
	}
	return d
}

// clientAssertion signs the private_key_jwt assertion for the token
// endpoint (SMART asymmetric client authentication).
func (s *Server) clientAssertion(e *EHR, tokenEndpoint string) (string, error) {
	now := s.now()
	t := jwt.New()
	for k, v := range map[string]any{
		jwt.IssuerKey: e.ClientID, jwt.SubjectKey: e.ClientID, jwt.AudienceKey: tokenEndpoint,
		jwt.JwtIDKey: randomToken(24), jwt.IssuedAtKey: now, jwt.ExpirationKey: now.Add(4 * time.Minute),
	} {
		if err := t.Set(k, v); err != nil {
			return "", err
		}
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.TypeKey, "JWT")
	b, err := jwt.Sign(t, jwt.WithKey(e.Key.alg, e.Key.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("smart: sign the client assertion: %w", err)
	}
	return string(b), nil
}

// openIDConfiguration is the part of an OpenID Provider's configuration
// the app reads when the SMART configuration lacks issuer or jwks_uri.
type openIDConfiguration struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// idTokenAlgs are the id_token signature algorithms accepted: asymmetric
// only.
var idTokenAlgs = map[jwa.SignatureAlgorithm]bool{
	jwa.RS256: true, jwa.RS384: true, jwa.RS512: true, jwa.PS256: true, jwa.PS384: true, jwa.PS512: true,
	jwa.ES256: true, jwa.ES384: true, jwa.ES512: true,
}

// verifyIDToken verifies the id_token (signature with the EHR's keys, iss,
// aud = client id, exp) and returns its fhirUser as the principal.
func (s *Server) verifyIDToken(ctx context.Context, e *EHR, sc smartConfiguration, idToken string) (audit.Principal, error) {
	if idToken == "" {
		return audit.Principal{}, errors.New("the token response has no id_token (the scopes openid and fhirUser are needed)")
	}
	if len(idToken) > 16<<10 || strings.Count(idToken, ".") != 2 {
		return audit.Principal{}, errors.New("the id_token is not a compact JWS")
	}
	issuer, jwksURI := sc.Issuer, sc.JWKSURI
	if issuer == "" || jwksURI == "" {
		var oc openIDConfiguration
		if err := getJSON(ctx, s.hc, normISS(e.ISS)+"/.well-known/openid-configuration", &oc); err != nil {
			return audit.Principal{}, fmt.Errorf("the EHR publishes no issuer and jwks_uri to verify the id_token (OpenID configuration %v)", err)
		}
		issuer, jwksURI = firstNonEmpty(issuer, oc.Issuer), firstNonEmpty(jwksURI, oc.JWKSURI)
	}
	if err := checkEndpoint(jwksURI); err != nil || issuer == "" {
		return audit.Principal{}, errors.New("the EHR publishes no usable issuer and jwks_uri to verify the id_token")
	}
	msg, err := jws.Parse([]byte(idToken), jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return audit.Principal{}, errors.New("the id_token is not a compact JWS")
	}
	if err := httpx.CheckNumericDates(msg.Payload()); err != nil {
		return audit.Principal{}, fmt.Errorf("the id_token: %w", err)
	}
	alg := msg.Signatures()[0].ProtectedHeaders().Algorithm()
	if !idTokenAlgs[alg] {
		return audit.Principal{}, fmt.Errorf("the id_token's algorithm %q is not accepted", clip(alg.String(), 20))
	}
	var raw json.RawMessage
	if err := getJSON(ctx, s.hc, jwksURI, &raw); err != nil {
		return audit.Principal{}, fmt.Errorf("the EHR's keys (jwks_uri) %v", err)
	}
	set, err := jwk.Parse(raw)
	if err != nil {
		return audit.Principal{}, errors.New("the EHR's keys (jwks_uri) are not a JWK set")
	}
	kid := msg.Signatures()[0].ProtectedHeaders().KeyID()
	var key jwk.Key
	for i := range set.Len() {
		k, _ := set.Key(i)
		if (kid != "" && k.KeyID() != kid) || (k.KeyType() != jwa.RSA && k.KeyType() != jwa.EC) {
			continue
		}
		if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
			continue
		}
		if pub, err := jwk.PublicKeyOf(k); err == nil {
			key = pub
			break
		}
	}
	if key == nil {
		return audit.Principal{}, errors.New("no key of the EHR matches the id_token")
	}
	now := s.now()
	tok, err := jwt.Parse([]byte(idToken), jwt.WithKey(alg, key), jwt.WithValidate(true),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })), jwt.WithAcceptableSkew(time.Minute),
		jwt.WithIssuer(issuer), jwt.WithAudience(e.ClientID),
		jwt.WithRequiredClaim(jwt.ExpirationKey), jwt.WithRequiredClaim(jwt.SubjectKey))
	if err != nil {
		return audit.Principal{}, errors.New("the id_token does not verify (signature, issuer, audience or expiry)")
	}
	v, _ := tok.Get("fhirUser")
	fu, _ := v.(string)
	if fu == "" || len(fu) > 1024 || strings.ContainsFunc(fu, unicode.IsControl) {
		return audit.Principal{}, errors.New("the id_token has no fhirUser claim")
	}
	p := audit.Principal{Subject: fu, Issuer: tok.Issuer()}
	if n, ok := tok.Get("name"); ok {
		if ns, ok := n.(string); ok && len(ns) <= 256 && !strings.ContainsFunc(ns, unicode.IsControl) {
			p.Name = ns
		}
	}
	return p, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// clip bounds text taken from another server.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
