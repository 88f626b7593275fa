package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// testOptions keep the fail-closed tests short: a blocked database fails a
// batch after at most a second.
var testOptions = Options{CommitTimeout: time.Second, BusyTimeout: 200 * time.Millisecond}

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
		Open: func(t *testing.T) audittest.Store {
			s, _ := openTemp(t)
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
			all := append([]string{`DROP TRIGGER IF EXISTS audit_log_no_update`, `DROP TRIGGER IF EXISTS audit_log_no_delete`}, stmts...)
			for _, stmt := range all {
				if _, err := db.ExecContext(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
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
func postgresURL(t *testing.T) string {
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
func pgSchema(t *testing.T, base string) string {
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

// postgresHarness runs the conformance suite against fresh schemas of the
// PostgreSQL test database.
func postgresHarness(base string) audittest.Harness {
	var urls sync.Map // *Store → URL
	openURL := func(t *testing.T, u string) *Store {
		t.Helper()
		s, err := OpenWith(context.Background(), u, "", testOptions)
		if err != nil {
			t.Fatalf("open PostgreSQL store: %v", err)
		}
		urls.Store(s, u)
		return s
	}
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
		Open: func(t *testing.T) audittest.Store {
			s := openURL(t, pgSchema(t, base))
			t.Cleanup(func() { s.Close() })
			return s
		},
		Reopen: func(t *testing.T, old audittest.Store) audittest.Store {
			u, _ := urls.Load(old.(*Store))
			return openURL(t, u.(string))
		},
		Purge: purgeFn,
		Exec: func(t *testing.T, s audittest.Store, stmt string) error {
			_, err := s.(*Store).db.ExecContext(context.Background(), stmt)
			return err
		},
		Tamper: func(t *testing.T, s audittest.Store, stmts ...string) {
			t.Helper()
			db := s.(*Store).db
			all := append([]string{`ALTER TABLE audit_log DISABLE TRIGGER USER`}, stmts...)
			for _, stmt := range all {
				if _, err := db.ExecContext(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
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
		if _, err := raw.Exec(`INSERT INTO audit_log (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
	res, err := s.Purge(ctx, time.Now().AddDate(-1, 0, -1))
	if err != nil || res.Removed != 2 {
		t.Fatalf("Purge after upgrade = %+v, %v", res, err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify after purge: %v", err)
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
