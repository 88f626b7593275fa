package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx/redisstore"
)

// Defaults of the serve configuration (DESIGN.md §7).
const (
	defaultAddr    = "127.0.0.1:8080"
	defaultDataDir = "./pgxsafety-data"
)

// HTTP server limits.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownTimeout   = 10 * time.Second
)

// Audit retention (spec §8): entries are kept this long, and the purge
// job runs this often.
const (
	defaultRetentionDays = 365
	purgeInterval        = 24 * time.Hour
	purgeFirstDelay      = time.Minute
)

// serveListening, when set (by tests only), is called with the bound
// address once the server listens.
var serveListening func(addr net.Addr)

// serveStoreOptions, when set (by tests only), adjusts the audit store
// options of serve (short timeouts for the fail-closed tests).
var serveStoreOptions func(*sqlstore.Options)

// envOr returns the environment variable key, or def when it is unset or
// empty.
func envOr(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

// envInt reads a positive integer variable (def when unset).
func envInt(key string, def int) (int, error) {
	v := envOr(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, usageError("%s must be a positive integer, got %q", key, v)
	}
	return n, nil
}

// envBool reads a boolean variable (def when unset).
func envBool(key string, def bool) (bool, error) {
	v := envOr(key, "")
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usageError("%s must be true or false, got %q", key, v)
	}
	return b, nil
}

// oidcSettings are the identity settings (PGXSAFETY_OIDC_*).
type oidcSettings struct {
	issuer      string
	audience    string
	jwksURL     string
	jwksFile    string
	algorithms  []string
	maxTokenAge time.Duration
}

// devMode reports whether no issuer is configured (local development).
func (o oidcSettings) devMode() bool { return o.issuer == "" }

func loadOIDCSettings() (oidcSettings, error) {
	o := oidcSettings{
		issuer:   envOr("PGXSAFETY_OIDC_ISSUER", ""),
		audience: envOr("PGXSAFETY_OIDC_AUDIENCE", ""),
		jwksURL:  envOr("PGXSAFETY_OIDC_JWKS_URL", ""),
		jwksFile: envOr("PGXSAFETY_OIDC_JWKS_FILE", ""),
	}
	if algs := envOr("PGXSAFETY_OIDC_ALGORITHMS", ""); algs != "" {
		for _, a := range strings.Split(algs, ",") {
			if a = strings.TrimSpace(a); a != "" {
				o.algorithms = append(o.algorithms, a)
			}
		}
	}
	if v := envOr("PGXSAFETY_OIDC_MAX_TOKEN_AGE", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return o, usageError("PGXSAFETY_OIDC_MAX_TOKEN_AGE must be a positive duration such as 12h, got %q", v)
		}
		o.maxTokenAge = d
	}
	if o.devMode() && (o.audience != "" || o.jwksURL != "" || o.jwksFile != "" || o.algorithms != nil || o.maxTokenAge != 0) {
		return o, usageError("PGXSAFETY_OIDC_AUDIENCE, _JWKS_URL, _JWKS_FILE, _ALGORITHMS and _MAX_TOKEN_AGE need PGXSAFETY_OIDC_ISSUER")
	}
	if !o.devMode() && o.audience == "" {
		return o, usageError("PGXSAFETY_OIDC_ISSUER is set but PGXSAFETY_OIDC_AUDIENCE is not: name the client id tokens must be issued to")
	}
	return o, nil
}

// serveConfig is the configuration of the serve subcommand.
type serveConfig struct {
	addr           string
	dataDir        string
	databaseURL    string
	publicURL      string
	logLevel       zapcore.Level
	logFormat      string
	oidc           oidcSettings
	redisURL       string
	ratePerMinute  int
	rateBurst      int
	rateLimitsFile string
	corsOrigins    []string
	auditPayloads  bool
	retentionDays  int
	autoMigrate    bool
	// POST /pgx/batch_csv limits (0: the pgxapi defaults).
	batchCSVMaxBytes int64
	batchCSVMaxRows  int
	// CDS Hooks: the trusted-clients file and the development switch.
	cdsClientsFile        string
	cdsDevUnauthenticated bool
	// smart configures the SMART review app (PGXSAFETY_SMART_*).
	smart smartSettings
}

func loadServeConfig(args []string, stderr io.Writer) (serveConfig, error) {
	fs := newFlagSet("serve", stderr, "serve [--addr ADDR] [--data-dir DIR]")
	cfg := serveConfig{
		databaseURL: strings.TrimSpace(os.Getenv("PGXSAFETY_DATABASE_URL")),
		publicURL:   envOr("PGXSAFETY_PUBLIC_URL", ""),
		redisURL:    envOr("PGXSAFETY_REDIS_URL", ""),
	}
	fs.StringVar(&cfg.addr, "addr", envOr("PGXSAFETY_ADDR", defaultAddr), "listen address (env PGXSAFETY_ADDR)")
	fs.StringVar(&cfg.dataDir, "data-dir", envOr("PGXSAFETY_DATA_DIR", defaultDataDir), "data directory (env PGXSAFETY_DATA_DIR)")
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	level, err := zapcore.ParseLevel(envOr("PGXSAFETY_LOG_LEVEL", "info"))
	if err != nil {
		return cfg, usageError("PGXSAFETY_LOG_LEVEL: %v", err)
	}
	cfg.logLevel = level
	cfg.logFormat = envOr("PGXSAFETY_LOG_FORMAT", "json")
	if cfg.logFormat != "json" && cfg.logFormat != "console" {
		return cfg, usageError("PGXSAFETY_LOG_FORMAT must be json or console, got %q", cfg.logFormat)
	}
	if cfg.ratePerMinute, err = envInt("PGXSAFETY_RATE_LIMIT_PER_MINUTE", pgxapi.DefaultRateLimitPerMinute); err != nil {
		return cfg, err
	}
	if cfg.rateBurst, err = envInt("PGXSAFETY_RATE_LIMIT_BURST", cfg.ratePerMinute); err != nil {
		return cfg, err
	}
	cfg.rateLimitsFile = envOr("PGXSAFETY_RATE_LIMITS_FILE", "")
	if cfg.corsOrigins, err = httpx.ParseCORSOrigins(envOr("PGXSAFETY_CORS_ORIGINS", "")); err != nil {
		return cfg, usageError("PGXSAFETY_CORS_ORIGINS: %v", err)
	}
	switch v := envOr("PGXSAFETY_AUDIT_PAYLOADS", "store"); v {
	case "store":
		cfg.auditPayloads = true
	case "digest":
	default:
		return cfg, usageError("PGXSAFETY_AUDIT_PAYLOADS must be store or digest, got %q", v)
	}
	if cfg.retentionDays, err = envInt("PGXSAFETY_AUDIT_RETENTION_DAYS", defaultRetentionDays); err != nil {
		return cfg, err
	}
	if cfg.retentionDays < defaultRetentionDays {
		return cfg, usageError("PGXSAFETY_AUDIT_RETENTION_DAYS must be at least %d (spec §8), got %d", defaultRetentionDays, cfg.retentionDays)
	}
	if cfg.autoMigrate, err = envBool("PGXSAFETY_DATABASE_MIGRATE", true); err != nil {
		return cfg, err
	}
	if cfg.batchCSVMaxBytes, cfg.batchCSVMaxRows, err = batchLimitsFromEnv(); err != nil {
		return cfg, err
	}
	cfg.cdsClientsFile = envOr("PGXSAFETY_CDS_CLIENTS", "")
	if cfg.cdsDevUnauthenticated, err = envBool(cdshooks.EnvDevUnauthenticated, false); err != nil {
		return cfg, err
	}
	if cfg.publicURL != "" {
		u, err := url.Parse(cfg.publicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return cfg, usageError("PGXSAFETY_PUBLIC_URL must be an absolute http(s) URL")
		}
	}
	if cfg.oidc, err = loadOIDCSettings(); err != nil {
		return cfg, err
	}
	if cfg.smart, err = loadSMARTSettings(cfg.publicURL); err != nil {
		return cfg, err
	}
	if cfg.oidc.devMode() {
		if err := requireLoopback(cfg.addr); err != nil {
			return cfg, err
		}
	} else if _, _, err := net.SplitHostPort(cfg.addr); err != nil {
		return cfg, usageError("listen address %q: %v", cfg.addr, err)
	}
	return cfg, nil
}

// requireLoopback rejects listen addresses that are not loopback. Without
// an OpenID Connect issuer the server runs in local development mode,
// which listens on loopback only (DESIGN.md §4): tokens minted from a key
// on this machine must never open clinical answers to the network.
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("listen address %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageError("listen address %q is not loopback: with no PGXSAFETY_OIDC_ISSUER the server runs in local "+
		"development mode and listens on 127.0.0.1, ::1 or localhost only", addr)
}

func newLogger(stderr io.Writer, level zapcore.Level, format string) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if format == "console" {
		encoder = zapcore.NewConsoleEncoder(enc)
	} else {
		encoder = zapcore.NewJSONEncoder(enc)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(stderr)), level))
}

// server is everything serve runs, built by newServer.
type server struct {
	handler http.Handler
	router  *mux.Router
	store   *sqlstore.Store
	metrics *httpx.Metrics
	kb      *engine.Knowledge
	devMode bool
	closers []func()
}

// serverOptions are the parts of newServer that tests and benchmarks
// replace.
type serverOptions struct {
	// appender, when set, receives the audit entries instead of the store
	// (benchmarks only: audit disabled).
	appender audit.Appender
	// storeOptions adjusts the store's options.
	storeOptions func(*sqlstore.Options)
	// now is the service clock (time.Now when nil).
	now func() time.Time
}

// close stops the background work and closes the store, flushing its
// writer.
func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// newServer loads the knowledge, opens the audit store, sets up identity,
// rate limits and metrics, and builds the handler.
func newServer(ctx context.Context, cfg serveConfig, log *zap.Logger, stderr io.Writer, o serverOptions) (_ *server, err error) {
	if o.now == nil {
		o.now = time.Now
	}
	s := &server{metrics: httpx.NewMetrics(), devMode: cfg.oidc.devMode()}
	defer func() {
		if err != nil {
			s.close()
		}
	}()

	s.kb, err = loadKnowledge(stderr)
	if err != nil {
		return nil, err
	}
	s.metrics.SetKnowledge(s.kb.Version.Label, s.kb.Version.Digest)
	s.metrics.SetBuild(pgxapi.EngineVersion, pgxapi.APIVersion)

	storeOpts := sqlstore.Options{
		OmitPayloads: !cfg.auditPayloads,
		NoMigrate:    !cfg.autoMigrate,
		OnCommit: func(st sqlstore.CommitStats) {
			s.metrics.ObserveAuditCommit(st.Entries, st.Duration, st.Err)
		},
	}
	if o.storeOptions != nil {
		o.storeOptions(&storeOpts)
	}
	s.store, err = sqlstore.OpenWith(ctx, cfg.databaseURL, cfg.dataDir, storeOpts)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() {
		if err := s.store.Close(); err != nil {
			log.Error("closing the audit store", zap.Error(err))
		}
	})

	verifier, err := newVerifier(ctx, cfg, log, o.now)
	if err != nil {
		return nil, err
	}
	rdb, err := newRedis(ctx, cfg, s, log)
	if err != nil {
		return nil, err
	}
	limiter, err := newLimiter(cfg, rdb, s, log, o.now)
	if err != nil {
		return nil, err
	}
	feedback, err := sqlstore.OpenFeedback(ctx, cfg.databaseURL, cfg.dataDir)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { _ = feedback.Close() })

	var appender audit.Appender = s.store
	if o.appender != nil {
		appender = o.appender
	}
	svc := service.New(s.kb, httpx.AuditIDs(appender), o.now)
	router := httpx.NewRouter()
	s.router = router

	// Surfaces. Authentication and rate limits are applied by httpx.Chain
	// by path prefix (pgxapi.Protection), not per route.
	pgxapi.New(svc, s.store, log, pgxapi.Config{RateLimitPerMinute: cfg.ratePerMinute,
		BatchCSVMaxBytes: cfg.batchCSVMaxBytes, BatchCSVMaxRows: cfg.batchCSVMaxRows}).Register(router)
	// CDS Hooks: its own EHR-JWT authentication (not under the OIDC prefixes).
	cdsCfg := cdshooks.Config{
		PublicURL:          cfg.publicURL,
		ClientsFile:        cfg.cdsClientsFile,
		DevUnauthenticated: cfg.cdsDevUnauthenticated,
		ListenAddr:         cfg.addr,
		Feedback:           feedback,
	}
	if rdb != nil {
		cdsCfg.Replay = redisstore.NewReplayCache(rdb, o.now)
	}
	cds, err := cdshooks.New(svc, cdsCfg, log)
	if err != nil {
		return nil, err
	}
	cds.Register(router)
	// SMART review app: its own authorization (SMART App Launch).
	app, err := newSMARTApp(cfg, svc, log)
	if err != nil {
		return nil, err
	}
	if app != nil {
		app.Register(router)
	}
	if app == nil || !app.Enabled() {
		cds.WithoutSMARTLinks()
	}
	router.Handle("/metrics", s.metrics.Handler()).Methods(http.MethodGet)

	s.handler = httpx.Chain(router, httpx.Options{
		Log:       log,
		Metrics:   s.metrics,
		Verifier:  verifier,
		Protected: pgxapi.Protection,
		Limiter:   limiter,
		CORS:      httpx.CORS{AllowedOrigins: cfg.corsOrigins},
		HSTS:      strings.HasPrefix(cfg.publicURL, "https://"),
	})
	return s, nil
}

// newVerifier returns the OpenID Connect verifier, or the local
// development one (with its single warning line) when no issuer is set.
func newVerifier(ctx context.Context, cfg serveConfig, log *zap.Logger, now func() time.Time) (httpx.Verifier, error) {
	if cfg.oidc.devMode() {
		key, err := httpx.LoadOrCreateDevKey(cfg.dataDir)
		if err != nil {
			return nil, err
		}
		log.Warn("local development mode: no PGXSAFETY_OIDC_ISSUER is configured, so only tokens from " +
			"\"pgxsafety token\" (signed with the key in the data directory) are accepted and the server listens on loopback only")
		return httpx.NewDevVerifier(key, now)
	}
	v, err := httpx.NewOIDCVerifier(httpx.OIDCConfig{
		Issuer:      cfg.oidc.issuer,
		Audience:    cfg.oidc.audience,
		JWKSURL:     cfg.oidc.jwksURL,
		JWKSFile:    cfg.oidc.jwksFile,
		Algorithms:  cfg.oidc.algorithms,
		MaxTokenAge: cfg.oidc.maxTokenAge,
		Now:         now,
		Log:         log.Named("oidc"),
	})
	if err != nil {
		return nil, usageError("%v", err)
	}
	// A failed first fetch is not fatal: the issuer may be briefly down.
	// Requests get 503 until the keys arrive; the error is logged.
	fetchCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := v.Refresh(fetchCtx); err == nil {
		log.Info("identity provider keys loaded", zap.String("issuer", cfg.oidc.issuer))
	}
	return v, nil
}

// newRedis returns the one Redis client of the process (nil when
// PGXSAFETY_REDIS_URL is unset), shared by the rate limiter and the CDS
// replay cache. Redis never stops the server from starting: see the
// failure policy in package redisstore.
func newRedis(ctx context.Context, cfg serveConfig, s *server, log *zap.Logger) (*redis.Client, error) {
	if cfg.redisURL == "" {
		return nil, nil
	}
	rdb, err := redisstore.NewClient(cfg.redisURL)
	if err != nil {
		// The URL may hold a password: do not quote it.
		return nil, usageError("PGXSAFETY_REDIS_URL is not a redis:// or rediss:// URL")
	}
	s.closers = append(s.closers, func() { rdb.Close() })
	pingCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		log.Warn("Redis does not answer: rate limits are kept in memory and CDS hook calls are refused (503) until it does", zap.Error(err))
	}
	return rdb, nil
}

// newLimiter returns the per-caller rate limiter: in Redis when rdb is set
// (replicas share budgets), else in memory.
func newLimiter(cfg serveConfig, rdb *redis.Client, s *server, log *zap.Logger, now func() time.Time) (*httpx.RateLimiter, error) {
	var overrides []httpx.RateOverride
	if cfg.rateLimitsFile != "" {
		var err error
		if overrides, err = httpx.LoadRateOverrides(cfg.rateLimitsFile); err != nil {
			return nil, usageError("PGXSAFETY_RATE_LIMITS_FILE: %v", err)
		}
	}
	var store httpx.RateStore
	if rdb != nil {
		store = redisstore.NewRateStore(rdb)
	}
	l, err := httpx.NewRateLimiter(store, httpx.PerMinute(cfg.ratePerMinute, cfg.rateBurst), overrides, s.metrics, log.Named("ratelimit"), now)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return l, nil
}

// runRetention purges expired audit entries every interval (the first
// time after firstDelay) until ctx ends.
func runRetention(ctx context.Context, store *sqlstore.Store, retention time.Duration, firstDelay, interval time.Duration,
	now func() time.Time, log *zap.Logger, m *httpx.Metrics) {
	timer := time.NewTimer(firstDelay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		res, err := store.Purge(ctx, now().Add(-retention))
		switch {
		case err != nil:
			log.Error("audit retention purge failed", zap.Error(err))
		case res.Removed > 0:
			m.AddPurged(res.Removed)
			log.Info("audit retention purge",
				zap.Int64("removed", res.Removed),
				zap.Int64("checkpoint_sequence", res.Checkpoint.ThroughSequence))
		}
		timer.Reset(interval)
	}
}

func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := loadServeConfig(args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.logLevel, cfg.logFormat)
	defer func() { _ = log.Sync() }()

	opts := serverOptions{storeOptions: serveStoreOptions}
	srvState, err := newServer(ctx, cfg, log, stderr, opts)
	if err != nil {
		if errors.Is(err, errUsage) {
			return err
		}
		return fmt.Errorf("refusing to start: %w", err)
	}
	defer srvState.close()

	retentionCtx, stopRetention := context.WithCancel(context.WithoutCancel(ctx))
	var retentionDone sync.WaitGroup
	retentionDone.Add(1)
	go func() {
		defer retentionDone.Done()
		runRetention(retentionCtx, srvState.store, time.Duration(cfg.retentionDays)*24*time.Hour,
			purgeFirstDelay, purgeInterval, time.Now, log.Named("retention"), srvState.metrics)
	}()
	defer func() {
		stopRetention()
		retentionDone.Wait()
	}()

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           srvState.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	mode := "oidc"
	if srvState.devMode {
		mode = "local development"
	}
	log.Info("pgxsafety listening",
		zap.String("addr", ln.Addr().String()),
		zap.String("knowledge_version", srvState.kb.Version.Label),
		zap.String("audit_backend", srvState.store.Backend()),
		zap.String("audit_location", srvState.store.Location()),
		zap.Bool("audit_payloads", cfg.auditPayloads),
		zap.String("auth_mode", mode),
		zap.Bool("rate_limit_redis", cfg.redisURL != ""),
		zap.Int("rate_limit_per_minute", cfg.ratePerMinute),
	)
	if serveListening != nil {
		serveListening(ln.Addr())
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish (each waits for its
	// audit entry), then flush the audit writer (deferred close).
	log.Info("shutting down", zap.Duration("grace", shutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	stopRetention()
	retentionDone.Wait()
	srvState.close()
	srvState.closers = nil
	log.Info("stopped")
	return nil
}
