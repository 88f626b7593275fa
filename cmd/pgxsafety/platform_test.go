package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// platformEnv are the variables serve reads; tests start from none set.
var platformEnv = []string{
	"PGXSAFETY_ADDR", "PGXSAFETY_DATA_DIR", "PGXSAFETY_DATABASE_URL", "PGXSAFETY_PUBLIC_URL",
	"PGXSAFETY_OIDC_ISSUER", "PGXSAFETY_OIDC_AUDIENCE", "PGXSAFETY_OIDC_JWKS_URL", "PGXSAFETY_OIDC_JWKS_FILE",
	"PGXSAFETY_OIDC_ALGORITHMS", "PGXSAFETY_OIDC_MAX_TOKEN_AGE", "PGXSAFETY_REDIS_URL",
	"PGXSAFETY_RATE_LIMIT_PER_MINUTE", "PGXSAFETY_RATE_LIMIT_BURST", "PGXSAFETY_RATE_LIMITS_FILE",
	"PGXSAFETY_CORS_ORIGINS", "PGXSAFETY_LOG_LEVEL", "PGXSAFETY_LOG_FORMAT", "PGXSAFETY_AUDIT_PAYLOADS",
	"PGXSAFETY_AUDIT_RETENTION_DAYS", "PGXSAFETY_DATABASE_MIGRATE", "PGXSAFETY_AUDIT_KEY_FILE",
	"PGXSAFETY_AUDIT_WITNESS_FILE", "PGXSAFETY_AUDIT_WITNESS_URL", "PGXSAFETY_AUDIT_WITNESS_KEY", "PGXSAFETY_AUDIT_LOG_ORIGIN", "PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL",
	"PGXSAFETY_SMART_EHRS", "PGXSAFETY_SMART_SESSION_TTL", "PGXSAFETY_CDS_DEV_UNAUTHENTICATED", "PGXSAFETY_CDS_CLIENTS",
	"PGXSAFETY_AUDIT_COMMIT_WINDOW", "PGXSAFETY_GOGC",
}

func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range platformEnv {
		t.Setenv(k, "")
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// inProcess builds the server serve would run (same configuration code,
// same wiring) without listening.
func inProcess(t *testing.T, dataDir string, o serverOptions) *server {
	t.Helper()
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, io.Discard)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s, err := newServer(context.Background(), cfg, zap.NewNop(), io.Discard, o)
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	t.Cleanup(s.close)
	return s
}

// devToken mints a development token for subject at now with the data
// directory's key.
func devToken(t *testing.T, dataDir, subject string, now time.Time) string {
	t.Helper()
	key, err := httpx.LoadOrCreateDevKey(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := httpx.MintDevToken(key, subject, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func request(t *testing.T, h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const checkBody = `{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"},"genes_tested":["CYP2C19"],"indication":"ACS PCI"}`

// pathVar matches a mux path variable, possibly with a pattern.
var pathVar = regexp.MustCompile(`\{[^}]*\}`)

// TestEveryProtectedRouteNeedsAToken walks the real router — including
// routes other surfaces register — and checks that every route under
// /pgx/ and /classifier_v2/, except GET /pgx/version and /pgx/status,
// answers 401 without a token, while the public routes do not.
func TestEveryProtectedRouteNeedsAToken(t *testing.T) {
	clearEnv(t)
	s := inProcess(t, t.TempDir(), serverOptions{})
	checked := map[string]bool{}
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			methods = []string{http.MethodGet, http.MethodPost}
		}
		path := pathVar.ReplaceAllString(tpl, "x")
		for _, m := range methods {
			rec := request(t, s.handler, m, path, "", "")
			public := !(strings.HasPrefix(path, "/pgx/") || strings.HasPrefix(path, "/classifier_v2/")) ||
				(m == http.MethodGet || m == http.MethodHead) && (path == "/pgx/version" || path == "/pgx/status")
			if public && rec.Code == http.StatusUnauthorized {
				t.Errorf("%s %s is public but answered 401", m, tpl)
			}
			if !public {
				if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
					t.Errorf("%s %s without a token: %d (WWW-Authenticate %q), want 401", m, tpl, rec.Code, rec.Header().Get("WWW-Authenticate"))
				}
			}
			checked[m+" "+tpl] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"POST /pgx/check", "GET /pgx/drugs", "GET /pgx/variants", "GET /pgx/version", "GET /pgx/status", "GET /metrics", "GET /healthz", "GET /readyz"} {
		if !checked[must] {
			t.Errorf("route %s was not found in the router", must)
		}
	}
	t.Logf("checked %d routes", len(checked))
}

// TestServeWithToken runs the real serve command in development mode: the
// token printed by "pgxsafety token" (same data directory) is accepted,
// the audit entry records its subject, a token of another data directory
// is refused, and the logs hold neither token.
func TestServeWithToken(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	out, stderr, err := runArgs(t, "token", "--data-dir", dataDir, "--subject", "alice")
	if err != nil {
		t.Fatalf("token: %v\n%s", err, stderr)
	}
	token := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || strings.Count(token, ".") != 2 {
		t.Fatalf("token output is not one JWT line: %q", out)
	}
	foreignOut, _, err := runArgs(t, "token", "--data-dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign := strings.TrimSpace(foreignOut)

	base, logs, stop := startServe(t, dataDir)
	post := func(tok string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, base+"/pgx/check", strings.NewReader(checkBody))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for name, tok := range map[string]string{"no token": "", "foreign key": foreign} {
		resp, body := post(tok)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
	resp, body := post(token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the dev token: %d %s", resp.StatusCode, body)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "X-Content-Type-Options", "X-Request-ID"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("response lacks %s", h)
		}
	}
	var ans struct {
		AuditLogID string `json:"audit_log_id"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.AuditLogID == "" {
		t.Fatalf("answer: %v %s", err, body)
	}
	stop()

	store, err := sqlstore.OpenWith(context.Background(), "", dataDir, sqlstore.Options{NoMigrate: true, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err := store.Entry(context.Background(), ans.AuditLogID)
	if err != nil {
		t.Fatalf("audit entry %s: %v", ans.AuditLogID, err)
	}
	if e.Principal.Subject != "alice" || e.Principal.Issuer != httpx.DevIssuer {
		t.Errorf("audit principal = %+v, want alice of %s", e.Principal, httpx.DevIssuer)
	}
	all := logs.String()
	for _, secret := range []string{token, foreign, strings.Split(token, ".")[2], "CYP2C19"} {
		if strings.Contains(all, secret) {
			t.Errorf("the logs hold %q", secret[:min(len(secret), 20)])
		}
	}
	if strings.Count(all, "local development mode") != 1 {
		t.Errorf("want exactly one development-mode warning:\n%s", all)
	}
	if !strings.Contains(all, `"audit_id":"`+ans.AuditLogID+`"`) || !strings.Contains(all, `"subject_hash":"`) {
		t.Errorf("the access log line lacks the audit id or subject hash:\n%s", all)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs "serve" in-process on a loopback port until stop.
func startServe(t *testing.T, dataDir string, extra ...string) (base string, logs *syncBuffer, stop func()) {
	t.Helper()
	addrs := make(chan string, 1)
	serveListening = func(a net.Addr) { addrs <- a.String() }
	t.Cleanup(func() { serveListening = nil })
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, extra...)
		done <- run(ctx, args, io.Discard, logs)
	}()
	select {
	case a := <-addrs:
		base = "http://" + a
	case err := <-done:
		cancel()
		t.Fatalf("serve returned before listening: %v\n%s", err, logs)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v\n%s", err, logs)
			}
		})
	}
	t.Cleanup(stop)
	return base, logs, stop
}

// TestSixtyFirstRequestGets429 uses the real server with the default
// limit and a frozen clock: 60 requests of one user pass, the 61st gets
// 429 with Retry-After and the RateLimit headers, another user is not
// affected, and a minute later the budget is back.
func TestSixtyFirstRequestGets429(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	s := inProcess(t, dataDir, serverOptions{now: clock.Now})
	alice, bob := devToken(t, dataDir, "alice", clock.Now()), devToken(t, dataDir, "bob", clock.Now())
	for i := 1; i <= 60; i++ {
		if rec := request(t, s.handler, http.MethodGet, "/pgx/drugs", alice, ""); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := request(t, s.handler, http.MethodPost, "/pgx/check", alice, checkBody)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("61st request: %d, want 429", rec.Code)
	}
	for h, want := range map[string]string{"Retry-After": "1", "RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": "60", "Content-Type": httpx.ProblemContentType} {
		if got := rec.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if rec := request(t, s.handler, http.MethodGet, "/pgx/drugs", bob, ""); rec.Code != http.StatusOK {
		t.Errorf("another user: %d", rec.Code)
	}
	clock.Advance(time.Minute)
	if rec := request(t, s.handler, http.MethodPost, "/pgx/check", alice, checkBody); rec.Code != http.StatusOK {
		t.Errorf("a minute later: %d %s", rec.Code, rec.Body)
	}
}

// lockSQLite takes the write lock of the SQLite audit log from another
// connection (as another process would), until release.
func lockSQLite(t *testing.T, file string) (release func()) {
	t.Helper()
	raw, err := sql.Open("sqlite", file+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := raw.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatalf("lock: %v", err)
	}
	return func() { tx.Rollback(); raw.Close() }
}

// lockPostgres takes an exclusive lock on audit_log until release.
func lockPostgres(t *testing.T, u string) (release func()) {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback(); db.Close() }
}

// TestCheckFailsClosedAndRecovers makes the audit database unavailable
// (another session holds its write lock): /pgx/check answers 503 with no
// advice; when the database returns, answers resume and the chain is
// whole. SQLite always, PostgreSQL when PGXSAFETY_TEST_DATABASE_URL is set.
func TestCheckFailsClosedAndRecovers(t *testing.T) {
	short := func(o *sqlstore.Options) {
		o.CommitTimeout = time.Second
		o.BusyTimeout = 200 * time.Millisecond
	}
	backends := map[string]func(t *testing.T) (dataDir string, lock func() func()){
		"sqlite": func(t *testing.T) (string, func() func()) {
			dir := t.TempDir()
			return dir, func() func() { return lockSQLite(t, filepath.Join(dir, sqlstore.DBFileName)) }
		},
		"postgres": func(t *testing.T) (string, func() func()) {
			// serve as the service role after migrating as the owner;
			// the owner takes the lock.
			u := pgSchemaURL(t)
			t.Setenv("PGXSAFETY_DATABASE_URL", pgServiceURL(t, u))
			t.Setenv("PGXSAFETY_DATABASE_MIGRATE", "false")
			return t.TempDir(), func() func() { return lockPostgres(t, u) }
		},
	}
	for name, setup := range backends {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			dataDir, lock := setup(t)
			s := inProcess(t, dataDir, serverOptions{storeOptions: short})
			tok := devToken(t, dataDir, "alice", time.Now())
			if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
				t.Fatalf("before: %d %s", rec.Code, rec.Body)
			}
			release := lock()
			rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody)
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), httpx.TypeAuditUnavailable) {
				t.Errorf("while the database is locked: %d %s, want 503 audit-unavailable", rec.Code, rec.Body)
			}
			for _, advice := range []string{"alerts", "overall_severity", "audit_log_id"} {
				if strings.Contains(rec.Body.String(), advice) {
					t.Errorf("503 body carries %q", advice)
				}
			}
			// Readiness reflects the failed commit, not only reachability.
			if rec := request(t, s.handler, http.MethodGet, "/readyz", "", ""); rec.Code != http.StatusServiceUnavailable ||
				!strings.Contains(rec.Body.String(), "not accepting entries") {
				t.Errorf("/readyz after a failed commit: %d %s, want 503 naming it", rec.Code, rec.Body)
			}
			if rec := request(t, s.handler, http.MethodGet, "/pgx/status", "", ""); !strings.Contains(rec.Body.String(), `"accepting_entries":false`) {
				t.Errorf("/pgx/status after a failed commit: %s", rec.Body)
			}
			release()
			rec = request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody)
			if rec.Code != http.StatusOK {
				t.Fatalf("after the database returned: %d %s", rec.Code, rec.Body)
			}
			if rec := request(t, s.handler, http.MethodGet, "/readyz", "", ""); rec.Code != http.StatusOK {
				t.Errorf("/readyz after a commit succeeded again: %d %s", rec.Code, rec.Body)
			}
			sum, err := audit.VerifyChain(context.Background(), s.store)
			if err != nil || sum.Entries != 2 {
				t.Errorf("chain after recovery: %+v %v; want 2 entries (the refused answer left none)", sum, err)
			}
			if got := metricSum(t, s, "pgxsafety_audit_commit_failures_total"); got < 1 {
				t.Errorf("audit failure metric = %v", got)
			}
		})
	}
}

func metricSum(t *testing.T, s *server, name string) float64 {
	t.Helper()
	fams, err := s.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// pgSchemaURL returns PGXSAFETY_TEST_DATABASE_URL with a fresh schema
// (dropped at the end) as its search_path, or skips without the variable.
func pgSchemaURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PGXSAFETY_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PGXSAFETY_TEST_DATABASE_URL is not set: skipping the PostgreSQL variant (.ci/run sets it)")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	rand.Read(b[:])
	schema := "pgxsafety_cmd_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("PostgreSQL at PGXSAFETY_TEST_DATABASE_URL is set but not usable: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestAuditCommands exercises audit verify, export and purge, and checks
// that verify fails naming the row after a row is altered directly in the
// database with the triggers dropped — on SQLite, and on PostgreSQL when
// PGXSAFETY_TEST_DATABASE_URL is set.
func TestAuditCommands(t *testing.T) {
	type backend struct {
		setup  func(t *testing.T) (dataDir string, raw *sql.DB)
		tamper []string
	}
	backends := map[string]backend{
		"sqlite": {
			setup: func(t *testing.T) (string, *sql.DB) {
				dir := t.TempDir()
				return dir, nil
			},
			tamper: []string{`DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET response = request WHERE seq = 4`},
		},
		"postgres": {
			setup: func(t *testing.T) (string, *sql.DB) {
				u := pgSchemaURL(t)
				t.Setenv("PGXSAFETY_DATABASE_URL", u)
				db, err := sql.Open("pgx", u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return t.TempDir(), db
			},
			tamper: []string{`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`, `UPDATE audit_log SET response = request WHERE seq = 4`},
		},
	}
	for name, b := range backends {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			ctx := context.Background()
			dataDir, raw := b.setup(t)

			// No log yet: the commands say so instead of creating one.
			if name == "sqlite" {
				if _, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir); !errors.Is(err, sqlstore.ErrNoLog) {
					t.Errorf("verify without a log: %v, want ErrNoLog", err)
				}
			}
			if _, err := loadOrCreateLogKey(filepath.Join(dataDir, logKeyFileName), ""); err != nil {
				t.Fatal(err)
			}
			store, err := sqlstore.OpenWith(ctx, os.Getenv("PGXSAFETY_DATABASE_URL"), dataDir, sqlstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			times := []time.Time{now.AddDate(-2, 0, 0), now.AddDate(-2, 0, 1), now.AddDate(0, 0, -3), now.AddDate(0, 0, -2), now.AddDate(0, 0, -1)}
			for i, ts := range times {
				e := audit.Entry{Time: ts, Principal: audit.Principal{Subject: fmt.Sprintf("u%d", i)}, Endpoint: "POST /pgx/check",
					RequestID: fmt.Sprintf("req_%d", i), KnowledgeVersion: "kv", RequestDigest: "sha256:a", ResponseDigest: "sha256:b",
					Request: []byte(`{"drug":"warfarin"}`), Response: []byte(fmt.Sprintf(`{"n":%d}`, i))}
				if _, err := store.Append(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			store.Close()

			out, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir)
			if err != nil || !strings.Contains(out, "audit log verified: 5 entries, sequences 1 to 5") {
				t.Fatalf("verify of a fresh log: %v\n%s", err, out)
			}

			out, stderr, err := runArgs(t, "audit", "export", "--data-dir", dataDir,
				"--since", now.AddDate(0, 0, -4).Format(time.DateOnly), "--until", now.AddDate(0, 0, -1).Add(-time.Second).Format(time.RFC3339))
			if err != nil {
				t.Fatalf("export: %v %s", err, stderr)
			}
			var seqs []int64
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var e audit.Entry
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("export line %q: %v", line, err)
				}
				if audit.Hash(e.PrevHash, e) != e.EntryHash {
					t.Errorf("exported entry %d does not hash to its entry_hash", e.Sequence)
				}
				seqs = append(seqs, e.Sequence)
			}
			if fmt.Sprint(seqs) != "[3 4]" {
				t.Errorf("export sequences %v, want [3 4]", seqs)
			}
			file := filepath.Join(t.TempDir(), "export.jsonl")
			if _, _, err := runArgs(t, "audit", "export", "--data-dir", dataDir, "--output", file); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("export file: %v mode %v, want 0600", err, fi.Mode())
			}
			if _, _, err := runArgs(t, "audit", "export", "--data-dir", dataDir, "--output", file); err == nil {
				t.Error("export overwrote an existing file")
			}

			// The first two entries were committed two years ago.
			backdateCommitted(t, store, 2, now.AddDate(-2, 0, 0))
			if _, _, err := runArgs(t, "audit", "purge", "--data-dir", dataDir, "--retention-days", "30"); !errors.Is(err, errUsage) {
				t.Errorf("purge with 30 days retention: %v, want a usage error", err)
			}
			out, _, err = runArgs(t, "audit", "purge", "--data-dir", dataDir)
			if err != nil || !strings.Contains(out, "purged 2 entries through sequence 2") {
				t.Fatalf("purge: %v\n%s", err, out)
			}
			out, _, err = runArgs(t, "audit", "verify", "--data-dir", dataDir)
			if err != nil || !strings.Contains(out, "retention checkpoint (signed): entries through sequence 2") ||
				!strings.Contains(out, "3 entries, sequences 3 to 5") {
				t.Fatalf("verify after purge: %v\n%s", err, out)
			}

			// Alter row 4 directly, triggers dropped: verify names it.
			if raw == nil {
				raw, err = sql.Open("sqlite", filepath.Join(dataDir, sqlstore.DBFileName))
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
			}
			if _, err := raw.Exec(`UPDATE audit_log SET response = request WHERE seq = 4`); err == nil {
				t.Fatal("the UPDATE succeeded with the triggers in place")
			}
			for _, stmt := range b.tamper {
				if _, err := raw.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			_, _, err = runArgs(t, "audit", "verify", "--data-dir", dataDir)
			var ce *audit.ChainError
			if !errors.As(err, &ce) || ce.Sequence != 4 || !strings.Contains(err.Error(), "sequence 4") {
				t.Errorf("verify after tampering: %v, want a failure naming sequence 4", err)
			}
		})
	}
}

func TestMigrateCommand(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	out, _, err := runArgs(t, "migrate", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "applied 0001_audit\napplied 0002_retention\napplied 0003_transparency\napplied 0004_cds_feedback\napplied 0005_lean_log\naudit store schema at version 5 (latest 5)\n"
	if out != want {
		t.Errorf("first migrate:\n%s\nwant\n%s", out, want)
	}
	out, _, err = runArgs(t, "migrate", "--data-dir", dir)
	if err != nil || out != "audit store schema at version 5 (latest 5)\n" {
		t.Errorf("second migrate: %v\n%s", err, out)
	}
	// With automatic migration off, serve refuses a database that is not
	// current; after "migrate" it starts.
	t.Setenv("PGXSAFETY_DATABASE_MIGRATE", "false")
	_, _, err = runArgs(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	if !errors.Is(err, sqlstore.ErrSchema) {
		t.Errorf("serve on an unmigrated database without auto-migration: %v, want ErrSchema", err)
	}
}

func TestTokenCommand(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	out, _, err := runArgs(t, "token", "--data-dir", dir, "--subject", "bob", "--ttl", "2h")
	if err != nil {
		t.Fatal(err)
	}
	key, err := httpx.LoadOrCreateDevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := httpx.NewDevVerifier(key, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), strings.TrimSpace(out))
	if err != nil || p.Subject != "bob" {
		t.Errorf("minted token: %+v %v", p, err)
	}
	for _, args := range [][]string{
		{"token", "--data-dir", dir, "--ttl", "48h"},
		{"token", "--data-dir", dir, "--ttl", "0s"},
		{"token", "--data-dir", dir, "--subject", ""},
	} {
		if _, _, err := runArgs(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	t.Setenv("PGXSAFETY_OIDC_ISSUER", "https://idp.example.org")
	if _, _, err := runArgs(t, "token", "--data-dir", dir); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "issuer") {
		t.Errorf("token with an issuer configured: %v", err)
	}
}

func TestServeConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"issuer without audience", map[string]string{"PGXSAFETY_OIDC_ISSUER": "https://idp.example.org"}, nil, "PGXSAFETY_OIDC_AUDIENCE"},
		{"audience without issuer", map[string]string{"PGXSAFETY_OIDC_AUDIENCE": "x"}, nil, "need PGXSAFETY_OIDC_ISSUER"},
		{"http issuer", map[string]string{"PGXSAFETY_OIDC_ISSUER": "http://idp.example.org", "PGXSAFETY_OIDC_AUDIENCE": "x"}, nil, "https"},
		{"HMAC algorithm", map[string]string{"PGXSAFETY_OIDC_ISSUER": "https://idp.example.org", "PGXSAFETY_OIDC_AUDIENCE": "x", "PGXSAFETY_OIDC_ALGORITHMS": "HS256"}, nil, "HS256"},
		{"short retention", map[string]string{"PGXSAFETY_AUDIT_RETENTION_DAYS": "90"}, nil, "at least 365"},
		{"CORS wildcard", map[string]string{"PGXSAFETY_CORS_ORIGINS": "*"}, nil, "PGXSAFETY_CORS_ORIGINS"},
		{"log format", map[string]string{"PGXSAFETY_LOG_FORMAT": "xml"}, nil, "PGXSAFETY_LOG_FORMAT"},
		{"payloads", map[string]string{"PGXSAFETY_AUDIT_PAYLOADS": "some"}, nil, "PGXSAFETY_AUDIT_PAYLOADS"},
		{"bad Redis URL", map[string]string{"PGXSAFETY_REDIS_URL": "tcp://user:s3cret@redis"}, nil, "PGXSAFETY_REDIS_URL"},
		{"negative commit window", map[string]string{"PGXSAFETY_AUDIT_COMMIT_WINDOW": "-1ms"}, nil, "PGXSAFETY_AUDIT_COMMIT_WINDOW"},
		{"long commit window", map[string]string{"PGXSAFETY_AUDIT_COMMIT_WINDOW": "1s"}, nil, "PGXSAFETY_AUDIT_COMMIT_WINDOW"},
		{"GOGC not a number", map[string]string{"PGXSAFETY_GOGC": "off"}, nil, "PGXSAFETY_GOGC"},
		{"dev mode off loopback", nil, []string{"--addr", "0.0.0.0:8080"}, "loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"serve", "--data-dir", t.TempDir()}, tc.args...)
			if tc.args == nil {
				args = append(args, "--addr", "127.0.0.1:0")
			}
			_, _, err := runArgs(t, args...)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error mentioning %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks a password: %v", err)
			}
		})
	}
	// The per-request cost settings are read as given.
	clearEnv(t)
	t.Setenv("PGXSAFETY_AUDIT_COMMIT_WINDOW", "500us")
	t.Setenv("PGXSAFETY_GOGC", "300")
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0"}, io.Discard)
	if err != nil || cfg.auditCommitWindow != 500*time.Microsecond || cfg.gcPercent != 300 {
		t.Errorf("commit window %v, GC percent %d, err %v; want 500µs, 300, nil", cfg.auditCommitWindow, cfg.gcPercent, err)
	}
	// An operator's GOGC stands when PGXSAFETY_GOGC is not set.
	clearEnv(t)
	t.Setenv("GOGC", "150")
	if cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0"}, io.Discard); err != nil || cfg.gcPercent != 0 {
		t.Errorf("GOGC set: GC percent %d, err %v; want 0 (the runtime's), nil", cfg.gcPercent, err)
	}
	// With an issuer, a non-loopback address is accepted.
	clearEnv(t)
	t.Setenv("PGXSAFETY_OIDC_ISSUER", "https://idp.example.org")
	t.Setenv("PGXSAFETY_OIDC_AUDIENCE", "pgxsafety")
	if _, err := loadServeConfig([]string{"--addr", "0.0.0.0:8443"}, io.Discard); err != nil {
		t.Errorf("OIDC mode on 0.0.0.0: %v", err)
	}
}

// TestServeOIDCMode points serve at a local OpenID Connect issuer (a test
// double: discovery and JWKS over httptest): its tokens are accepted, a
// development token is not.
func TestServeOIDCMode(t *testing.T) {
	clearEnv(t)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := jwk.FromRaw(priv)
	key.Set(jwk.KeyIDKey, "idp-key-1")
	pub, _ := jwk.PublicKeyOf(key)
	var issuer string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": issuer + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		set := jwk.NewSet()
		set.AddKey(pub)
		json.NewEncoder(w).Encode(set)
	})
	idp := httptest.NewServer(mux)
	defer idp.Close()
	issuer = idp.URL
	t.Setenv("PGXSAFETY_OIDC_ISSUER", issuer)
	t.Setenv("PGXSAFETY_OIDC_AUDIENCE", "pgxsafety-web")

	dataDir := t.TempDir()
	// A witness inside the data directory is refused with an issuer set.
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newServer(context.Background(), cfg, zap.NewNop(), io.Discard, serverOptions{}); !errors.Is(err, errUsage) ||
		!strings.Contains(err.Error(), "PGXSAFETY_AUDIT_WITNESS_FILE") {
		t.Errorf("witness in the data directory in production mode: %v, want a usage error naming PGXSAFETY_AUDIT_WITNESS_FILE", err)
	}
	t.Setenv("PGXSAFETY_AUDIT_WITNESS_FILE", filepath.Join(t.TempDir(), "witness"))
	s := inProcess(t, dataDir, serverOptions{})
	if s.devMode {
		t.Fatal("server is in development mode with an issuer configured")
	}
	now := time.Now()
	tok, err := jwt.NewBuilder().Issuer(issuer).Audience([]string{"pgxsafety-web"}).Subject("dr-rao").
		IssuedAt(now).Expiration(now.Add(time.Hour)).Build()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	if err != nil {
		t.Fatal(err)
	}
	rec := request(t, s.handler, http.MethodPost, "/pgx/check", string(signed), checkBody)
	if rec.Code != http.StatusOK {
		t.Fatalf("IdP token: %d %s", rec.Code, rec.Body)
	}
	if rec := request(t, s.handler, http.MethodPost, "/pgx/check", devToken(t, t.TempDir(), "alice", now), checkBody); rec.Code != http.StatusUnauthorized {
		t.Errorf("development token in OIDC mode: %d", rec.Code)
	}
	if _, err := os.Stat(filepath.Join(dataDir, httpx.DevKeyFile)); err == nil {
		t.Error("OIDC mode created a development key")
	}
}

// TestRetentionJob runs the background purge once: expired entries go,
// the checkpoint stays, the chain verifies, and the metric counts them.
func TestRetentionJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	signer, err := loadOrCreateLogKey(filepath.Join(dir, logKeyFileName), "")
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlstore.OpenWith(ctx, "", dir, sqlstore.Options{Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Now().UTC()
	for i, ts := range []time.Time{now.AddDate(-2, 0, 0), now.AddDate(-1, -1, 0), now.Add(-time.Hour)} {
		if _, err := store.Append(ctx, audit.Entry{Time: ts, Principal: audit.Principal{Subject: "s"}, Endpoint: "POST /pgx/check",
			RequestID: fmt.Sprint(i), KnowledgeVersion: "kv", RequestDigest: "d", ResponseDigest: "d"}); err != nil {
			t.Fatal(err)
		}
	}
	backdateCommitted(t, store, 2, now.AddDate(-2, 0, 0))
	m := httpx.NewMetrics()
	jobCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		runRetention(jobCtx, store, defaultRetentionDays*24*time.Hour, 0, time.Hour, time.Now, zap.NewNop(), m)
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cp, ok, err := store.LatestCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if cp.ThroughSequence != 2 || cp.Removed != 2 {
				t.Errorf("checkpoint = %+v, want the 2 expired entries", cp)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retention job did not purge")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	sum, err := audit.VerifyChain(ctx, store)
	if err != nil || sum.Entries != 1 || sum.FirstSequence != 3 {
		t.Errorf("after the job: %+v %v", sum, err)
	}
	if got := metricSum(t, &server{metrics: m}, "pgxsafety_audit_purged_entries_total"); got != 2 {
		t.Errorf("purged metric = %v", got)
	}
}
