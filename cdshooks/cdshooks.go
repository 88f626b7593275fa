// Package cdshooks is pgxsafety's CDS Hooks 2.0 surface for EHR order
// entry (DESIGN.md §6, docs/cds-hooks.md): discovery at GET /cds-services,
// the services pgx-order-select (hook order-select 1.0) and pgx-order-sign
// (hook order-sign 1.1) at POST /cds-services/{id}, and feedback at POST
// /cds-services/{id}/feedback.
//
// A hook call is authenticated with the EHR's JWT (trusted clients from
// PGXSAFETY_CDS_CLIENTS; Authenticator), its data come from the prefetch or
// from the EHR's FHIR server (a 412 when neither is possible), package fhir
// maps the FHIR resources to engine requests, the engine evaluates each
// drug of the draft orders, and every finding becomes one card. Every
// answer is written to the audit log before it is sent (503 when it cannot
// be).
package cdshooks

import (
	"errors"
	"fmt"
	"net"
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

// EnvDevUnauthenticated names the development switch (read by cmd):
// hook calls without a token are accepted from loopback clients of a
// server listening on loopback only. For local trials with a sandbox;
// never in production.
const EnvDevUnauthenticated = "PGXSAFETY_CDS_DEV_UNAUTHENTICATED"

// Names of the settings, for error messages (cmd reads them).
const (
	settingPublicURL = "PGXSAFETY_PUBLIC_URL"
	settingClients   = "PGXSAFETY_CDS_CLIENTS"
)

// SMARTLaunchPath is the path, under the public URL, of the SMART review
// app that the cards' smart links open.
const SMARTLaunchPath = "/smart/launch"

// Limits of the CDS surface.
const (
	// HookBodyLimit is the largest hook request accepted (prefetch
	// included).
	HookBodyLimit = 8 << 20
	// MaxDraftOrders bounds the resources of context.draftOrders of one
	// call (each is mapped and checked against the patient's genotype).
	MaxDraftOrders = 100
	// MaxKeyResources bounds the resources of one prefetch key (as the
	// FHIR client bounds a search: fhir.DefaultMaxResources).
	MaxKeyResources = 1000
	// MaxCallResources bounds the resources of one call: the prefetch
	// keys and the draft orders together.
	MaxCallResources = 2000
	// FeedbackBodyLimit is the largest feedback post.
	FeedbackBodyLimit = 256 << 10
	// maxFeedbackItems bounds the items of one feedback post.
	maxFeedbackItems = 100
	// DefaultDataTimeout bounds fetching the data of one hook call from the
	// FHIR server.
	DefaultDataTimeout = 15 * time.Second
)

// Config configures the CDS Hooks surface.
type Config struct {
	// PublicURL is the base URL clients call (scheme, host, optional path
	// prefix). A token's aud must equal PublicURL + the path called; the
	// cards' SMART links point under it. Required when ClientsFile is set.
	PublicURL string
	// ClientsFile names the trusted-clients JSON file.
	ClientsFile string
	// Replay is the jti replay cache (NewRedisReplayCache to share it
	// between replicas); nil means one in memory.
	Replay ReplayCache
	// DevUnauthenticated accepts calls without a token (loopback only).
	DevUnauthenticated bool
	// ListenAddr is the server's listen address (checked to be loopback
	// when DevUnauthenticated is set).
	ListenAddr string
	// Feedback stores the feedback posts (the audit store's,
	// sqlstore.Store.Feedback).
	// Required.
	Feedback service.FeedbackStore
	// KeySets is the process's JSON Web Key Set cache (shared with the
	// OpenID Connect verifier); nil means one of the surface's own.
	KeySets *httpx.KeySetCache
	// FHIR configures the FHIR client used when prefetch is incomplete.
	FHIR fhir.ClientOptions
	// DataTimeout bounds the FHIR fetches of one call; zero means
	// DefaultDataTimeout.
	DataTimeout time.Duration
}

// Server serves the CDS Hooks endpoints.
type Server struct {
	svc      *service.Service
	kb       *engine.Knowledge
	names    *drugnames.Reader
	parser   *fhir.Parser
	mapper   *fhir.Mapper
	log      *zap.Logger
	cfg      Config
	public   *url.URL // nil when no public URL is configured
	auth     *Authenticator
	feedback service.FeedbackStore
	services map[string]cdsService
	disco    Discovery
	// noSMART drops the cards' smart links (no EHR is registered with
	// the review app).
	noSMART bool
}

// WithoutSMARTLinks makes the cards carry no link to the SMART review
// app: set it when the app cannot be launched (no EHR registered), so no
// card offers a link that cannot work.
func (s *Server) WithoutSMARTLinks() { s.noSMART = true }

// New builds the CDS surface over svc. It refuses a configuration that
// would serve hook calls unauthenticated outside the development switch's
// limits.
func New(svc *service.Service, cfg Config, log *zap.Logger) (*Server, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.DataTimeout <= 0 {
		cfg.DataTimeout = DefaultDataTimeout
	}
	p, err := fhir.NewParser()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: svc, kb: svc.Knowledge(), names: svc.Names(), parser: p, mapper: fhir.NewMapper(p, svc.Names(), svc.Caller()), log: log, cfg: cfg}
	if cfg.PublicURL != "" {
		u, err := url.Parse(strings.TrimSuffix(cfg.PublicURL, "/"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("%s must be an absolute http(s) URL without query or fragment", settingPublicURL)
		}
		s.public = u
	}
	if cfg.DevUnauthenticated {
		if err := requireLoopback(cfg.ListenAddr); err != nil {
			return nil, err
		}
		log.Warn("CDS HOOKS DEVELOPMENT SWITCH IS ON: hook and feedback calls WITHOUT a token are accepted from loopback clients. "+
			"Never use this with real patients or behind a proxy.", zap.String("switch", EnvDevUnauthenticated))
	}
	if cfg.ClientsFile != "" {
		if s.public == nil {
			return nil, fmt.Errorf("%s is required with %s: a token's aud must equal the URL called", settingPublicURL, settingClients)
		}
		clients, err := LoadClients(cfg.ClientsFile)
		if err != nil {
			return nil, err
		}
		replay := cfg.Replay
		if replay == nil {
			replay = NewMemoryReplayCache(svc.Now)
		}
		s.auth, err = NewAuthenticator(clients, replay, cfg.KeySets, svc.Now)
		if err != nil {
			return nil, err
		}
		log.Info("CDS Hooks: EHR tokens verified", zap.Int("trusted_clients", len(clients)), zap.Bool("shared_replay_cache", cfg.Replay != nil))
	} else if !cfg.DevUnauthenticated {
		log.Warn("CDS Hooks: no trusted clients configured; hook and feedback calls are refused (set " + settingClients + ")")
	}
	if cfg.Feedback == nil {
		return nil, errors.New("cdshooks: no feedback store configured")
	}
	s.feedback = cfg.Feedback
	s.services, s.disco = services()
	return s, nil
}

// WithFeedbackStore replaces the feedback store (tests use it to inject
// failures).
func (s *Server) WithFeedbackStore(fs service.FeedbackStore) { s.feedback = fs }

// Register adds the CDS Hooks endpoints to r. They carry their own
// authentication (EHR JWTs), not the REST surfaces' OIDC middleware.
func (s *Server) Register(r *mux.Router) {
	r.Handle("/cds-services", httpx.Handle(s.discovery)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/cds-services/{id}", httpx.Handle(s.hook)).Methods(http.MethodPost)
	r.Handle("/cds-services/{id}/feedback", httpx.Handle(s.feedbackPost)).Methods(http.MethodPost)
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, s.disco)
}

// requireLoopback refuses a listen address that is not loopback.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: listen address %q: %v", EnvDevUnauthenticated, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is set but the server listens on %q: the development switch works on a loopback address only", EnvDevUnauthenticated, addr)
}

func loopbackRemote(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// devPrincipal is the caller of an unauthenticated development call.
var devPrincipalSubject = "unauthenticated-dev-client"

// authenticate verifies the caller of r (see docs/cds-hooks.md §5).
func (s *Server) authenticate(r *http.Request) (principalResult, error) {
	authz := r.Header.Get("Authorization")
	if s.auth != nil && (authz != "" || !s.cfg.DevUnauthenticated) {
		p, release, err := s.auth.VerifyClaim(r.Context(), authz, s.audience(r))
		if err != nil {
			return principalResult{}, authProblem(err)
		}
		return principalResult{p: p, release: release}, nil
	}
	if s.cfg.DevUnauthenticated && loopbackRemote(r.RemoteAddr) {
		httpx.Logger(r.Context()).Warn("CDS Hooks call accepted WITHOUT authentication (development switch)", zap.String("switch", EnvDevUnauthenticated))
		return principalResult{dev: true}, nil
	}
	if s.auth == nil {
		return principalResult{}, &httpx.Error{Kind: httpx.KindCDSUnauthorized,
			Detail: "no trusted CDS clients are configured; this server accepts no hook calls",
			Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}}
	}
	return principalResult{}, authProblem(&AuthError{Reason: "an Authorization: Bearer token is required"})
}

// audience is the exact URL called: the public base URL plus the path.
func (s *Server) audience(r *http.Request) string {
	if s.public == nil {
		return ""
	}
	return s.public.String() + r.URL.EscapedPath()
}

func authProblem(err error) error {
	var ae *AuthError
	if errors.As(err, &ae) {
		return &httpx.Error{Kind: httpx.KindCDSUnauthorized, Detail: ae.Reason,
			Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}, Err: err}
	}
	if errors.Is(err, ErrReplayCheck) {
		return &httpx.Error{Kind: httpx.KindReplayCheck,
			Detail: "the token replay check is unavailable; no advice was given", Err: err}
	}
	return err
}
