package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
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

// serveListening, when set (by tests only), is called with the bound
// address once the server listens.
var serveListening func(addr net.Addr)

// envOr returns the environment variable key, or def when it is unset or
// empty.
func envOr(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

// serveConfig is the configuration of the serve subcommand.
type serveConfig struct {
	addr               string
	dataDir            string
	databaseURL        string
	logLevel           zapcore.Level
	rateLimitPerMinute int
}

func loadServeConfig(args []string, stderr io.Writer) (serveConfig, error) {
	fs := newFlagSet("serve", stderr, "serve [--addr ADDR] [--data-dir DIR]")
	cfg := serveConfig{databaseURL: strings.TrimSpace(os.Getenv("PGXSAFETY_DATABASE_URL"))}
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
	cfg.rateLimitPerMinute = pgxapi.DefaultRateLimitPerMinute
	if v := envOr("PGXSAFETY_RATE_LIMIT_PER_MINUTE", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return cfg, usageError("PGXSAFETY_RATE_LIMIT_PER_MINUTE must be a positive integer, got %q", v)
		}
		cfg.rateLimitPerMinute = n
	}
	if err := requireLoopback(cfg.addr); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// requireLoopback rejects listen addresses that are not loopback. Until
// authentication exists (PGXSAFETY_OIDC_ISSUER arrives with the platform
// issue) the server runs in local development mode, which listens on
// loopback only (DESIGN.md §4): clinical answers are never served to the
// network without authentication.
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
	return usageError("listen address %q is not loopback: without authentication (not yet available) "+
		"the server runs in local development mode and listens on 127.0.0.1, ::1 or localhost only", addr)
}

func newLogger(stderr io.Writer, level zapcore.Level) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(stderr)), level)
	return zap.New(core)
}

func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := loadServeConfig(args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.logLevel)
	defer func() { _ = log.Sync() }()

	kb, err := loadKnowledge(stderr)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}

	store, err := sqlstore.Open(ctx, cfg.databaseURL, cfg.dataDir)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	defer store.Close()

	svc := engine.NewService(kb, store, time.Now)
	api := pgxapi.New(svc, store, log, pgxapi.Config{RateLimitPerMinute: cfg.rateLimitPerMinute})
	router := httpx.NewRouter()
	api.Register(router)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           httpx.Wrap(router, log),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	log.Info("pgxsafety listening",
		zap.String("addr", ln.Addr().String()),
		zap.String("knowledge_version", kb.Version.Label),
		zap.String("audit_backend", store.Backend()),
		zap.String("audit_location", store.Location()),
		zap.String("mode", "local development: no authentication, loopback only"),
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
	log.Info("shutting down", zap.Duration("grace", shutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}
