// Package smart is pgxsafety's SMART on FHIR clinician-review app (SMART
// App Launch 2.2; DESIGN.md §1, docs/smart.md): an EHR launch (from the
// EHR or from a CDS card's smart link) or a standalone launch, PKCE S256,
// the authorization-code exchange with golang.org/x/oauth2, and one
// server-rendered review page per launch: the patient's genotype table,
// every active medication checked against it, the pre-test genes, the
// Indian context and the citations.
//
// Routes (all under /smart/):
//
//	GET /smart/            the standalone launch picker (one link per EHR)
//	GET /smart/launch      EHR launch (iss + launch) or standalone (iss only)
//	GET /smart/callback    the authorization server's redirect
//	GET /smart/review/{id} the review page of one launch
//	GET /smart/jwks.json   the public keys of private_key_jwt clients
//
// Tokens stay on the server: the browser holds only an opaque, HttpOnly,
// SameSite=Lax cookie that binds it to its launches, and the review URL
// names one launch of that browser. Every review view is evaluated and
// audited through the Reviewer (the application layer), with the
// id_token's fhirUser as the principal.
package smart

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Paths of the app, under the public URL.
const (
	PathIndex    = "/smart/"
	PathLaunch   = "/smart/launch"
	PathCallback = "/smart/callback"
	PathReview   = "/smart/review/"
	PathJWKS     = "/smart/jwks.json"
)

// Default scopes (SMART App Launch 2.2 scope syntax).
const (
	// DefaultScopes are asked at an EHR launch.
	DefaultScopes = "launch openid fhirUser patient/Patient.rs patient/Observation.rs patient/MedicationRequest.rs"
	// DefaultStandaloneScopes are asked at a standalone launch: the
	// patient is picked at the authorization server.
	DefaultStandaloneScopes = "launch/patient openid fhirUser patient/Patient.rs patient/Observation.rs patient/MedicationRequest.rs"
)

// Defaults and bounds of the app.
const (
	// DefaultSessionTTL bounds a review session (it also ends when the
	// access token expires).
	DefaultSessionTTL = time.Hour
	// launchTTL bounds the time between the launch and the callback.
	launchTTL = 10 * time.Minute
	// maxPending and maxSessions bound the server-side stores.
	maxPending  = 10000
	maxSessions = 10000
	// httpTimeout bounds each call to the EHR's authorization server.
	httpTimeout = 10 * time.Second
	// maxAuthBody bounds the discovery, JWKS and token answers.
	maxAuthBody = 1 << 20
	// dataTimeout bounds the FHIR reads of one review view.
	dataTimeout = 20 * time.Second
)

// Config configures the app. cmd builds it from the PGXSAFETY_SMART_*
// variables (docs/smart.md).
type Config struct {
	// PublicURL is the base URL browsers reach pgxsafety at; the
	// redirect URI is PublicURL + "/smart/callback".
	PublicURL string
	// EHRs are the registered EHRs: the allowlist of iss values.
	EHRs []EHR
	// SessionTTL bounds a review session; zero means DefaultSessionTTL.
	SessionTTL time.Duration
	// HTTPClient reaches the authorization servers (discovery, token,
	// JWKS); nil means one with a timeout and no redirects followed.
	HTTPClient *http.Client
	// FHIR configures the FHIR client of the review page.
	FHIR fhir.ClientOptions
	// Shared, when set, keeps launches and sessions where every replica
	// reaches them, sealed with SessionKey (SessionKeySize bytes); nil
	// keeps them in this process's memory (one replica only).
	Shared     SharedStore
	SessionKey []byte
}

// Client types of a registered EHR.
const (
	ClientPublic                 = "public"
	ClientConfidentialSymmetric  = "confidential-symmetric"
	ClientConfidentialAsymmetric = "confidential-asymmetric"
)

// EHR is one EHR registered with the app.
type EHR struct {
	// Name is shown on the standalone launch picker.
	Name string
	// ISS is the EHR's FHIR base URL, exactly as it sends it in iss.
	ISS string
	// ClientID is the client id the EHR assigned to pgxsafety.
	ClientID string
	// ClientType is ClientPublic, ClientConfidentialSymmetric (a client
	// secret, sent with HTTP Basic) or ClientConfidentialAsymmetric
	// (private_key_jwt).
	ClientType string
	// ClientSecret is the secret of a confidential-symmetric client.
	ClientSecret string
	// Key signs the client assertions of a confidential-asymmetric client.
	Key *SigningKey
	// Scopes override DefaultScopes; StandaloneScopes override
	// DefaultStandaloneScopes.
	Scopes           string
	StandaloneScopes string
}

// Server serves the app.
type Server struct {
	cfg    Config
	public *url.URL
	ehrs   map[string]*EHR // by normalised iss
	order  []*EHR
	svc    *service.Service
	kb     *engine.Knowledge
	names  *drugnames.Reader
	mapper *fhir.Mapper
	now    func() time.Time
	log    *zap.Logger
	hc     *http.Client
	store  sessionStore
	disco  *discoveryCache
	secure bool
}

// New builds the app over the application layer svc: every review view
// is evaluated and audited by svc.ReviewView; the FHIR mapping reads drug
// names and genes from svc's knowledge, and svc's clock is the app's.
func New(cfg Config, svc *service.Service, log *zap.Logger) (*Server, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if svc == nil {
		return nil, errors.New("smart: the application service is required")
	}
	kb, now := svc.Knowledge(), svc.Now
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(cfg.PublicURL), "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("smart: the public URL must be an absolute http(s) URL without query or fragment")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	p, err := fhir.NewParser()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, public: u, ehrs: map[string]*EHR{}, svc: svc, kb: kb, names: svc.Names(),
		mapper: fhir.NewMapper(p, svc.Names(), svc.Caller()), now: now, log: log, secure: u.Scheme == "https"}
	for i := range cfg.EHRs {
		e := cfg.EHRs[i]
		if err := e.check(); err != nil {
			return nil, err
		}
		key := normISS(e.ISS)
		if _, dup := s.ehrs[key]; dup {
			return nil, fmt.Errorf("smart: EHR %s is registered twice", e.ISS)
		}
		s.ehrs[key] = &e
		s.order = append(s.order, &e)
	}
	s.hc = cfg.HTTPClient
	if s.hc == nil {
		s.hc = &http.Client{Timeout: httpTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s.store = newMemoryStore(now)
	if cfg.Shared != nil {
		if s.store, err = newSealedStore(cfg.Shared, cfg.SessionKey, s.ehrs, now); err != nil {
			return nil, err
		}
	}
	s.cfg.SessionKey = nil // kept by the sealer only
	s.disco = newDiscoveryCache(s.hc, now)
	return s, nil
}

// Enabled reports whether any EHR is registered (the cards' smart links
// are useful only then).
func (s *Server) Enabled() bool { return len(s.order) > 0 }

// RedirectURI is the redirect URI to register with every EHR.
func (s *Server) RedirectURI() string { return s.public.String() + PathCallback }

// LaunchURL is the launch URL to register with every EHR.
func (s *Server) LaunchURL() string { return s.public.String() + PathLaunch }

// Register adds the app's routes to r. They carry their own
// authorization (SMART), not the REST surfaces' bearer tokens.
func (s *Server) Register(r *mux.Router) {
	r.Handle(PathIndex, s.page(s.index)).Methods(http.MethodGet)
	r.Handle(PathLaunch, s.page(s.launch)).Methods(http.MethodGet)
	r.Handle(PathCallback, s.page(s.callback)).Methods(http.MethodGet)
	r.Handle(PathReview+"{id}", s.page(s.review)).Methods(http.MethodGet)
	r.Handle(PathJWKS, httpx.Handle(s.jwks)).Methods(http.MethodGet)
}

// normISS normalises an iss for the allowlist: no trailing slash.
func normISS(iss string) string { return strings.TrimSuffix(strings.TrimSpace(iss), "/") }

func (e *EHR) check() error {
	if _, err := fhir.CheckServerURL(e.ISS); err != nil {
		return fmt.Errorf("smart: EHR iss %q: %v", e.ISS, err)
	}
	if strings.TrimSpace(e.ClientID) == "" {
		return fmt.Errorf("smart: EHR %s: client_id is required", e.ISS)
	}
	switch e.ClientType {
	case ClientPublic:
		if e.ClientSecret != "" || e.Key != nil {
			return fmt.Errorf("smart: EHR %s: a public client has no secret or key", e.ISS)
		}
	case ClientConfidentialSymmetric:
		if e.ClientSecret == "" {
			return fmt.Errorf("smart: EHR %s: a confidential-symmetric client needs a client secret", e.ISS)
		}
	case ClientConfidentialAsymmetric:
		if e.Key == nil {
			return fmt.Errorf("smart: EHR %s: a confidential-asymmetric client needs a private key", e.ISS)
		}
	default:
		return fmt.Errorf("smart: EHR %s: client_type must be %s, %s or %s", e.ISS, ClientPublic, ClientConfidentialSymmetric, ClientConfidentialAsymmetric)
	}
	if e.Name == "" {
		e.Name = e.ISS
	}
	return nil
}

// randomToken returns n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("smart: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
