package main

// The configuration of the binary. This file is the only place that reads
// the environment (a test checks it): every subcommand gets its settings
// from the typed, validated structures below, and builds the
// infrastructure (stores, Redis, key caches) from them.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// environment is every variable the binary reads (DESIGN.md §7,
// docs/operations.md), typed and with its default. A variable set to an
// empty or blank value counts as unset. Flags override some of them
// (--addr, --data-dir). The defaults repeat constants of this and other
// packages; TestEnvironmentDefaults keeps them equal.
type environment struct {
	Addr        string `env:"PGXSAFETY_ADDR, default=127.0.0.1:8080"`
	DataDir     string `env:"PGXSAFETY_DATA_DIR, default=./pgxsafety-data"`
	DatabaseURL string `env:"PGXSAFETY_DATABASE_URL"` // empty: SQLite in the data directory; sqlstore parses it
	// DatabaseMigrate: serve migrates the audit store on start.
	DatabaseMigrate bool   `env:"PGXSAFETY_DATABASE_MIGRATE, default=true"`
	PublicURL       string `env:"PGXSAFETY_PUBLIC_URL"`
	RedisURL        string `env:"PGXSAFETY_REDIS_URL"`

	LogLevel  zapcore.Level `env:"PGXSAFETY_LOG_LEVEL, default=info"`
	LogFormat string        `env:"PGXSAFETY_LOG_FORMAT, default=json"`

	OIDCIssuer   string `env:"PGXSAFETY_OIDC_ISSUER"`
	OIDCAudience string `env:"PGXSAFETY_OIDC_AUDIENCE"`
	OIDCJWKSURL  string `env:"PGXSAFETY_OIDC_JWKS_URL"`
	OIDCJWKSFile string `env:"PGXSAFETY_OIDC_JWKS_FILE"`
	// OIDCAlgorithms is a comma-separated list (see algorithms).
	OIDCAlgorithms string `env:"PGXSAFETY_OIDC_ALGORITHMS"`
	// OIDCMaxTokenAge is nil when unset (the verifier's default).
	OIDCMaxTokenAge *time.Duration `env:"PGXSAFETY_OIDC_MAX_TOKEN_AGE, noinit"`

	RateLimitPerMinute int `env:"PGXSAFETY_RATE_LIMIT_PER_MINUTE, default=60"`
	// RateLimitBurst is nil when unset (the rate per minute).
	RateLimitBurst *int   `env:"PGXSAFETY_RATE_LIMIT_BURST, noinit"`
	RateLimitsFile string `env:"PGXSAFETY_RATE_LIMITS_FILE"`
	CORSOrigins    string `env:"PGXSAFETY_CORS_ORIGINS"`

	// AuditPayloads is store or digest.
	AuditPayloads      string `env:"PGXSAFETY_AUDIT_PAYLOADS, default=store"`
	AuditRetentionDays int    `env:"PGXSAFETY_AUDIT_RETENTION_DAYS, default=365"`
	AuditKeyFile       string `env:"PGXSAFETY_AUDIT_KEY_FILE"`     // empty: audit-log.key in the data directory
	AuditWitnessFile   string `env:"PGXSAFETY_AUDIT_WITNESS_FILE"` // empty: the witness file in the data directory
	// AuditWitnessURL is the submission prefix of a C2SP tlog-witness
	// (instead of the witness file); AuditWitnessKey its cosignature key.
	AuditWitnessURL string `env:"PGXSAFETY_AUDIT_WITNESS_URL"`
	AuditWitnessKey string `env:"PGXSAFETY_AUDIT_WITNESS_KEY"`
	AuditLogOrigin  string `env:"PGXSAFETY_AUDIT_LOG_ORIGIN"` // empty: pgxsafety/audit/ and 8 random hex digits
	// AuditCheckpointInterval is how often serve signs a checkpoint when
	// the log grew.
	AuditCheckpointInterval time.Duration `env:"PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL, default=10s"`
	// AuditCommitWindow is how long a busy audit writer waits for more
	// entries before it commits (0: at once; at most maxAuditCommitWindow).
	AuditCommitWindow time.Duration `env:"PGXSAFETY_AUDIT_COMMIT_WINDOW, default=0s"`

	// GCPercent is nil when unset: the default, unless the operator set
	// GOGC, which then stands.
	GCPercent *int   `env:"PGXSAFETY_GOGC, noinit"`
	GOGC      string `env:"GOGC"`

	BatchCSVMaxBytes int `env:"PGXSAFETY_BATCH_CSV_MAX_BYTES, default=52428800"`
	BatchCSVMaxRows  int `env:"PGXSAFETY_BATCH_CSV_MAX_ROWS, default=100000"`
	VCFMaxBytes      int `env:"PGXSAFETY_VCF_MAX_BYTES, default=209715200"`
	// VCFMinGQ and VCFMinDP are the VCF quality thresholds (0: none).
	VCFMinGQ int `env:"PGXSAFETY_VCF_MIN_GQ, default=20"`
	VCFMinDP int `env:"PGXSAFETY_VCF_MIN_DP, default=10"`

	CDSClients string `env:"PGXSAFETY_CDS_CLIENTS"`
	// CDSDevUnauthenticated is cdshooks.EnvDevUnauthenticated.
	CDSDevUnauthenticated bool `env:"PGXSAFETY_CDS_DEV_UNAUTHENTICATED, default=false"`

	SMARTEHRs       string        `env:"PGXSAFETY_SMART_EHRS"`
	SMARTSessionTTL time.Duration `env:"PGXSAFETY_SMART_SESSION_TTL, default=1h"`
	// SMARTSessionKeyFile seals the SMART sessions kept in Redis (empty:
	// smartSessionKeyFileName in the data directory).
	SMARTSessionKeyFile string `env:"PGXSAFETY_SMART_SESSION_KEY_FILE"`
}

// readEnvironment reads the process environment.
func readEnvironment() (environment, error) {
	return loadEnvironment(context.Background(), envconfig.OsLookuper())
}

// loadEnvironment reads the variables from l (tests pass an
// envconfig.MapLookuper). It checks types only; Validate checks values.
func loadEnvironment(ctx context.Context, l envconfig.Lookuper) (environment, error) {
	var env environment
	err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &env, Lookuper: blankIsUnset{l}})
	if err != nil {
		return env, usageError("%v", nameVariable(err))
	}
	return env, nil
}

// blankIsUnset trims values and treats blank ones as unset, as the binary
// always has (an exported empty variable does not override a default).
type blankIsUnset struct{ envconfig.Lookuper }

func (b blankIsUnset) Lookup(key string) (string, bool) {
	v, ok := b.Lookuper.Lookup(key)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

// nameVariable rewrites envconfig's "Field: cause" into "VARIABLE: cause",
// so the error names what the operator set.
func nameVariable(err error) error {
	msg := err.Error()
	t := reflect.TypeFor[environment]()
	for i := range t.NumField() {
		f := t.Field(i)
		if rest, ok := strings.CutPrefix(msg, f.Name+": "); ok {
			name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return errors.New(name + ": " + rest)
		}
	}
	return err
}

// Validate checks the values the types do not, and the rules between
// variables. Every error names the variable.
func (e environment) Validate() error {
	switch {
	case e.LogFormat != "json" && e.LogFormat != "console":
		return usageError("PGXSAFETY_LOG_FORMAT must be json or console, got %q", e.LogFormat)
	case e.RateLimitPerMinute <= 0:
		return usageError("PGXSAFETY_RATE_LIMIT_PER_MINUTE must be a positive integer, got %d", e.RateLimitPerMinute)
	case e.RateLimitBurst != nil && *e.RateLimitBurst <= 0:
		return usageError("PGXSAFETY_RATE_LIMIT_BURST must be a positive integer, got %d", *e.RateLimitBurst)
	case e.AuditPayloads != "store" && e.AuditPayloads != "digest":
		return usageError("PGXSAFETY_AUDIT_PAYLOADS must be store or digest, got %q", e.AuditPayloads)
	case e.AuditRetentionDays < defaultRetentionDays:
		return usageError("PGXSAFETY_AUDIT_RETENTION_DAYS must be at least %d (spec §8), got %d", defaultRetentionDays, e.AuditRetentionDays)
	case e.BatchCSVMaxBytes <= 0:
		return usageError("PGXSAFETY_BATCH_CSV_MAX_BYTES must be a positive integer, got %d", e.BatchCSVMaxBytes)
	case e.BatchCSVMaxRows <= 0:
		return usageError("PGXSAFETY_BATCH_CSV_MAX_ROWS must be a positive integer, got %d", e.BatchCSVMaxRows)
	case e.VCFMaxBytes <= 0:
		return usageError("PGXSAFETY_VCF_MAX_BYTES must be a positive integer, got %d", e.VCFMaxBytes)
	case e.VCFMinGQ < 0:
		return usageError("PGXSAFETY_VCF_MIN_GQ must be 0 (no threshold) or a positive integer, got %d", e.VCFMinGQ)
	case e.VCFMinDP < 0:
		return usageError("PGXSAFETY_VCF_MIN_DP must be 0 (no threshold) or a positive integer, got %d", e.VCFMinDP)
	case e.AuditCheckpointInterval < 100*time.Millisecond:
		return usageError("PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL must be a duration of at least 100ms such as 10s, got %v", e.AuditCheckpointInterval)
	case e.AuditCommitWindow < 0 || e.AuditCommitWindow > maxAuditCommitWindow:
		return usageError("PGXSAFETY_AUDIT_COMMIT_WINDOW must be a duration from 0 (commit at once) to %v such as 500us, got %v", maxAuditCommitWindow, e.AuditCommitWindow)
	case e.GCPercent != nil && *e.GCPercent <= 0:
		return usageError("PGXSAFETY_GOGC must be a positive integer, got %d", *e.GCPercent)
	case e.SMARTSessionTTL <= 0 || e.SMARTSessionTTL > 24*time.Hour:
		return usageError("PGXSAFETY_SMART_SESSION_TTL must be a positive duration up to 24h such as 30m, got %v", e.SMARTSessionTTL)
	case e.OIDCMaxTokenAge != nil && *e.OIDCMaxTokenAge <= 0:
		return usageError("PGXSAFETY_OIDC_MAX_TOKEN_AGE must be a positive duration such as 12h, got %v", *e.OIDCMaxTokenAge)
	}
	if _, err := httpx.ParseCORSOrigins(e.CORSOrigins); err != nil {
		return usageError("PGXSAFETY_CORS_ORIGINS: %v", err)
	}
	if e.PublicURL != "" {
		u, err := url.Parse(e.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return usageError("PGXSAFETY_PUBLIC_URL must be an absolute http(s) URL")
		}
	}
	if e.SMARTEHRs != "" && e.PublicURL == "" {
		return usageError("PGXSAFETY_SMART_EHRS needs PGXSAFETY_PUBLIC_URL: the SMART redirect URI is built from it")
	}
	devMode := e.OIDCIssuer == ""
	if devMode && (e.OIDCAudience != "" || e.OIDCJWKSURL != "" || e.OIDCJWKSFile != "" || e.OIDCAlgorithms != "" || e.OIDCMaxTokenAge != nil) {
		return usageError("PGXSAFETY_OIDC_AUDIENCE, _JWKS_URL, _JWKS_FILE, _ALGORITHMS and _MAX_TOKEN_AGE need PGXSAFETY_OIDC_ISSUER")
	}
	if !devMode && e.OIDCAudience == "" {
		return usageError("PGXSAFETY_OIDC_ISSUER is set but PGXSAFETY_OIDC_AUDIENCE is not: name the client id tokens must be issued to")
	}
	return nil
}

// algorithms is PGXSAFETY_OIDC_ALGORITHMS as a list, blank items dropped
// (nil: the verifier's default).
func (e environment) algorithms() []string {
	var out []string
	for _, a := range strings.Split(e.OIDCAlgorithms, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// logKeyPath is PGXSAFETY_AUDIT_KEY_FILE or audit-log.key in dataDir.
func (e environment) logKeyPath(dataDir string) string {
	if e.AuditKeyFile != "" {
		return e.AuditKeyFile
	}
	return filepath.Join(dataDir, logKeyFileName)
}

// witnessPath is PGXSAFETY_AUDIT_WITNESS_FILE or the file in dataDir.
func (e environment) witnessPath(dataDir string) string {
	if e.AuditWitnessFile != "" {
		return e.AuditWitnessFile
	}
	return filepath.Join(dataDir, witnessFileName)
}

// dataDirFlag is the --data-dir flag, PGXSAFETY_DATA_DIR by default.
func (e environment) dataDirFlag(fs interface {
	String(name, value, usage string) *string
}) *string {
	return fs.String("data-dir", e.DataDir, "data directory (env PGXSAFETY_DATA_DIR)")
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

// oidc is the identity settings of a validated environment.
func (e environment) oidc() oidcSettings {
	o := oidcSettings{issuer: e.OIDCIssuer, audience: e.OIDCAudience, jwksURL: e.OIDCJWKSURL,
		jwksFile: e.OIDCJWKSFile, algorithms: e.algorithms()}
	if e.OIDCMaxTokenAge != nil {
		o.maxTokenAge = *e.OIDCMaxTokenAge
	}
	return o
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
	// vcfMinGQ and vcfMinDP are the VCF quality thresholds in
	// vcfcall.Options form (negative: none).
	vcfMinGQ, vcfMinDP int
	// CDS Hooks: the trusted-clients file and the development switch.
	cdsClientsFile        string
	cdsDevUnauthenticated bool
	// The transparency log: the signing key file, the name of a new key,
	// the witness file and how often a checkpoint is signed.
	logKeyFile         string
	logOrigin          string
	witnessFile        string
	witnessURL         string
	witnessKey         string
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

// loadServeConfig reads serve's configuration from the process
// environment and args.
func loadServeConfig(args []string, stderr io.Writer) (serveConfig, error) {
	env, err := readEnvironment()
	if err != nil {
		return serveConfig{}, err
	}
	return serveConfigFrom(env, args, stderr)
}

// serveConfigFrom is serve's configuration from env, overridden by args.
func serveConfigFrom(env environment, args []string, stderr io.Writer) (serveConfig, error) {
	fs := newFlagSet("serve", stderr, "serve [--addr ADDR] [--data-dir DIR]")
	cfg := serveConfig{databaseURL: env.DatabaseURL, publicURL: env.PublicURL, redisURL: env.RedisURL}
	fs.StringVar(&cfg.addr, "addr", env.Addr, "listen address (env PGXSAFETY_ADDR)")
	fs.StringVar(&cfg.dataDir, "data-dir", env.DataDir, "data directory (env PGXSAFETY_DATA_DIR)")
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	if err := env.Validate(); err != nil {
		return cfg, err
	}
	cfg.logLevel, cfg.logFormat = env.LogLevel, env.LogFormat
	cfg.ratePerMinute, cfg.rateBurst = env.RateLimitPerMinute, env.RateLimitPerMinute
	if env.RateLimitBurst != nil {
		cfg.rateBurst = *env.RateLimitBurst
	}
	cfg.rateLimitsFile = env.RateLimitsFile
	var err error
	if cfg.corsOrigins, err = httpx.ParseCORSOrigins(env.CORSOrigins); err != nil {
		return cfg, usageError("PGXSAFETY_CORS_ORIGINS: %v", err)
	}
	cfg.auditPayloads = env.AuditPayloads == "store"
	cfg.retentionDays = env.AuditRetentionDays
	cfg.autoMigrate = env.DatabaseMigrate
	cfg.batchCSVMaxBytes, cfg.batchCSVMaxRows = int64(env.BatchCSVMaxBytes), env.BatchCSVMaxRows
	cfg.vcfMaxBytes = int64(env.VCFMaxBytes)
	cfg.vcfMinGQ, cfg.vcfMinDP = vcfThreshold(env.VCFMinGQ), vcfThreshold(env.VCFMinDP)
	cfg.logKeyFile, cfg.witnessFile = env.logKeyPath(cfg.dataDir), env.witnessPath(cfg.dataDir)
	cfg.witnessURL, cfg.witnessKey = env.AuditWitnessURL, env.AuditWitnessKey
	cfg.logOrigin = env.AuditLogOrigin
	cfg.checkpointInterval = env.AuditCheckpointInterval
	cfg.auditCommitWindow = env.AuditCommitWindow
	// An operator's own GOGC stands unless PGXSAFETY_GOGC is set too.
	switch {
	case env.GCPercent != nil:
		cfg.gcPercent = *env.GCPercent
	case env.GOGC == "":
		cfg.gcPercent = defaultGCPercent
	}
	cfg.cdsClientsFile = env.CDSClients
	cfg.cdsDevUnauthenticated = env.CDSDevUnauthenticated
	cfg.oidc = env.oidc()
	if cfg.smart, err = loadSMARTSettings(env); err != nil {
		return cfg, err
	}
	if cfg.smart.sessionKeyFile == "" {
		cfg.smart.sessionKeyFile = filepath.Join(cfg.dataDir, smartSessionKeyFileName)
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

// witnessApart refuses a witness file inside the data directory, or in the
// directory of the SQLite log: whoever can write the log there can delete
// or roll back the witness too. Only local development mode (no
// PGXSAFETY_OIDC_ISSUER) keeps the default file beside the log, with a
// warning at start.
func witnessApart(witness, dataDir, databaseURL string) error {
	dirs := []string{dataDir}
	if p, ok := strings.CutPrefix(databaseURL, "sqlite:"); ok {
		dirs = append(dirs, filepath.Dir(strings.TrimPrefix(p, "//")))
	}
	for _, d := range dirs {
		if within, err := pathWithin(witness, d); err != nil || within {
			return usageError("PGXSAFETY_AUDIT_WITNESS_FILE (%s) is inside the audit log's directory %s: whoever can rewrite the log "+
				"could roll back its witness too; point it at storage the database owner cannot write (another host's share, a "+
				"write-once bucket) — see docs/operations.md \"Witness\"", witness, d)
		}
	}
	return nil
}

// pathWithin reports whether path is dir or lies below it, after making
// both absolute and resolving the symbolic links of their directories.
func pathWithin(path, dir string) (bool, error) {
	resolve := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		d, base := filepath.Dir(abs), filepath.Base(abs)
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		return filepath.Join(d, base), nil
	}
	p, err := resolve(path)
	if err != nil {
		return false, err
	}
	d, err := resolve(dir)
	if err != nil {
		return false, err
	}
	if real, err := filepath.EvalSymlinks(d); err == nil {
		d = real
	}
	rel, err := filepath.Rel(d, p)
	if err != nil {
		return false, nil
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))), nil
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

// loadSMARTSettings reads the registered EHRs file, if any.
func loadSMARTSettings(env environment) (smartSettings, error) {
	st := smartSettings{ehrsFile: env.SMARTEHRs, sessionTTL: env.SMARTSessionTTL, sessionKeyFile: env.SMARTSessionKeyFile}
	if st.ehrsFile == "" {
		return st, nil
	}
	ehrs, err := smart.LoadEHRs(st.ehrsFile)
	if err != nil {
		return st, usageError("PGXSAFETY_SMART_EHRS: %v", err)
	}
	st.ehrs = ehrs
	return st, nil
}

// vcfThreshold maps a configured quality threshold (0: none) to
// vcfcall.Options' form (0: the default; negative: none).
func vcfThreshold(v int) int {
	if v == 0 {
		return -1
	}
	return v
}

// vcfThresholdDefaults are the --min-gq and --min-dp defaults:
// PGXSAFETY_VCF_MIN_GQ and PGXSAFETY_VCF_MIN_DP when set, else
// vcfcall's defaults.
func vcfThresholdDefaults() (gq, dp int, err error) {
	gq, dp = vcfcall.DefaultMinGQ, vcfcall.DefaultMinDP
	for _, v := range []struct {
		name string
		dst  *int
	}{{"PGXSAFETY_VCF_MIN_GQ", &gq}, {"PGXSAFETY_VCF_MIN_DP", &dp}} {
		s, _ := envconfig.OsLookuper().Lookup(v.name)
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, 0, usageError("%s must be 0 (no threshold) or a positive integer, got %q", v.name, s)
		}
		*v.dst = n
	}
	return gq, dp, nil
}
