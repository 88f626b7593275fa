package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	tdlog "github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// testOptions keep the fail-closed tests short: a blocked database fails a
// batch after at most a second.
var testOptions = Options{CommitTimeout: time.Second, BusyTimeout: 200 * time.Millisecond, Signer: audittest.Signer()}

var entry = audittest.Entry

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := OpenWith(context.Background(), "", dir, testOptions)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func readAll(t *testing.T, s *Store, from int64) []audit.Entry {
	t.Helper()
	return audittest.ReadAll(t, s, from)
}

// sqliteHarness runs the conformance suite against SQLite files in
// temporary directories.
func sqliteHarness() audittest.Harness {
	return audittest.Harness{
		Dialect: "sqlite",
		Open: func(t *testing.T) audittest.Store {
			s, _ := openTemp(t)
			return s
		},
		OpenClock: func(t *testing.T, now func() time.Time) audittest.Store {
			opts := testOptions
			opts.Now = now
			s, err := OpenWith(context.Background(), "", t.TempDir(), opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		},
		Reopen: func(t *testing.T, old audittest.Store) audittest.Store {
			s, err := OpenWith(context.Background(), "sqlite:"+old.(*Store).Location(), "", testOptions)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return s
		},
		Purge: purgeFn,
		Exec: func(t *testing.T, s audittest.Store, stmt string) error {
			_, err := s.(*Store).db.ExecContext(context.Background(), stmt)
			return err
		},
		Tamper: func(t *testing.T, s audittest.Store, stmts ...string) {
			t.Helper()
			db := s.(*Store).db
			var triggers []string
			if err := db.Select(&triggers, `SELECT name FROM sqlite_master WHERE type = 'trigger'`); err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, name := range triggers {
				all = append(all, `DROP TRIGGER `+name)
			}
			for _, stmt := range append(all, stmts...) {
				if _, err := db.ExecContext(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		},
		Backdate: func(t *testing.T, s audittest.Store, through int64, at time.Time) {
			t.Helper()
			// Drop the UPDATE guard, backdate, and put the guard back.
			ctx := context.Background()
			tx, err := s.(*Store).db.BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			var ddl string
			if err := tx.Get(&ddl, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'audit_log_no_update'`); err != nil {
				t.Fatal(err)
			}
			for _, stmt := range []string{`DROP TRIGGER audit_log_no_update`,
				`UPDATE audit_log SET committed_at = '` + at.UTC().Format("2006-01-02T15:04:05Z") + `' WHERE seq <= ` + strconv.FormatInt(through, 10),
				ddl} {
				if _, err := tx.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		},
		Block: func(t *testing.T, s audittest.Store) func() {
			t.Helper()
			// Another connection takes the write lock and keeps it.
			raw, err := sql.Open("sqlite", s.(*Store).Location()+"?_txlock=immediate&_pragma=busy_timeout(5000)")
			if err != nil {
				t.Fatal(err)
			}
			tx, err := raw.BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatalf("lock the database: %v", err)
			}
			return func() {
				tx.Rollback()
				raw.Close()
			}
		},
	}
}

func purgeFn(t *testing.T, s audittest.Store, cutoff time.Time) (int64, error) {
	res, err := s.(*Store).Purge(context.Background(), cutoff)
	return res.Removed, err
}

func TestConformanceSQLite(t *testing.T) {
	audittest.Run(t, sqliteHarness())
}

// postgresURL returns PGXSAFETY_TEST_DATABASE_URL, skipping the test when
// it is unset.
func postgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("PGXSAFETY_TEST_DATABASE_URL")
	if u == "" {
		t.Skip("PGXSAFETY_TEST_DATABASE_URL is not set: skipping the PostgreSQL tests (.ci/run sets it)")
	}
	return u
}

// pgSchema creates a fresh schema on the test database and returns a URL
// whose search_path selects it; the schema is dropped when the test ends.
// Every test gets its own schema, so runs and parallel tests never share
// tables. An unreachable database fails the test.
func pgSchema(t testing.TB, base string) string {
	t.Helper()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("PGXSAFETY_TEST_DATABASE_URL: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "pgxsafety_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("PostgreSQL at PGXSAFETY_TEST_DATABASE_URL is set but not usable: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PGXSAFETY_TEST_DATABASE_URL does not parse")
	}
	q := pu.Query()
	q.Set("search_path", schema)
	pu.RawQuery = q.Encode()
	return pu.String()
}

// appUserEnv names the least-privilege role the PostgreSQL tests run the
// store as (.ci/run sets it to pgxsafety_app). Unset, the store connects
// as the user of PGXSAFETY_TEST_DATABASE_URL.
const appUserEnv = "PGXSAFETY_TEST_DATABASE_APP_USER"

// documentedGrants returns the GRANT statements of the "PostgreSQL roles"
// section of docs/operations.md with schema in place of audit and role in
// place of pgxsafety_app: the service role gets exactly the privileges the
// docs tell an operator to grant (INSERT and SELECT, nothing else).
func documentedGrants(t testing.TB, schema, role string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var grants []string
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "### ") {
			in = strings.HasPrefix(line, "### PostgreSQL roles")
			continue
		}
		if in && strings.HasPrefix(line, "GRANT ") {
			g := strings.TrimSuffix(line, ";")
			g = strings.ReplaceAll(g, "SCHEMA audit ", "SCHEMA "+schema+" ")
			g = strings.ReplaceAll(g, "audit.", schema+".")
			grants = append(grants, strings.ReplaceAll(g, "pgxsafety_app", role))
		}
	}
	if len(grants) == 0 {
		t.Fatal(`docs/operations.md: no GRANT statements under "### PostgreSQL roles"`)
	}
	return grants
}

// serviceURL migrates the schema of ownerURL as its owner and, when
// PGXSAFETY_TEST_DATABASE_APP_USER is set, grants the service role its
// privileges and returns a URL connecting as that role with NoMigrate set,
// as "pgxsafety migrate" then "serve" would.
func serviceURL(t testing.TB, ownerURL string, opts Options) (string, Options) {
	t.Helper()
	app := os.Getenv(appUserEnv)
	if app == "" {
		return ownerURL, opts
	}
	if _, err := MigrateDatabase(context.Background(), ownerURL, "", Options{}); err != nil {
		t.Fatalf("migrate as the owner: %v", err)
	}
	pu, err := url.Parse(ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := pu.Query().Get("search_path")
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, g := range documentedGrants(t, schema, app) {
		if _, err := db.Exec(g); err != nil {
			t.Fatalf("grant the service role: %s: %v", g, err)
		}
	}
	pu.User = url.User(app)
	opts.NoMigrate = true
	return pu.String(), opts
}

// postgresHarness runs the conformance suite against fresh schemas of the
// PostgreSQL test database, the store connecting as the least-privilege
// service role when PGXSAFETY_TEST_DATABASE_APP_USER is set.
func postgresHarness(base string) audittest.Harness {
	var urls sync.Map // *Store → the owner's URL of its schema
	openURL := func(t *testing.T, ownerURL string, opts Options) *Store {
		t.Helper()
		u, o := serviceURL(t, ownerURL, opts)
		s, err := OpenWith(context.Background(), u, "", o)
		if err != nil {
			t.Fatalf("open PostgreSQL store: %v", err)
		}
		urls.Store(s, ownerURL)
		return s
	}
	// rawDB connects as the schema's owner (DDL and every DML right).
	rawDB := func(t *testing.T, s audittest.Store) *sql.DB {
		t.Helper()
		u, _ := urls.Load(s.(*Store))
		db, err := sql.Open("pgx", u.(string))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	return audittest.Harness{
		Dialect: "postgres",
		Open: func(t *testing.T) audittest.Store {
			s := openURL(t, pgSchema(t, base), testOptions)
			t.Cleanup(func() { s.Close() })
			return s
		},
		OpenClock: func(t *testing.T, now func() time.Time) audittest.Store {
			opts := testOptions
			opts.Now = now
			return openURL(t, pgSchema(t, base), opts)
		},
		Reopen: func(t *testing.T, old audittest.Store) audittest.Store {
			u, _ := urls.Load(old.(*Store))
			return openURL(t, u.(string), testOptions)
		},
		// The purge needs DELETE, which the service role lacks: it runs
		// as the owner, as "pgxsafety audit purge" does (docs/operations.md).
		Purge: func(t *testing.T, s audittest.Store, cutoff time.Time) (int64, error) {
			u, _ := urls.Load(s.(*Store))
			opts := testOptions
			opts.NoMigrate = true
			opts.Now = s.(*Store).opts.Now
			owner, err := OpenWith(context.Background(), u.(string), "", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer owner.Close()
			res, err := owner.Purge(context.Background(), cutoff)
			return res.Removed, err
		},
		// Exec runs as the owner: the triggers must stop even a client
		// with every DML right.
		Exec: func(t *testing.T, s audittest.Store, stmt string) error {
			db := rawDB(t, s)
			defer db.Close()
			_, err := db.ExecContext(context.Background(), stmt)
			return err
		},
		Tamper: func(t *testing.T, s audittest.Store, stmts ...string) {
			t.Helper()
			db := rawDB(t, s)
			defer db.Close()
			all := append([]string{`ALTER TABLE audit_log DISABLE TRIGGER USER`,
				`ALTER TABLE audit_checkpoint DISABLE TRIGGER USER`, `ALTER TABLE audit_purged_leaf DISABLE TRIGGER USER`}, stmts...)
			for _, stmt := range all {
				if _, err := db.ExecContext(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		},
		Backdate: func(t *testing.T, s audittest.Store, through int64, at time.Time) {
			t.Helper()
			db := rawDB(t, s)
			defer db.Close()
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			for _, stmt := range []string{`ALTER TABLE audit_log DISABLE TRIGGER USER`,
				`UPDATE audit_log SET committed_at = '` + at.UTC().Format("2006-01-02T15:04:05Z") + `' WHERE seq <= ` + strconv.FormatInt(through, 10),
				`ALTER TABLE audit_log ENABLE TRIGGER USER`} {
				if _, err := tx.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		},
		Block: func(t *testing.T, s audittest.Store) func() {
			t.Helper()
			db := rawDB(t, s)
			tx, err := db.BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(`LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatalf("lock audit_log: %v", err)
			}
			return func() {
				tx.Rollback()
				db.Close()
			}
		},
	}
}

func TestConformancePostgres(t *testing.T) {
	audittest.Run(t, postgresHarness(postgresURL(t)))
}

func TestPostgresBackend(t *testing.T) {
	u := pgSchema(t, postgresURL(t))
	s, err := OpenWith(context.Background(), u, "", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Backend() != "postgres" || s.Location() != "postgres" {
		t.Errorf("Backend %q Location %q", s.Backend(), s.Location())
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	// TRUNCATE is refused too (PostgreSQL only).
	if _, err := s.db.Exec(`TRUNCATE audit_log`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Errorf("TRUNCATE: %v, want the append-only trigger", err)
	}
	// A second open (another replica) finds the migrations applied.
	s2, err := OpenWith(context.Background(), u, "", Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("open with NoMigrate after migration: %v", err)
	}
	s2.Close()
}

func TestDataDirAndFileModes(t *testing.T) {
	s, dir := openTemp(t)
	if _, err := s.Append(context.Background(), entry(0)); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Location(), filepath.Join(dir, DBFileName); got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if s.Backend() != "sqlite" {
		t.Errorf("Backend = %q", s.Backend())
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, s.Location(): 0o600, s.Location() + "-wal": 0o600, s.Location() + "-shm": 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != want {
			t.Errorf("%s mode = %o, want %o", path, perm, want)
		}
	}
}

func TestMigrationsAppliedOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for range 2 {
		s, err := OpenWith(ctx, "", dir, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	st, err := MigrateDatabase(ctx, "", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sqliteDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Applied) != 0 || st.Version != latest(ms) || st.Latest != latest(ms) {
		t.Errorf("MigrateDatabase on a current database = %+v, want nothing applied at version %d", st, latest(ms))
	}
	s, err := OpenWith(ctx, "", dir, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Errorf("schema_migrations has %d rows, want %d (one per migration)", n, len(ms))
	}
}

func TestNoMigrateRefusesOldSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, err := OpenWith(ctx, "", dir, Options{NoMigrate: true})
	if !errors.Is(err, ErrSchema) {
		t.Fatalf("NoMigrate on an empty database = %v, want ErrSchema", err)
	}
	st, err := MigrateDatabase(ctx, "", dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sqliteDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Applied) != len(ms) || st.Version != st.Latest {
		t.Errorf("MigrateDatabase = %+v, want every migration applied", st)
	}
	s, err := OpenWith(ctx, "", dir, Options{NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate after migrate: %v", err)
	}
	s.Close()
}

// foundationColumns are audit_log's columns in migration 0001.
const foundationColumns = `seq, id, time, principal_subject, principal_issuer, principal_name, principal_email,
    endpoint, request_id, knowledge_version, request_digest, response_digest, request, response,
    prev_hash, entry_hash`

// TestUpgradeFromFoundationSchema opens a database that only has migration
// 0001 (as written by the first release) with entries in the old time
// layout, and checks that they still verify and purge after 0002.
func TestUpgradeFromFoundationSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, DBFileName)
	raw, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sqliteDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{createSchemaMigrations, ms[0].sql,
		`INSERT INTO schema_migrations VALUES (1, '0001_audit', '2025-01-01T00:00:00Z')`} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	// Two entries as the foundation wrote them: RFC 3339 with trailing
	// zeros dropped.
	prev := audit.GenesisHash
	old := time.Now().UTC().AddDate(-2, 0, 0).Truncate(time.Second)
	for i := range 2 {
		e := entry(i)
		e.ID = "aud_0000000000000000000000000" + string(rune('0'+i))
		e.Sequence = int64(i + 1)
		e.Time = old.Add(time.Duration(i) * 1500 * time.Millisecond)
		e.PrevHash = prev
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		if _, err := raw.Exec(`INSERT INTO audit_log (`+foundationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Sequence, e.ID, e.Time.Format(audit.TimeFormat), e.Principal.Subject, e.Principal.Issuer, e.Principal.Name,
			e.Principal.Email, e.Endpoint, e.RequestID, e.KnowledgeVersion, e.RequestDigest, e.ResponseDigest,
			e.Request, e.Response, e.PrevHash, e.EntryHash); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	s, err := OpenWith(ctx, "", dir, testOptions)
	if err != nil {
		t.Fatalf("open the foundation database: %v", err)
	}
	defer s.Close()
	recent := entry(5)
	recent.Time = time.Now().UTC()
	e, err := s.Append(ctx, recent)
	if err != nil || e.Sequence != 3 || e.PrevHash != prev {
		t.Fatalf("append after upgrade: %+v, %v", e, err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Fatalf("Verify after upgrade: %v", err)
	}
	// 0005 rebuilt audit_log: its guards must hold on the new table.
	for _, stmt := range []string{
		`UPDATE audit_log SET endpoint = 'x' WHERE seq = 3`,
		`DELETE FROM audit_log WHERE seq = 3`,
		`INSERT OR REPLACE INTO audit_log (` + foundationColumns + `, committed_at) SELECT ` + foundationColumns + `, committed_at FROM audit_log WHERE seq = 3`,
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s after upgrade: %v, want refused as append-only", stmt, err)
		}
	}
	res, err := s.Purge(ctx, time.Now().AddDate(-1, 0, -1))
	if err != nil || res.Removed != 2 {
		t.Fatalf("Purge after upgrade = %+v, %v", res, err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify after purge: %v", err)
	}
}

// TestPostgresUpgradeKeepsEntries opens a PostgreSQL schema at migration
// 0005 holding entries with payloads stored as given, lets Open apply
// 0006_lean_log, and checks that the old entries still read back and
// verify beside a new, compressed one.
func TestPostgresUpgradeKeepsEntries(t *testing.T) {
	ctx := context.Background()
	owner := pgSchema(t, postgresURL(t))
	raw, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ms, err := loadMigrations(postgresDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(createSchemaMigrations); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version > 5 {
			break
		}
		if _, err := raw.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES ($1, $2, '2026-11-01T00:00:00Z')`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	prev := audit.GenesisHash
	var old []audit.Entry
	for i := range 2 {
		e := entry(i)
		e.ID = "aud_0000000000000000000000000" + string(rune('0'+i))
		e.Sequence = int64(i + 1)
		e.Time = time.Now().UTC().Add(time.Duration(i-10) * time.Second)
		e.Response = []byte(strings.Repeat(`{"phenotype":"Poor Metabolizer"},`, 50+i))
		e.PrevHash = prev
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		if _, err := raw.Exec(`INSERT INTO audit_log (`+foundationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			e.Sequence, e.ID, formatStoredTime(e.Time), e.Principal.Subject, e.Principal.Issuer, e.Principal.Name,
			e.Principal.Email, e.Endpoint, e.RequestID, e.KnowledgeVersion, e.RequestDigest, e.ResponseDigest,
			e.Request, e.Response, e.PrevHash, e.EntryHash); err != nil {
			t.Fatal(err)
		}
		old = append(old, e)
	}
	s, err := OpenWith(ctx, owner, "", testOptions)
	if err != nil {
		t.Fatalf("open the 0005 schema: %v", err)
	}
	defer s.Close()
	recent := entry(5)
	recent.Time = time.Now().UTC()
	recent.Response = []byte(strings.Repeat(`{"phenotype":"Normal Metabolizer"},`, 60))
	e, err := s.Append(ctx, recent)
	if err != nil || e.Sequence != 3 || e.PrevHash != prev {
		t.Fatalf("append after upgrade: %+v, %v", e, err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Fatalf("Verify after upgrade: %v", err)
	}
	got := readAll(t, s, 1)
	if len(got) != 3 || string(got[0].Response) != string(old[0].Response) || string(got[1].Response) != string(old[1].Response) ||
		string(got[2].Response) != string(recent.Response) {
		t.Fatalf("entries after upgrade do not read back as written (%d entries)", len(got))
	}
	var codecs []sql.NullString
	rows, err := raw.Query(`SELECT payload_codec FROM audit_log ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c sql.NullString
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		codecs = append(codecs, c)
	}
	want := []sql.NullString{{}, {}, {String: codecS2, Valid: true}}
	if diff := cmp.Diff(want, codecs); diff != "" {
		t.Errorf("payload_codec by seq (-want +got):\n%s", diff)
	}
}

func TestOmitPayloads(t *testing.T) {
	ctx := context.Background()
	opts := testOptions
	opts.OmitPayloads = true
	s, err := OpenWith(ctx, "", t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := s.Append(ctx, entry(1))
	if err != nil {
		t.Fatal(err)
	}
	if e.Request != nil || e.Response != nil || e.RequestDigest == "" || e.ResponseDigest == "" {
		t.Errorf("entry = %+v, want digests only", e)
	}
	got := readAll(t, s, 0)
	if diff := cmp.Diff([]audit.Entry{e}, got); diff != "" {
		t.Errorf("stored entry (-returned +stored):\n%s", diff)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestGroupCommitBatches holds the writer inside its OnCommit hook after a
// first commit, queues entries meanwhile, and checks that the writer then
// commits them together, in batches of at most MaxBatch.
func TestGroupCommitBatches(t *testing.T) {
	ctx := context.Background()
	var (
		mu      sync.Mutex
		batches []int
	)
	hold := make(chan struct{})
	first := true
	opts := testOptions
	opts.MaxBatch = 4
	opts.OnCommit = func(st CommitStats) {
		mu.Lock()
		batches = append(batches, st.Entries)
		wait := first
		first = false
		mu.Unlock()
		if st.Err != nil {
			t.Errorf("commit failed: %v", st.Err)
		}
		if wait {
			<-hold
		}
	}
	s, err := OpenWith(ctx, "", t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := s.Append(ctx, entry(0)); err != nil {
			t.Error(err)
		}
	}()
	// Wait until the writer is inside OnCommit for the first entry.
	waitFor(t, "the writer to commit the first entry", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(batches) == 1
	})
	const queued = 10
	for i := range queued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Append(ctx, entry(i+1)); err != nil {
				t.Error(err)
			}
		}()
	}
	waitFor(t, "the appends to queue", func() bool { return len(s.queue) >= queued })
	close(hold)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]int{1, 4, 4, 2}, batches); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestOpenRejectsUnsupportedURLs(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"mysql://root:s3cret@localhost/audit",
		"just-a-path.db",
		"sqlite:",
		"postgres://pgx:s3cret@/audit",
		"postgres://pgx:s3cret@%zz/audit",
	} {
		_, err := Open(ctx, u, t.TempDir())
		if !errors.Is(err, ErrConfig) {
			t.Errorf("Open(%q) = %v, want ErrConfig", u, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cret") {
			t.Errorf("Open(%q) error leaks the password: %s", u, msg)
		}
		if !strings.Contains(msg, "sqlite:PATH") || !strings.Contains(msg, "postgres://") {
			t.Errorf("Open(%q) error does not name the accepted forms: %s", u, msg)
		}
	}
	if _, err := Open(ctx, "", ""); !errors.Is(err, ErrConfig) {
		t.Errorf("Open without URL or data dir = %v, want ErrConfig", err)
	}
}

func TestOpenUnreachablePostgresHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Port 1 on loopback refuses connections at once.
	_, err := Open(ctx, "postgres://pgx:s3cret@127.0.0.1:1/audit?sslmode=disable&connect_timeout=2", "")
	if err == nil {
		t.Fatal("Open of an unreachable PostgreSQL succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestOpenSQLiteURL(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "nested", "log.db")
	s, err := Open(ctx, "sqlite://"+file, "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if s.Location() != file {
		t.Errorf("Location = %q, want %q", s.Location(), file)
	}
	if _, err := s.Append(ctx, entry(0)); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.db.Get(&mode, `PRAGMA journal_mode`); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var sync int
	if err := s.db.Get(&sync, `PRAGMA synchronous`); err != nil {
		t.Fatal(err)
	}
	if sync != 2 {
		t.Errorf("synchronous = %d, want 2 (FULL)", sync)
	}
}

func TestPingAndAppendAfterClose(t *testing.T) {
	s, _ := openTemp(t)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s.Close()
	if _, err := s.Append(context.Background(), entry(0)); !errors.Is(err, audit.ErrUnavailable) || !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v, want ErrUnavailable and ErrClosed", err)
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Fatal("Ping after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNewIDEncodesTime(t *testing.T) {
	t0 := audittest.T0
	a, err := newID(t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newID(t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// The first 10 characters encode the millisecond time, so ids of later
	// entries sort after earlier ones.
	if !(a[:14] < b[:14]) {
		t.Errorf("time prefix of %s does not sort before %s", a, b)
	}
	c, err := newID(t0)
	if err != nil {
		t.Fatal(err)
	}
	if a == c {
		t.Errorf("two ids at the same instant are equal: %s", a)
	}
}

func TestStoredTimeSortsAsTime(t *testing.T) {
	times := []time.Time{
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 0, 500_000_000, time.UTC),
		time.Date(2025, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(2025, 1, 1, 5, 30, 1, 0, time.FixedZone("IST", 19800)),
	}
	for i := 1; i < len(times); i++ {
		a, b := formatStoredTime(times[i-1]), formatStoredTime(times[i])
		if !(a < b) && times[i-1].Before(times[i]) {
			t.Errorf("%s does not sort before %s", a, b)
		}
		back, err := time.Parse(audit.TimeFormat, b)
		if err != nil || !back.Equal(times[i]) {
			t.Errorf("stored time %s parses to %v, %v", b, back, err)
		}
	}
}

// TestProofsVerifyWithTransparencyDev checks the inclusion and consistency
// proofs of a real store (SQLite, and PostgreSQL when configured), across a
// retention purge, with the transparency-dev verifier and the checkpoint
// parser of transparency-dev/formats.
func TestProofsVerifyWithTransparencyDev(t *testing.T) {
	backends := map[string]func(t *testing.T) *Store{
		"sqlite": func(t *testing.T) *Store { s, _ := openTemp(t); return s },
		"postgres": func(t *testing.T) *Store {
			s, err := OpenWith(context.Background(), pgSchema(t, postgresURL(t)), "", testOptions)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			old := time.Now().UTC().AddDate(-2, 0, 0)
			var entries []audit.Entry
			for i := range 13 {
				e := entry(i)
				if i < 4 {
					e.Time = old.Add(time.Duration(i) * time.Second)
				}
				got, err := s.Append(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, got)
			}
			signer := audittest.Signer()
			nv, err := note.NewVerifier(signer.Verifier().String())
			if err != nil {
				t.Fatal(err)
			}
			log := audit.NewLog(s)
			first, err := log.Checkpoint(ctx, signer.Name())
			if err != nil {
				t.Fatal(err)
			}
			// Purge the first four entries (committed long ago).
			audittestBackdate(t, s, 4, old)
			if res, err := s.Purge(ctx, time.Now().AddDate(-1, 0, -1)); err != nil || res.Removed != 4 {
				t.Fatalf("Purge = %+v, %v", res, err)
			}
			for i := 13; i < 20; i++ {
				got, err := s.Append(ctx, entry(i))
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, got)
			}
			cur, err := log.Checkpoint(ctx, signer.Name())
			if err != nil {
				t.Fatal(err)
			}
			msg, err := signer.SignCheckpoint(cur)
			if err != nil {
				t.Fatal(err)
			}
			parsed, _, _, err := tdlog.ParseCheckpoint(msg, signer.Name(), nv)
			if err != nil {
				t.Fatalf("transparency-dev rejects the checkpoint: %v", err)
			}
			if parsed.Size != 20 {
				t.Fatalf("checkpoint size %d, want 20", parsed.Size)
			}
			hasher := rfc6962.DefaultHasher
			for _, e := range entries {
				p, err := log.InclusionProof(ctx, e.Sequence, cur.Size)
				if err != nil {
					t.Fatal(err)
				}
				leaf, _ := audit.LeafHash(e.EntryHash)
				if err := proof.VerifyInclusion(hasher, uint64(e.Sequence-1), parsed.Size, leaf[:], hashBytes(p), parsed.Hash); err != nil {
					t.Errorf("transparency-dev rejects the inclusion proof of entry %d: %v", e.Sequence, err)
				}
			}
			p, err := log.ConsistencyProof(ctx, first.Size, cur.Size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(hasher, first.Size, cur.Size, hashBytes(p), first.Root[:], parsed.Hash); err != nil {
				t.Errorf("transparency-dev rejects the consistency proof %d→%d: %v", first.Size, cur.Size, err)
			}
			// The retention checkpoint is itself a checkpoint of the log.
			rc, ok, err := s.LatestCheckpoint(ctx)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			rcp, _, _, err := tdlog.ParseCheckpoint(rc.Note, signer.Name(), nv)
			if err != nil || rcp.Size != 4 {
				t.Fatalf("transparency-dev reads the retention checkpoint as %+v, %v", rcp, err)
			}
			p, err = log.ConsistencyProof(ctx, 4, cur.Size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(hasher, 4, cur.Size, hashBytes(p), rcp.Hash, parsed.Hash); err != nil {
				t.Errorf("the retention checkpoint is not a prefix of the log: %v", err)
			}
			if _, err := audit.VerifyLog(ctx, s, audit.VerifyOptions{Key: signer.Verifier(), Kept: [][]byte{msg}}); err != nil {
				t.Errorf("VerifyLog: %v", err)
			}
		})
	}
}

func hashBytes(hs []tlog.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

// audittestBackdate sets committed_at of the entries up to through, with
// the UPDATE guard lifted for the statement (the harness's Backdate).
func audittestBackdate(t *testing.T, s *Store, through int64, at time.Time) {
	t.Helper()
	if s.Backend() == "sqlite" {
		sqliteHarness().Backdate(t, s, through, at)
		return
	}
	ctx := context.Background()
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range []string{`ALTER TABLE audit_log DISABLE TRIGGER USER`,
		`UPDATE audit_log SET committed_at = '` + at.UTC().Format("2006-01-02T15:04:05Z") + `' WHERE seq <= ` + strconv.FormatInt(through, 10),
		`ALTER TABLE audit_log ENABLE TRIGGER USER`} {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresServiceRoleIsLeastPrivilege checks that the service role of
// docs/operations.md appends and reads but can change nothing else: no
// UPDATE, DELETE, TRUNCATE, trigger or table change.
func TestPostgresServiceRoleIsLeastPrivilege(t *testing.T) {
	base := postgresURL(t)
	if os.Getenv(appUserEnv) == "" {
		t.Skip(appUserEnv + " is not set: the PostgreSQL tests connect as the database owner (.ci/run sets it)")
	}
	ownerURL := pgSchema(t, base)
	u, opts := serviceURL(t, ownerURL, testOptions)
	s, err := OpenWith(context.Background(), u, "", opts)
	if err != nil {
		t.Fatalf("the service role cannot open the store: %v", err)
	}
	defer s.Close()
	if _, err := s.Append(context.Background(), entry(0)); err != nil {
		t.Fatalf("the service role cannot append: %v", err)
	}
	for _, stmt := range []string{
		`UPDATE audit_log SET endpoint = 'x'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
		`ALTER TABLE audit_log DISABLE TRIGGER USER`,
		`DROP TRIGGER audit_log_no_update ON audit_log`,
		`INSERT INTO audit_purged_leaf (seq, entry_hash) VALUES (1, 'x')`,
		`CREATE TABLE audit_shadow (x int)`,
	} {
		_, err := s.db.Exec(stmt)
		if err == nil {
			t.Errorf("the service role ran %s", stmt)
			continue
		}
		if !strings.Contains(err.Error(), "permission denied") && !strings.Contains(err.Error(), "must be owner") &&
			!strings.Contains(err.Error(), "audit_purged_leaf:") {
			t.Errorf("%s: %v, want a privilege error", stmt, err)
		}
	}
	if _, err := s.Purge(context.Background(), time.Now().AddDate(-2, 0, 0)); err != nil {
		t.Errorf("a purge with nothing expired needs no DELETE: %v", err)
	}
	if ok, err := s.CanPurge(context.Background()); err != nil || ok {
		t.Errorf("CanPurge as the service role = %v, %v; want false (no DELETE)", ok, err)
	}
	owner, err := OpenWith(context.Background(), ownerURL, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if ok, err := owner.CanPurge(context.Background()); err != nil || !ok {
		t.Errorf("CanPurge as the owner = %v, %v; want true", ok, err)
	}
}

// TestImmutableFilesFailClosedWithoutCrashing makes the SQLite files
// immutable under a running store (chattr +i), which makes touching
// SQLite's memory-mapped WAL index raise SIGBUS. The store must turn that
// into errors (503s for clients) and report itself unhealthy, not kill the
// process. It needs chattr (Debian's e2fsprogs, which .ci/run installs),
// CAP_LINUX_IMMUTABLE (root, as CI runs) and a temporary directory on a
// file system with the immutable flag (ext4; tmpfs on recent kernels).
// Without them it skips, except with CI=true, where it fails.
func TestImmutableFilesFailClosedWithoutCrashing(t *testing.T) {
	cannot := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		cannot("chattr is not installed (Debian: e2fsprogs): cannot make the files immutable")
	}
	s, _ := openTemp(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, entry(0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(ctx); err != nil {
		t.Fatalf("Health of a working store: %v", err)
	}
	// Another connection keeps the WAL index (-shm) in place; every call
	// of the store below opens a fresh connection, as a busy server does.
	holder, err := sql.Open("sqlite", s.Location())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Closed after the files are writable again (cleanups run last
	// first): closing a connection checkpoints the WAL.
	t.Cleanup(func() { conn.Close(); holder.Close() })
	if _, err := conn.ExecContext(ctx, `SELECT COUNT(*) FROM audit_log`); err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxIdleConns(0)
	files := []string{s.Location(), s.Location() + "-wal", s.Location() + "-shm"}
	if out, err := exec.Command(chattr, append([]string{"+i"}, files...)...).CombinedOutput(); err != nil {
		// Undo the flag on any file chattr did change before failing.
		_ = exec.Command(chattr, append([]string{"-i"}, files...)...).Run()
		cannot("chattr +i is not permitted here (needs CAP_LINUX_IMMUTABLE and a file system that supports it; set TMPDIR to one): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(chattr, append([]string{"-i"}, files...)...).CombinedOutput(); err != nil {
			t.Errorf("chattr -i: %v %s", err, out)
		}
	})
	// Readers on several connections at once, as under load.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Entries(ctx, 0, func(audit.Entry) error { return nil })
			_ = s.Ping(ctx)
		}()
	}
	wg.Wait()
	for i := range 3 {
		_, err := s.Append(ctx, entry(i+1))
		t.Logf("append %d: %v", i, err)
		if !errors.Is(err, audit.ErrUnavailable) {
			t.Errorf("Append to immutable files = %v, want an error wrapping audit.ErrUnavailable", err)
		}
	}
	if err := s.Health(ctx); err == nil {
		t.Error("Health after failed commits = nil, want an error")
	}
	if _, err := s.Entry(ctx, "aud_x"); err == nil {
		t.Error("Entry after a storage fault succeeded")
	}
}
