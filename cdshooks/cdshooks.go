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
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Environment variables read by ConfigFromEnv (DESIGN.md §7).
const (
	EnvPublicURL = "PGXSAFETY_PUBLIC_URL"
	EnvClients   = "PGXSAFETY_CDS_CLIENTS"
	EnvRedisURL  = "PGXSAFETY_REDIS_URL"
	// EnvDevUnauthenticated=1 accepts hook calls without a token, from
	// loopback clients of a server listening on loopback only. For local
	// trials with a sandbox; never in production.
	EnvDevUnauthenticated = "PGXSAFETY_CDS_DEV_UNAUTHENTICATED"
)

// SMARTLaunchPath is the path, under the public URL, of the SMART review
// app that the cards' smart links open.
const SMARTLaunchPath = "/smart/launch"

// Limits of the CDS surface.
const (
	// HookBodyLimit is the largest hook request accepted (prefetch
	// included).
	HookBodyLimit = 8 << 20
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
	// RedisURL, when set, keeps the jti replay cache in Redis.
	RedisURL string
	// DevUnauthenticated accepts calls without a token (loopback only).
	DevUnauthenticated bool
	// ListenAddr is the server's listen address (checked to be loopback
	// when DevUnauthenticated is set).
	ListenAddr string
	// DatabaseURL and DataDir locate the feedback store (the audit log's
	// settings: see OpenFeedbackStore).
	DatabaseURL string
	DataDir     string
	// KeySetClient fetches client key sets; nil for the default.
	KeySetClient *http.Client
	// FHIR configures the FHIR client used when prefetch is incomplete.
	FHIR fhir.ClientOptions
	// DataTimeout bounds the FHIR fetches of one call; zero means
	// DefaultDataTimeout.
	DataTimeout time.Duration
}

// ConfigFromEnv reads the CDS settings from the environment; the listen
// address and the audit log's database settings come from the serve
// configuration.
func ConfigFromEnv(listenAddr, dataDir, databaseURL string) (Config, error) {
	cfg := Config{
		PublicURL:   strings.TrimSpace(os.Getenv(EnvPublicURL)),
		ClientsFile: strings.TrimSpace(os.Getenv(EnvClients)),
		RedisURL:    strings.TrimSpace(os.Getenv(EnvRedisURL)),
		ListenAddr:  listenAddr,
		DatabaseURL: databaseURL,
		DataDir:     dataDir,
	}
	if v := strings.TrimSpace(os.Getenv(EnvDevUnauthenticated)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("%s must be true or false, got %q", EnvDevUnauthenticated, v)
		}
		cfg.DevUnauthenticated = b
	}
	return cfg, nil
}

// NewFromEnv builds the CDS surface from the environment (ConfigFromEnv)
// and the serve configuration: listen address, data directory and the
// audit log's database URL.
func NewFromEnv(ctx context.Context, svc *service.Service, listenAddr, dataDir, databaseURL string, log *zap.Logger) (*Server, error) {
	cfg, err := ConfigFromEnv(listenAddr, dataDir, databaseURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, svc, cfg, log)
}

// Server serves the CDS Hooks endpoints.
type Server struct {
	svc      *service.Service
	kb       *engine.Knowledge
	parser   *fhir.Parser
	mapper   *fhir.Mapper
	log      *zap.Logger
	cfg      Config
	public   *url.URL // nil when no public URL is configured
	auth     *Authenticator
	feedback FeedbackStore
	redis    *redis.Client
	services map[string]cdsService
	disco    Discovery
}

// New builds the CDS surface over svc. It refuses a configuration that
// would serve hook calls unauthenticated outside the development switch's
// limits.
func New(ctx context.Context, svc *service.Service, cfg Config, log *zap.Logger) (*Server, error) {
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
	s := &Server{svc: svc, kb: svc.Knowledge(), parser: p, mapper: fhir.NewMapper(p, svc.Knowledge()), log: log, cfg: cfg}
	if cfg.PublicURL != "" {
		u, err := url.Parse(strings.TrimSuffix(cfg.PublicURL, "/"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("%s must be an absolute http(s) URL without query or fragment", EnvPublicURL)
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
			return nil, fmt.Errorf("%s is required with %s: a token's aud must equal the URL called", EnvPublicURL, EnvClients)
		}
		clients, err := LoadClients(cfg.ClientsFile)
		if err != nil {
			return nil, err
		}
		var replay ReplayCache
		if cfg.RedisURL != "" {
			r, c, err := NewRedisReplayCache(ctx, cfg.RedisURL, svc.Now)
			if err != nil {
				return nil, fmt.Errorf("CDS jti replay cache: %w", err)
			}
			replay, s.redis = r, c
		} else {
			replay = NewMemoryReplayCache(svc.Now)
		}
		s.auth, err = NewAuthenticator(clients, replay, cfg.KeySetClient, svc.Now)
		if err != nil {
			s.Close()
			return nil, err
		}
		log.Info("CDS Hooks: EHR tokens verified", zap.Int("trusted_clients", len(clients)), zap.Bool("redis_replay_cache", s.redis != nil))
	} else if !cfg.DevUnauthenticated {
		log.Warn("CDS Hooks: no trusted clients configured; hook and feedback calls are refused (set " + EnvClients + ")")
	}
	fs, err := OpenFeedbackStore(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.feedback = fs
	s.services, s.disco = services()
	return s, nil
}

// WithFeedbackStore replaces the feedback store (tests use it to inject
// failures); the previous store is closed.
func (s *Server) WithFeedbackStore(fs FeedbackStore) {
	if s.feedback != nil {
		_ = s.feedback.Close()
	}
	s.feedback = fs
}

// Close releases the feedback store and the Redis client.
func (s *Server) Close() error {
	var errs []error
	if s.feedback != nil {
		errs = append(errs, s.feedback.Close())
	}
	if s.redis != nil {
		errs = append(errs, s.redis.Close())
	}
	return errors.Join(errs...)
}

// Register adds the CDS Hooks endpoints to r. They carry their own
// authentication (EHR JWTs), not the REST surfaces' OIDC middleware.
func (s *Server) Register(r *mux.Router) {
	r.Handle("/cds-services", httpx.Handle(s.discovery)).Methods(http.MethodGet)
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
		p, err := s.auth.Verify(r.Context(), authz, s.audience(r))
		if err != nil {
			return principalResult{}, authProblem(err)
		}
		return principalResult{p: p}, nil
	}
	if s.cfg.DevUnauthenticated && loopbackRemote(r.RemoteAddr) {
		httpx.Logger(r.Context()).Warn("CDS Hooks call accepted WITHOUT authentication (development switch)", zap.String("switch", EnvDevUnauthenticated))
		return principalResult{dev: true}, nil
	}
	if s.auth == nil {
		return principalResult{}, &httpx.Error{Status: http.StatusUnauthorized, Type: TypeCDSUnauthorized,
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

// Problem types of the CDS surface.
const (
	TypeCDSUnauthorized = "urn:pgxsafety:problem:cds-unauthorized"
	TypeCDSPrecondition = "urn:pgxsafety:problem:cds-prefetch-missing"
	TypeCDSUnknown      = "urn:pgxsafety:problem:cds-unknown-service"
	TypeReplayCheck     = "urn:pgxsafety:problem:cds-replay-check-unavailable"
)

func authProblem(err error) error {
	var ae *AuthError
	if errors.As(err, &ae) {
		return &httpx.Error{Status: http.StatusUnauthorized, Type: TypeCDSUnauthorized, Detail: ae.Reason,
			Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}, Err: err}
	}
	if errors.Is(err, ErrReplayCheck) {
		return &httpx.Error{Status: http.StatusServiceUnavailable, Type: TypeReplayCheck,
			Detail: "the token replay check is unavailable; no advice was given", Err: err}
	}
	return err
}
