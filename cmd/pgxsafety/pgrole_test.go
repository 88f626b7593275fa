package main

import (
	"bufio"
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// appUserEnv names the least-privilege PostgreSQL role the service runs as
// in the PostgreSQL tests (.ci/run creates pgxsafety_app and sets it).
// Unset, serve connects as the user of PGXSAFETY_TEST_DATABASE_URL, the
// schema's owner.
const appUserEnv = "PGXSAFETY_TEST_DATABASE_APP_USER"

// documentedGrants returns the GRANT statements of the "PostgreSQL roles"
// section of docs/operations.md, with schema in place of audit and role in
// place of pgxsafety_app: the tests grant exactly what the docs tell an
// operator to grant.
func documentedGrants(t testing.TB, schema, role string) []string {
	t.Helper()
	f, err := os.Open("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var grants []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "### ") {
			in = strings.HasPrefix(line, "### PostgreSQL roles")
			continue
		}
		if in && strings.HasPrefix(line, "GRANT ") {
			g := strings.TrimSuffix(line, ";")
			g = strings.ReplaceAll(g, "SCHEMA audit ", "SCHEMA "+schema+" ")
			g = strings.ReplaceAll(g, "audit.", schema+".")
			g = strings.ReplaceAll(g, "pgxsafety_app", role)
			grants = append(grants, g)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(grants) == 0 {
		t.Fatal(`docs/operations.md: no GRANT statements under "### PostgreSQL roles"`)
	}
	return grants
}

// pgGrantService grants the service role of PGXSAFETY_TEST_DATABASE_APP_USER
// the documented privileges on the already migrated schema of ownerURL and
// returns a URL connecting as that role. Without the variable it returns
// ownerURL.
func pgGrantService(t testing.TB, ownerURL string) string {
	t.Helper()
	role := os.Getenv(appUserEnv)
	if role == "" {
		return ownerURL
	}
	u, err := url.Parse(ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, g := range documentedGrants(t, u.Query().Get("search_path"), role) {
		if _, err := db.Exec(g); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
	}
	u.User = url.User(role)
	return u.String()
}

// pgServiceURL migrates the schema of ownerURL as its owner (what
// "pgxsafety migrate" does) and returns the URL serve connects with: the
// service role's when PGXSAFETY_TEST_DATABASE_APP_USER is set. The caller
// runs serve with PGXSAFETY_DATABASE_MIGRATE=false.
func pgServiceURL(t testing.TB, ownerURL string) string {
	t.Helper()
	if _, err := sqlstore.MigrateDatabase(context.Background(), ownerURL, "", sqlstore.Options{}); err != nil {
		t.Fatalf("migrate as the owner: %v", err)
	}
	return pgGrantService(t, ownerURL)
}

// TestServeAsServiceRole follows docs/operations.md: "pgxsafety migrate"
// as the owner, the documented grants, then serve as the least-privilege
// role with PGXSAFETY_DATABASE_MIGRATE=false. Serve starts and answers
// audited; an auditor's "audit verify" works as that role; the in-process
// retention job says once, at info level, that it leaves the purge to the
// owner, and logs no error.
func TestServeAsServiceRole(t *testing.T) {
	clearEnv(t)
	ownerURL := pgSchemaURL(t)
	if os.Getenv(appUserEnv) == "" {
		t.Skip(appUserEnv + " is not set: no least-privilege role to serve as (.ci/run sets it)")
	}
	t.Setenv("PGXSAFETY_DATABASE_URL", ownerURL)
	if out, stderr, err := runArgs(t, "migrate"); err != nil || !strings.Contains(out, "audit store schema at version") {
		t.Fatalf("migrate as the owner: %v\n%s%s", err, out, stderr)
	}
	appURL := pgGrantService(t, ownerURL)
	t.Setenv("PGXSAFETY_DATABASE_URL", appURL)
	t.Setenv("PGXSAFETY_DATABASE_MIGRATE", "false")

	dataDir := t.TempDir()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	for range 3 {
		if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
			t.Fatalf("check as the service role: %d %s", rec.Code, rec.Body)
		}
	}
	if err := s.checkpoints.publish(context.Background()); err != nil {
		t.Errorf("publish a checkpoint as the service role: %v", err)
	}
	if rec := request(t, s.handler, http.MethodGet, "/readyz", "", ""); rec.Code != http.StatusOK {
		t.Errorf("/readyz as the service role: %d %s", rec.Code, rec.Body)
	}
	if out, stderr, err := runArgs(t, "audit", "verify", "--data-dir", dataDir); err != nil ||
		!strings.Contains(out, "audit log verified: 3 entries") {
		t.Errorf("audit verify as the service role: %v\n%s%s", err, out, stderr)
	}

	core, logs := observer.New(zapcore.DebugLevel)
	done := make(chan struct{})
	go func() {
		runRetention(context.Background(), s.store, defaultRetentionDays*24*time.Hour, 0, time.Hour, time.Now,
			zap.New(core), httpx.NewMetrics())
		close(done)
	}()
	<-done // the job stops by itself: no privilege, nothing to retry
	all := logs.All()
	if len(all) != 1 || all[0].Level != zapcore.InfoLevel || !strings.Contains(all[0].Message, "pgxsafety audit purge") {
		t.Errorf("retention job as the service role logged %+v, want one info line naming \"pgxsafety audit purge\"", all)
	}
	sum, err := audit.VerifyChain(context.Background(), s.store)
	if err != nil || sum.Entries != 3 {
		t.Errorf("chain after the retention job: %+v %v", sum, err)
	}
}
