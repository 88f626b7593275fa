package main

// The configuration of the binary. This file is the only place that reads
// the environment (a test checks it): every subcommand gets its settings
// from the typed, validated structures below, and builds the
// infrastructure (stores, Redis, key caches) from them.

import (
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// databaseURLFromEnv is PGXSAFETY_DATABASE_URL (empty: the SQLite file in
// the data directory). sqlstore parses it (the one parser).
func databaseURLFromEnv() string { return strings.TrimSpace(os.Getenv("PGXSAFETY_DATABASE_URL")) }

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
	// POST /pgx/vcf upload limit (0: the pgxapi default).
	vcfMaxBytes int64
	// CDS Hooks: the trusted-clients file and the development switch.
	cdsClientsFile        string
	cdsDevUnauthenticated bool
	// The transparency log: the signing key file, the witness file and
	// how often a checkpoint is signed.
	logKeyFile         string
	witnessFile        string
	checkpointInterval time.Duration
	// auditCommitWindow is how long a busy audit writer waits for more
	// entries before it commits (PGXSAFETY_AUDIT_COMMIT_WINDOW;
	// sqlstore.Options.CommitWindow).
	auditCommitWindow time.Duration
	// gcPercent is the garbage collector's target percentage that serve
	// and bench set (PGXSAFETY_GOGC; runtime/debug.SetGCPercent); 0
	// leaves the runtime's (GOGC set, PGXSAFETY_GOGC not).
	gcPercent int
	// smart configures the SMART review app (PGXSAFETY_SMART_*).
	smart smartSettings
}

func loadServeConfig(args []string, stderr io.Writer) (serveConfig, error) {
	fs := newFlagSet("serve", stderr, "serve [--addr ADDR] [--data-dir DIR]")
	cfg := serveConfig{
		databaseURL: databaseURLFromEnv(),
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
	vcfMax, err := envInt("PGXSAFETY_VCF_MAX_BYTES", pgxapi.DefaultVCFMaxBytes)
	if err != nil {
		return cfg, err
	}
	cfg.vcfMaxBytes = int64(vcfMax)
	cfg.logKeyFile, cfg.witnessFile = logKeyPath(cfg.dataDir), witnessPath(cfg.dataDir)
	cfg.checkpointInterval = defaultCheckpointInterval
	if v := envOr("PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond {
			return cfg, usageError("PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL must be a duration of at least 100ms such as 10s, got %q", v)
		}
		cfg.checkpointInterval = d
	}
	cfg.auditCommitWindow = defaultAuditCommitWindow
	if v := envOr("PGXSAFETY_AUDIT_COMMIT_WINDOW", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > maxAuditCommitWindow {
			return cfg, usageError("PGXSAFETY_AUDIT_COMMIT_WINDOW must be a duration from 0 (commit at once) to %v such as 500us, got %q", maxAuditCommitWindow, v)
		}
		cfg.auditCommitWindow = d
	}
	// An operator's own GOGC stands unless PGXSAFETY_GOGC is set too.
	if envOr("PGXSAFETY_GOGC", "") != "" || envOr("GOGC", "") == "" {
		if cfg.gcPercent, err = envInt("PGXSAFETY_GOGC", defaultGCPercent); err != nil {
			return cfg, err
		}
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

// batchLimitsFromEnv reads the POST /pgx/batch_csv limits of serve:
// PGXSAFETY_BATCH_CSV_MAX_BYTES and PGXSAFETY_BATCH_CSV_MAX_ROWS (unset:
// the defaults of package pgxapi, reported by /pgx/version).
func batchLimitsFromEnv() (maxBytes int64, maxRows int, err error) {
	bytes, err := envInt("PGXSAFETY_BATCH_CSV_MAX_BYTES", pgxapi.DefaultBatchCSVMaxBytes)
	if err != nil {
		return 0, 0, err
	}
	rows, err := envInt("PGXSAFETY_BATCH_CSV_MAX_ROWS", pgxapi.DefaultBatchCSVMaxRows)
	if err != nil {
		return 0, 0, err
	}
	return int64(bytes), rows, nil
}
