// Package smarttest is a fake SMART on FHIR EHR for tests of the review
// app: smart-configuration discovery, an authorization endpoint that
// checks PKCE S256, aud, state and the redirect URI (and approves at once,
// as a signed-in clinician would), a token endpoint that checks the code
// verifier and the client's authentication, a JWKS for its id_tokens, and
// FHIR endpoints serving fixture resources to the access token it issued.
// It is test support only: nothing in the product imports it.
package smarttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Client types (as in package smart).
const (
	Public       = "public"
	Symmetric    = "confidential-symmetric"
	Asymmetric   = "confidential-asymmetric"
	fhirPrefix   = "/fhir"
	authorizeURL = "/auth/authorize"
	tokenURL     = "/auth/token"
	jwksURL      = "/auth/jwks"
)

// EHR is a running fake EHR.
type EHR struct {
	Server *httptest.Server

	// Registration of the app.
	ClientID     string
	ClientType   string
	ClientSecret string
	// ClientKey verifies private_key_jwt assertions (the app's public key).
	ClientKey   jwk.Key
	RedirectURI string

	// Launch context.
	Patient    string
	Encounter  string
	FHIRUser   string
	AppContext string
	NeedBanner *bool
	NoIDToken  bool
	// IDTokenClaims replace claims of the id_tokens as written (a value
	// of a type jwx would convert, such as a string "exp", stays as is).
	IDTokenClaims map[string]any
	TokenStatus   int // when non-zero, the token endpoint fails with it
	// FHIRStatus makes a FHIR path ("/Observation") answer this status.
	FHIRStatus map[string]int
	// Resources are served by type: Patient by id, the others by search.
	Resources map[string][]json.RawMessage
	// Now is the clock of the id_tokens (time.Now when nil).
	Now func() time.Time

	key jwk.Key

	mu      sync.Mutex
	codes   map[string]grant
	tokens  map[string]bool
	issued  []string
	Log     []string // what the endpoints saw, for assertions
	Granted int      // tokens issued
	FHIRHit int      // FHIR requests served
}

type grant struct {
	challenge, redirect, clientID, launch, scope string
}

// New starts a fake EHR; the caller sets the registration fields before
// the first launch and calls Close.
func New() *EHR {
	e := &EHR{ClientID: "pgxsafety-test", ClientType: Public, Patient: "pat-1", Encounter: "enc-1",
		FHIRUser: "Practitioner/dr-rao", codes: map[string]grant{}, tokens: map[string]bool{},
		FHIRStatus: map[string]int{}, Resources: map[string][]json.RawMessage{}}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	k, err := jwk.FromRaw(priv)
	if err != nil {
		panic(err)
	}
	_ = k.Set(jwk.KeyIDKey, "ehr-key-1")
	_ = k.Set(jwk.AlgorithmKey, jwa.ES256)
	e.key = k
	mux := http.NewServeMux()
	mux.HandleFunc(fhirPrefix+"/.well-known/smart-configuration", e.smartConfig)
	mux.HandleFunc(authorizeURL, e.authorize)
	mux.HandleFunc(tokenURL, e.token)
	mux.HandleFunc(jwksURL, e.jwks)
	mux.HandleFunc(fhirPrefix+"/", e.fhir)
	e.Server = httptest.NewServer(mux)
	return e
}

// ISS is the fake EHR's FHIR base URL.
func (e *EHR) ISS() string { return e.Server.URL + fhirPrefix }

// Close stops the server.
func (e *EHR) Close() { e.Server.Close() }

func (e *EHR) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *EHR) logf(format string, args ...any) {
	e.mu.Lock()
	e.Log = append(e.Log, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (e *EHR) smartConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer":                                e.Server.URL,
		"jwks_uri":                              e.Server.URL + jwksURL,
		"authorization_endpoint":                e.Server.URL + authorizeURL,
		"token_endpoint":                        e.Server.URL + tokenURL,
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "private_key_jwt"},
		"grant_types_supported":                 []string{"authorization_code"},
		"scopes_supported":                      []string{"openid", "fhirUser", "launch", "launch/patient", "patient/*.rs"},
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"capabilities": []string{"launch-ehr", "launch-standalone", "client-public", "client-confidential-symmetric",
			"client-confidential-asymmetric", "context-ehr-patient", "context-standalone-patient", "sso-openid-connect", "permission-v2"},
	})
}

// authorize checks the request as an authorization server must and
// approves it at once.
func (e *EHR) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	if redirect != e.RedirectURI || q.Get("client_id") != e.ClientID {
		e.logf("authorize: unknown client or redirect_uri %q", redirect)
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	fail := func(reason string) {
		e.logf("authorize: %s", reason)
		u, _ := url.Parse(redirect)
		v := url.Values{"error": {"invalid_request"}, "error_description": {reason}, "state": {q.Get("state")}}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("response_type must be code")
	case q.Get("aud") != e.ISS():
		fail("aud must be the FHIR base URL " + e.ISS())
	case q.Get("code_challenge_method") != "S256":
		fail("code_challenge_method must be S256")
	case len(q.Get("code_challenge")) != 43:
		fail("code_challenge must be a base64url SHA-256")
	case len(q.Get("state")) < 22:
		fail("state is missing or too short")
	case !strings.Contains(" "+q.Get("scope")+" ", " openid ") || !strings.Contains(q.Get("scope"), "fhirUser"):
		fail("scope lacks openid fhirUser")
	default:
		code := randomString()
		e.mu.Lock()
		e.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: redirect, clientID: q.Get("client_id"),
			launch: q.Get("launch"), scope: q.Get("scope")}
		e.Log = append(e.Log, "authorize: ok launch="+q.Get("launch")+" scope="+q.Get("scope"))
		e.mu.Unlock()
		u, _ := url.Parse(redirect)
		u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (e *EHR) token(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(status int, code, desc string) {
		e.logf("token: %s: %s", code, desc)
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		oauthErr(400, "invalid_request", "POST a form")
		return
	}
	if e.TokenStatus != 0 {
		oauthErr(e.TokenStatus, "server_error", "the token endpoint is failing (test)")
		return
	}
	f := r.PostForm
	e.mu.Lock()
	g, ok := e.codes[f.Get("code")]
	delete(e.codes, f.Get("code"))
	e.mu.Unlock()
	if f.Get("grant_type") != "authorization_code" || !ok {
		oauthErr(400, "invalid_grant", "unknown or used code")
		return
	}
	if f.Get("redirect_uri") != g.redirect {
		oauthErr(400, "invalid_grant", "redirect_uri differs")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		oauthErr(400, "invalid_grant", "code_verifier does not match the S256 challenge")
		return
	}
	switch e.ClientType {
	case Public:
		if f.Get("client_id") != e.ClientID || f.Get("client_secret") != "" {
			oauthErr(401, "invalid_client", "public client must send client_id only")
			return
		}
	case Symmetric:
		id, secret, ok := r.BasicAuth()
		if !ok || id != e.ClientID || secret != e.ClientSecret {
			oauthErr(401, "invalid_client", "bad client credentials")
			return
		}
	case Asymmetric:
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
			oauthErr(401, "invalid_client", "client_assertion_type")
			return
		}
		_, err := jwt.Parse([]byte(f.Get("client_assertion")), jwt.WithKey(jwa.ES384, e.ClientKey), jwt.WithValidate(true),
			jwt.WithIssuer(e.ClientID), jwt.WithSubject(e.ClientID), jwt.WithAudience(e.Server.URL+tokenURL),
			jwt.WithClock(jwt.ClockFunc(e.now)), jwt.WithRequiredClaim(jwt.JwtIDKey))
		if err != nil {
			oauthErr(401, "invalid_client", "client_assertion does not verify: "+err.Error())
			return
		}
	}
	access := randomString()
	e.mu.Lock()
	e.tokens[access] = true
	e.Granted++
	e.mu.Unlock()
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": g.scope,
		"patient": e.Patient}
	if e.Encounter != "" && g.launch != "" {
		out["encounter"] = e.Encounter
	}
	if e.NeedBanner != nil {
		out["need_patient_banner"] = *e.NeedBanner
	}
	if e.AppContext != "" && g.launch != "" {
		out["appContext"] = e.AppContext
	}
	if !e.NoIDToken {
		idt := e.IDToken(e.FHIRUser, e.ClientID)
		e.mu.Lock()
		e.issued = append(e.issued, idt)
		e.mu.Unlock()
		out["id_token"] = idt
	}
	writeJSON(w, 200, out)
}

// Secrets returns every access token and id_token issued so far, for
// tests that check none of them leaks.
func (e *EHR) Secrets() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := append([]string(nil), e.issued...)
	for t := range e.tokens {
		out = append(out, t)
	}
	return out
}

// IDToken signs an id_token for fhirUser and audience aud.
func (e *EHR) IDToken(fhirUser, aud string) string {
	t := jwt.New()
	now := e.now()
	_ = t.Set(jwt.IssuerKey, e.Server.URL)
	_ = t.Set(jwt.SubjectKey, "user-"+strings.ReplaceAll(fhirUser, "/", "-"))
	_ = t.Set(jwt.AudienceKey, aud)
	_ = t.Set(jwt.IssuedAtKey, now)
	_ = t.Set(jwt.ExpirationKey, now.Add(time.Hour))
	_ = t.Set("fhirUser", fhirUser)
	_ = t.Set("name", "Dr. Meera Rao")
	b, err := jwt.Sign(t, jwt.WithKey(jwa.ES256, e.key))
	if err != nil {
		panic(err)
	}
	if len(e.IDTokenClaims) == 0 {
		return string(b)
	}
	// Sign the claims as written: jwt.Set would turn a string date into
	// a number.
	var m map[string]any
	if err := json.Unmarshal(compactPayload(b), &m); err != nil {
		panic(err)
	}
	for k, v := range e.IDTokenClaims {
		m[k] = v
	}
	payload, _ := json.Marshal(m)
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.TypeKey, "JWT")
	b, err = jws.Sign(payload, jws.WithKey(jwa.ES256, e.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// compactPayload returns the decoded payload of a compact JWS.
func compactPayload(tok []byte) []byte {
	msg, err := jws.Parse(tok, jws.WithCompact())
	if err != nil {
		panic(err)
	}
	return msg.Payload()
}

func (e *EHR) jwks(w http.ResponseWriter, _ *http.Request) {
	pub, _ := e.key.PublicKey()
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	writeJSON(w, 200, set)
}

// fhir serves the fixture resources to the access tokens it issued.
func (e *EHR) fhir(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	e.mu.Lock()
	ok := e.tokens[tok]
	e.FHIRHit++
	e.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, fhirPrefix)
	w.Header().Set("Content-Type", "application/fhir+json")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"login"}]}`))
		return
	}
	for p, st := range e.FHIRStatus {
		if strings.HasPrefix(path, p) {
			w.WriteHeader(st)
			_, _ = w.Write([]byte(`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"exception","diagnostics":"test failure"}]}`))
			return
		}
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 2 {
		for _, raw := range e.Resources[parts[0]] {
			var h struct{ ID string }
			_ = json.Unmarshal(raw, &h)
			if h.ID == parts[1] {
				_, _ = w.Write(raw)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"not-found"}]}`))
		return
	}
	if r.URL.Query().Get("patient") != e.Patient {
		_, _ = w.Write([]byte(`{"resourceType":"Bundle","type":"searchset","entry":[]}`))
		return
	}
	var entries []map[string]json.RawMessage
	for _, raw := range e.Resources[parts[0]] {
		entries = append(entries, map[string]json.RawMessage{"resource": raw})
	}
	b, _ := json.Marshal(map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": entries})
	_, _ = w.Write(b)
}

// Fixture returns the resources of the standard review scenario for
// patient: a man in Tamil Nadu with CYP2C19 *2/*2 (lab "Example Genomics
// Lab"), a CYP2D6 genotype written in a form that cannot be interpreted,
// and active orders for clopidogrel, simvastatin and a drug outside the
// knowledge.
func Fixture(patient string) map[string][]json.RawMessage {
	p := func(s string) json.RawMessage { return json.RawMessage(strings.ReplaceAll(s, "PATIENT", patient)) }
	return map[string][]json.RawMessage{
		"Patient": {p(`{"resourceType":"Patient","id":"PATIENT","name":[{"use":"official","family":"Iyer","given":["Ravi"]}],"gender":"male","birthDate":"1968-03-02",
			"address":[{"use":"home","city":"Chennai","state":"Tamil Nadu","country":"IN"}]}`)},
		"Observation": {
			p(`{"resourceType":"Observation","id":"geno-cyp2c19","status":"final",
			"category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory"}]}],
			"code":{"coding":[{"system":"http://loinc.org","code":"84413-4","display":"Genotype display name"}]},
			"subject":{"reference":"Patient/PATIENT"},"effectiveDateTime":"2024-02-10","issued":"2024-02-12T09:30:00+05:30",
			"performer":[{"reference":"Organization/lab-1","display":"Example Genomics Lab"}],
			"valueCodeableConcept":{"coding":[{"system":"http://www.pharmvar.org","code":"CYP2C19*2/*2","display":"CYP2C19 *2/*2"}]},
			"component":[{"code":{"coding":[{"system":"http://loinc.org","code":"48018-6"}]},
			"valueCodeableConcept":{"coding":[{"system":"http://www.genenames.org","code":"HGNC:2621","display":"CYP2C19"}]}}]}`),
			p(`{"resourceType":"Observation","id":"geno-cyp2d6","status":"final",
			"code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},
			"subject":{"reference":"Patient/PATIENT"},"effectiveDateTime":"2024-02-10",
			"performer":[{"display":"Example Genomics Lab"}],
			"valueString":"CYP2D6 *4/*999 (novel)",
			"component":[{"code":{"coding":[{"system":"http://loinc.org","code":"48018-6"}]},
			"valueCodeableConcept":{"coding":[{"system":"http://www.genenames.org","code":"HGNC:2625","display":"CYP2D6"}]}}]}`),
		},
		"MedicationRequest": {
			p(`{"resourceType":"MedicationRequest","id":"mr-clop","status":"active","intent":"order",
			"medicationCodeableConcept":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"32968","display":"clopidogrel"}],"text":"Clopidogrel 75 mg tablet"},
			"subject":{"reference":"Patient/PATIENT"},"authoredOn":"2024-03-01","reasonCode":[{"text":"Acute coronary syndrome with PCI"}]}`),
			p(`{"resourceType":"MedicationRequest","id":"mr-simva","status":"active","intent":"order",
			"medicationCodeableConcept":{"text":"Simvastatin 40 mg tablet"},"subject":{"reference":"Patient/PATIENT"}}`),
			p(`{"resourceType":"MedicationRequest","id":"mr-other","status":"active","intent":"order",
			"medicationCodeableConcept":{"text":"Calamine lotion 8%"},"subject":{"reference":"Patient/PATIENT"}}`),
		},
	}
}
