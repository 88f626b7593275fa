package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cmd/pgxsafety/internal/redisstore"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// HTTP server limits.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownTimeout   = 10 * time.Second
	// batchStopMargin is how long before the end of the shutdown grace
	// running CSV batches are told to stop.
	batchStopMargin = 2 * time.Second
)

// Audit retention (spec §8): entries are kept this long, and the purge
// job runs this often.
const (
	defaultRetentionDays = 365
	purgeInterval        = 24 * time.Hour
	purgeFirstDelay      = time.Minute
)

// Per-request costs, set by measurement (docs/performance.md, "Check
// path: audit encoding, GC, commit window").
const (
	// maxAuditCommitWindow bounds PGXSAFETY_AUDIT_COMMIT_WINDOW: the
	// window adds up to this much to a busy answer's latency.
	maxAuditCommitWindow = 10 * time.Millisecond
	// defaultGCPercent is the garbage collector's target percentage
	// (the Go runtime's default is 100): half the collections for about
	// 30 MiB more peak memory (docs/performance.md).
	defaultGCPercent = 200
)

// serveListening, when set (by tests only), is called with the bound
// address once the server listens.
var serveListening func(addr net.Addr)

// serveStoreOptions, when set (by tests only), adjusts the audit store
// options of serve (short timeouts for the fail-closed tests).
var serveStoreOptions func(*sqlstore.Options)

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
	// checkpoints signs and publishes the audit log's checkpoints.
	checkpoints *checkpointer
	// stopping is closed shortly before the shutdown grace ends (CSV
	// batches still streaming then end with an error line).
	stopping chan struct{}
	metrics  *httpx.Metrics
	kb       *evaluate.Engine
	ck       *classify.Knowledge
	devMode  bool
	closers  []func()
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
	s := &server{metrics: httpx.NewMetrics(), devMode: cfg.oidc.devMode(), stopping: make(chan struct{})}
	defer func() {
		if err != nil {
			s.close()
		}
	}()

	base, err := loadBase(stderr)
	if err != nil {
		return nil, err
	}
	s.kb, s.ck = base.Evaluator, base.Classifier
	s.metrics.SetKnowledge(s.kb.Version.Label, s.kb.Version.Digest)
	s.metrics.SetBuild(pgxapi.EngineVersion, pgxapi.APIVersion)

	signer, err := loadOrCreateLogKey(cfg.logKeyFile, cfg.logOrigin)
	if err != nil {
		return nil, err
	}
	storeOpts := sqlstore.Options{
		Signer:       signer,
		OmitPayloads: !cfg.auditPayloads,
		NoMigrate:    !cfg.autoMigrate,
		CommitWindow: cfg.auditCommitWindow,
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

	witness, err := newWitness(cfg, signer)
	if err != nil {
		return nil, err
	}
	s.checkpoints = newCheckpointer(s.store, signer, witness, log.Named("transparency"))
	if err := s.checkpoints.checkWitness(ctx); err != nil {
		return nil, err
	}
	if s.devMode && cfg.witnessURL == "" {
		if within, _ := pathWithin(cfg.witnessFile, cfg.dataDir); within {
			log.Warn("the audit witness file is inside the data directory, where whoever can rewrite the log can roll it back too: "+
				"allowed without an identity provider only; with PGXSAFETY_OIDC_ISSUER set, serve refuses it (set PGXSAFETY_AUDIT_WITNESS_FILE to storage the database owner cannot write)", zap.String("witness", cfg.witnessFile))
		}
	}
	// A log inconsistent with its witness is reported (log, /readyz) but
	// does not stop the service: answers are still audited durably.
	_ = s.checkpoints.publish(ctx)

	// One JSON Web Key Set cache for the identity provider's keys and the
	// CDS clients' keys.
	keySets := httpx.NewKeySetCache(ctx, nil, o.now)
	verifier, err := newVerifier(ctx, cfg, keySets, log, o.now)
	if err != nil {
		return nil, err
	}
	if !s.devMode && cfg.witnessURL == "" {
		if err := witnessApart(cfg.witnessFile, cfg.dataDir, cfg.databaseURL); err != nil {
			return nil, err
		}
	}
	rdb, err := newRedis(ctx, cfg, s, log)
	if err != nil {
		return nil, err
	}
	limiter, err := newLimiter(cfg, rdb, s, log, o.now)
	if err != nil {
		return nil, err
	}
	feedback := httpx.FeedbackAuditIDs(s.store.Feedback())

	var appender audit.Appender = s.store
	// Every audited answer carries its entry's receipt, signed with the
	// log key once the entry is durable.
	svcOpts := []service.Option{service.WithReceipts(audit.NewReceiptSigner(signer))}
	if o.appender != nil {
		appender, svcOpts = o.appender, nil
	}
	svc := service.New(s.kb, s.ck, httpx.AuditIDs(appender), o.now, svcOpts...)
	router := httpx.NewRouter()
	s.router = router

	// Surfaces. Authentication and rate limits are applied by httpx.Chain
	// by path prefix (pgxapi.Protection), not per route.
	pgxapi.New(svc, s.store, log, pgxapi.Config{RateLimitPerMinute: cfg.ratePerMinute,
		BatchCSVMaxBytes: cfg.batchCSVMaxBytes, BatchCSVMaxRows: cfg.batchCSVMaxRows,
		VCFMaxBytes: cfg.vcfMaxBytes, VCFMinGQ: cfg.vcfMinGQ, VCFMinDP: cfg.vcfMinDP, Stopping: s.stopping,
		Integrity: s.checkpoints.Tampering}).Register(router)
	// CDS Hooks: its own EHR-JWT authentication (not under the OIDC prefixes).
	cdsCfg := cdshooks.Config{
		PublicURL:          cfg.publicURL,
		ClientsFile:        cfg.cdsClientsFile,
		DevUnauthenticated: cfg.cdsDevUnauthenticated,
		ListenAddr:         cfg.addr,
		Feedback:           feedback,
		KeySets:            keySets,
	}
	if rdb != nil {
		replay := redisstore.NewReplayCache(rdb, o.now, cdshooks.ClockSkew)
		openCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		since, err := replay.Open(openCtx)
		cancel()
		if err != nil {
			log.Warn("the CDS jti replay store's epoch could not be read; every hook call checks it again", zap.Error(err))
		} else {
			log.Info("CDS jti replay store open: tokens issued before its record began are refused", zap.Time("record_since", since))
		}
		cdsCfg.Replay = replay
	}
	cds, err := cdshooks.New(svc, cdsCfg, log)
	if err != nil {
		return nil, err
	}
	cds.Register(router)
	// SMART review app: its own authorization (SMART App Launch).
	app, err := newSMARTApp(cfg, svc, rdb, log)
	if err != nil {
		return nil, err
	}
	if app != nil {
		app.Register(router)
	}
	if app == nil || !app.Enabled() {
		cds.WithoutSMARTLinks()
	}
	pgxapi.RegisterTransparency(router, s.checkpoints)
	router.Handle("/metrics", s.metrics.Handler()).Methods(http.MethodGet, http.MethodHead)

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
func newVerifier(ctx context.Context, cfg serveConfig, keySets *httpx.KeySetCache, log *zap.Logger, now func() time.Time) (httpx.Verifier, error) {
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
		KeySets:     keySets,
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
// time after firstDelay) until ctx ends. When the store's database role
// may not delete rows (the least-privilege PostgreSQL service role of
// docs/operations.md), it logs that once at info level and stops: the
// owner runs "pgxsafety audit purge" instead.
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
		if ok, err := store.CanPurge(ctx); err == nil && !ok {
			log.Info("audit retention purge not run by this process: its database role may not delete audit entries; " +
				"run \"pgxsafety audit purge\" daily as the database owner (docs/operations.md)")
			return
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
	useZapForRedis(log)
	if cfg.gcPercent > 0 {
		debug.SetGCPercent(cfg.gcPercent)
	}

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
	retentionDone.Add(1)
	go func() {
		defer retentionDone.Done()
		srvState.checkpoints.run(retentionCtx, cfg.checkpointInterval)
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
		zap.String("audit_log_origin", srvState.checkpoints.signer.Name()),
		zap.String("audit_log_key", srvState.checkpoints.signer.Verifier().String()),
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
	// Two seconds before the grace ends, batches still streaming stop and
	// end with an error line, so no client sees its stream cut silently.
	stopBatches := time.AfterFunc(shutdownTimeout-batchStopMargin, func() { close(srvState.stopping) })
	defer stopBatches.Stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	stopRetention()
	retentionDone.Wait()
	// Every answered request is in the log: sign its final checkpoint.
	_ = srvState.checkpoints.publish(shutdownCtx)
	srvState.close()
	srvState.closers = nil
	log.Info("stopped")
	return nil
}
