package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"
	"go.uber.org/zap/zapcore"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// TestEnvironmentReadOnlyInConfig: config.go is the only file of the
// binary that reads the environment (the surfaces read none: see
// pgxapi/layers_test.go).
func TestEnvironmentReadOnlyInConfig(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	readers := map[string]bool{"Getenv": true, "LookupEnv": true, "Environ": true}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "config.go" {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && readers[sel.Sel.Name] {
					t.Errorf("%s: os.%s outside config.go", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestEnvironmentDefaults: with nothing set, every variable has its
// documented default, equal to the constants the other packages use.
func TestEnvironmentDefaults(t *testing.T) {
	t.Parallel()
	env, err := loadEnvironment(context.Background(), envconfig.MapLookuper(map[string]string{"PGXSAFETY_ADDR": "  "}))
	if err != nil {
		t.Fatal(err)
	}
	want := environment{
		Addr:                    "127.0.0.1:8080",
		DataDir:                 "./pgxsafety-data",
		DatabaseMigrate:         true,
		LogLevel:                zapcore.InfoLevel,
		LogFormat:               "json",
		RateLimitPerMinute:      pgxapi.DefaultRateLimitPerMinute,
		AuditPayloads:           "store",
		AuditRetentionDays:      defaultRetentionDays,
		AuditCheckpointInterval: 10 * time.Second,
		BatchCSVMaxBytes:        pgxapi.DefaultBatchCSVMaxBytes,
		BatchCSVMaxRows:         pgxapi.DefaultBatchCSVMaxRows,
		VCFMaxBytes:             pgxapi.DefaultVCFMaxBytes,
		VCFMinGQ:                vcfcall.DefaultMinGQ,
		VCFMinDP:                vcfcall.DefaultMinDP,
		SMARTSessionTTL:         smart.DefaultSessionTTL,
	}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if err := env.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	f, _ := reflect.TypeFor[environment]().FieldByName("CDSDevUnauthenticated")
	if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); name != cdshooks.EnvDevUnauthenticated {
		t.Errorf("CDSDevUnauthenticated reads %s, cdshooks names %s", name, cdshooks.EnvDevUnauthenticated)
	}
}

// TestEnvironmentOverrides: set variables are read, typed and trimmed.
func TestEnvironmentOverrides(t *testing.T) {
	t.Parallel()
	env, err := loadEnvironment(context.Background(), envconfig.MapLookuper(map[string]string{
		"PGXSAFETY_ADDR":                 "0.0.0.0:8443",
		"PGXSAFETY_DATABASE_MIGRATE":     "false",
		"PGXSAFETY_LOG_LEVEL":            "debug",
		"PGXSAFETY_OIDC_ISSUER":          "https://idp.example.org",
		"PGXSAFETY_OIDC_AUDIENCE":        " pgxsafety ",
		"PGXSAFETY_OIDC_ALGORITHMS":      "ES256, ,RS256",
		"PGXSAFETY_OIDC_MAX_TOKEN_AGE":   "12h",
		"PGXSAFETY_RATE_LIMIT_BURST":     "5",
		"PGXSAFETY_AUDIT_COMMIT_WINDOW":  "500us",
		"PGXSAFETY_GOGC":                 "300",
		"GOGC":                           "150",
		"PGXSAFETY_AUDIT_RETENTION_DAYS": "400",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{env.Addr, env.DatabaseMigrate, env.LogLevel, env.OIDCAudience, env.algorithms(), env.OIDCMaxTokenAge,
		env.RateLimitBurst, env.AuditCommitWindow, env.GCPercent, env.GOGC, env.AuditRetentionDays}
	want := []any{"0.0.0.0:8443", false, zapcore.DebugLevel, "pgxsafety", []string{"ES256", "RS256"}, ptr(12 * time.Hour),
		ptr(5), 500 * time.Microsecond, ptr(300), "150", 400}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	if err := env.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestEnvironmentErrors: malformed and invalid values are usage errors
// that name the variable.
func TestEnvironmentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"not a number", map[string]string{"PGXSAFETY_GOGC": "off"}, "PGXSAFETY_GOGC: "},
		{"not a boolean", map[string]string{"PGXSAFETY_DATABASE_MIGRATE": "perhaps"}, "PGXSAFETY_DATABASE_MIGRATE: "},
		{"not a duration", map[string]string{"PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL": "often"}, "PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL: "},
		{"not a level", map[string]string{"PGXSAFETY_LOG_LEVEL": "loud"}, "PGXSAFETY_LOG_LEVEL: "},
		{"log format", map[string]string{"PGXSAFETY_LOG_FORMAT": "xml"}, "PGXSAFETY_LOG_FORMAT must be json or console"},
		{"zero rate", map[string]string{"PGXSAFETY_RATE_LIMIT_PER_MINUTE": "0"}, "PGXSAFETY_RATE_LIMIT_PER_MINUTE must be a positive integer"},
		{"zero burst", map[string]string{"PGXSAFETY_RATE_LIMIT_BURST": "0"}, "PGXSAFETY_RATE_LIMIT_BURST must be a positive integer"},
		{"negative GOGC", map[string]string{"PGXSAFETY_GOGC": "-1"}, "PGXSAFETY_GOGC must be a positive integer"},
		{"payloads", map[string]string{"PGXSAFETY_AUDIT_PAYLOADS": "some"}, "PGXSAFETY_AUDIT_PAYLOADS must be store or digest"},
		{"short retention", map[string]string{"PGXSAFETY_AUDIT_RETENTION_DAYS": "90"}, "at least 365"},
		{"batch bytes", map[string]string{"PGXSAFETY_BATCH_CSV_MAX_BYTES": "0"}, "PGXSAFETY_BATCH_CSV_MAX_BYTES"},
		{"batch rows", map[string]string{"PGXSAFETY_BATCH_CSV_MAX_ROWS": "-5"}, "PGXSAFETY_BATCH_CSV_MAX_ROWS"},
		{"VCF bytes", map[string]string{"PGXSAFETY_VCF_MAX_BYTES": "0"}, "PGXSAFETY_VCF_MAX_BYTES"},
		{"VCF GQ", map[string]string{"PGXSAFETY_VCF_MIN_GQ": "-1"}, "PGXSAFETY_VCF_MIN_GQ"},
		{"VCF DP", map[string]string{"PGXSAFETY_VCF_MIN_DP": "-5"}, "PGXSAFETY_VCF_MIN_DP"},
		{"fast checkpoints", map[string]string{"PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL": "10ms"}, "PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL"},
		{"negative commit window", map[string]string{"PGXSAFETY_AUDIT_COMMIT_WINDOW": "-1ms"}, "PGXSAFETY_AUDIT_COMMIT_WINDOW"},
		{"long commit window", map[string]string{"PGXSAFETY_AUDIT_COMMIT_WINDOW": "1s"}, "PGXSAFETY_AUDIT_COMMIT_WINDOW"},
		{"zero session", map[string]string{"PGXSAFETY_SMART_SESSION_TTL": "0s"}, "PGXSAFETY_SMART_SESSION_TTL"},
		{"long session", map[string]string{"PGXSAFETY_SMART_SESSION_TTL": "25h"}, "PGXSAFETY_SMART_SESSION_TTL"},
		{"CORS wildcard", map[string]string{"PGXSAFETY_CORS_ORIGINS": "*"}, "PGXSAFETY_CORS_ORIGINS"},
		{"relative public URL", map[string]string{"PGXSAFETY_PUBLIC_URL": "/pgx"}, "PGXSAFETY_PUBLIC_URL"},
		{"EHRs without public URL", map[string]string{"PGXSAFETY_SMART_EHRS": "ehrs.json"}, "PGXSAFETY_SMART_EHRS needs PGXSAFETY_PUBLIC_URL"},
		{"audience without issuer", map[string]string{"PGXSAFETY_OIDC_AUDIENCE": "x"}, "need PGXSAFETY_OIDC_ISSUER"},
		{"token age without issuer", map[string]string{"PGXSAFETY_OIDC_MAX_TOKEN_AGE": "1h"}, "need PGXSAFETY_OIDC_ISSUER"},
		{"issuer without audience", map[string]string{"PGXSAFETY_OIDC_ISSUER": "https://idp.example.org"}, "PGXSAFETY_OIDC_AUDIENCE is not"},
		{"zero token age", map[string]string{"PGXSAFETY_OIDC_ISSUER": "https://idp.example.org", "PGXSAFETY_OIDC_AUDIENCE": "x",
			"PGXSAFETY_OIDC_MAX_TOKEN_AGE": "0s"}, "PGXSAFETY_OIDC_MAX_TOKEN_AGE must be a positive duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := loadEnvironment(context.Background(), envconfig.MapLookuper(tc.env))
			if err == nil {
				err = env.Validate()
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}
