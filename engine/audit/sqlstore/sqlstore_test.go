package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589793238, time.UTC)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(context.Background(), "", dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func entry(i int) audit.Entry {
	return audit.Entry{
		Time:             t0.Add(time.Duration(i) * time.Second),
		Principal:        audit.Principal{Subject: fmt.Sprintf("user-%d", i), Issuer: "https://issuer.test"},
		Endpoint:         "POST /pgx/check",
		RequestID:        fmt.Sprintf("req_%d", i),
		KnowledgeVersion: "kv-test",
		RequestDigest:    fmt.Sprintf("sha256:req%d", i),
		ResponseDigest:   fmt.Sprintf("sha256:res%d", i),
		Request:          []byte(fmt.Sprintf(`{"drug":"d%d"}`, i)),
		Response:         []byte(fmt.Sprintf(`{"ok":%d}`, i)),
	}
}

func readAll(t *testing.T, s *Store, from int64) []audit.Entry {
	t.Helper()
	var got []audit.Entry
	if err := s.Entries(context.Background(), from, func(e audit.Entry) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatalf("Entries: %v", err)
	}
	return got
}

func TestAppendReadRoundTrip(t *testing.T) {
	s, dir := openTemp(t)
	ctx := context.Background()
	if got, want := s.Location(), filepath.Join(dir, DBFileName); got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if s.Backend() != "sqlite" {
		t.Errorf("Backend = %q", s.Backend())
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("data dir mode = %o, want 700", perm)
	}

	var stored []audit.Entry
	for i := range 3 {
		in := entry(i)
		if i == 2 {
			in.Request, in.Response = nil, nil // payloads are optional
			in.Principal.Name, in.Principal.Email = "Dr A", "a@example.org"
		}
		e, err := s.Append(ctx, in)
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		if e.Sequence != int64(i+1) {
			t.Errorf("entry %d: Sequence = %d, want %d", i, e.Sequence, i+1)
		}
		if !regexp.MustCompile(`^aud_[0-9A-HJKMNP-TV-Z]{26}$`).MatchString(e.ID) {
			t.Errorf("entry %d: ID %q is not aud_ + 26 Crockford characters", i, e.ID)
		}
		if !e.Time.Equal(in.Time) {
			t.Errorf("entry %d: Time = %v, want the entry's own time %v", i, e.Time, in.Time)
		}
		stored = append(stored, e)
	}
	if stored[0].PrevHash != audit.GenesisHash {
		t.Errorf("first PrevHash = %q, want 64 zeros", stored[0].PrevHash)
	}
	for i := 1; i < len(stored); i++ {
		if stored[i].PrevHash != stored[i-1].EntryHash {
			t.Errorf("entry %d PrevHash does not chain to entry %d", i, i-1)
		}
	}

	if diff := cmp.Diff(stored, readAll(t, s, 0)); diff != "" {
		t.Errorf("Entries(0) differs from the appended entries (-appended +read):\n%s", diff)
	}
	if diff := cmp.Diff(stored[1:], readAll(t, s, 2)); diff != "" {
		t.Errorf("Entries(2) (-want +got):\n%s", diff)
	}
	got, err := s.Entry(ctx, stored[1].ID)
	if err != nil {
		t.Fatalf("Entry: %v", err)
	}
	if diff := cmp.Diff(stored[1], got); diff != "" {
		t.Errorf("Entry (-want +got):\n%s", diff)
	}
	if _, err := s.Entry(ctx, "aud_missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Entry(missing) error = %v, want ErrNotFound", err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestAppendRequiresTime(t *testing.T) {
	s, _ := openTemp(t)
	e := entry(0)
	e.Time = time.Time{}
	if _, err := s.Append(context.Background(), e); err == nil {
		t.Fatal("Append accepted an entry without a time")
	}
}

func TestReopenKeepsChainAndMigrationsOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Append(ctx, entry(0))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, "", dir)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer s.Close()
	second, err := s.Append(ctx, entry(1))
	if err != nil {
		t.Fatal(err)
	}
	if second.Sequence != 2 || second.PrevHash != first.EntryHash {
		t.Errorf("after reopen: Sequence %d PrevHash %q; want 2 chained to %q", second.Sequence, second.PrevHash, first.EntryHash)
	}
	var n int
	if err := s.db.Get(&n, `SELECT COUNT(*) FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sqliteDialect.migrations)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Errorf("schema_migrations has %d rows, want %d (one per migration)", n, len(ms))
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestUpdateAndDeleteAreRejected(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for i := range 2 {
		if _, err := s.Append(ctx, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range []string{
		`UPDATE audit_log SET endpoint = 'tampered' WHERE seq = 1`,
		`UPDATE audit_log SET request = NULL`,
		`DELETE FROM audit_log WHERE seq = 2`,
		`DELETE FROM audit_log`,
	} {
		_, err := s.db.ExecContext(ctx, stmt)
		if err == nil {
			t.Errorf("%s: succeeded, want the append-only trigger to abort it", stmt)
			continue
		}
		if !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v does not come from the append-only trigger", stmt, err)
		}
	}
	if got := readAll(t, s, 0); len(got) != 2 || got[0].Endpoint != "POST /pgx/check" {
		t.Errorf("log changed after rejected statements: %+v", got)
	}
}

// tamperedCopy copies the store's database into a new data directory,
// runs stmts on the copy with the append-only triggers dropped, and opens
// the copy as a Store.
func tamperedCopy(t *testing.T, s *Store, stmts ...string) *Store {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, DBFileName)
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, file); err != nil {
		t.Fatalf("copy database: %v", err)
	}
	raw, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{`DROP TRIGGER audit_log_no_update`, `DROP TRIGGER audit_log_no_delete`}, stmts...)
	for _, stmt := range all {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, "", dir)
	if err != nil {
		t.Fatalf("open tampered copy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestVerifyDetectsTampering(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for i := range 5 {
		if _, err := s.Append(ctx, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Fatalf("Verify of the intact log: %v", err)
	}

	tests := []struct {
		name    string
		stmts   []string
		wantSeq int64
	}{
		{"modified field", []string{`UPDATE audit_log SET endpoint = 'GET /elsewhere' WHERE seq = 3`}, 3},
		{"modified payload", []string{`UPDATE audit_log SET response = X'7B7D' WHERE seq = 4`}, 4},
		{"modified time", []string{`UPDATE audit_log SET time = '2020-01-01T00:00:00Z' WHERE seq = 2`}, 2},
		{"rehashed entry", []string{`UPDATE audit_log SET entry_hash = '` + strings.Repeat("a", 64) + `' WHERE seq = 2`}, 2},
		{"deleted entry", []string{`DELETE FROM audit_log WHERE seq = 3`}, 3},
		{"deleted first entry", []string{`DELETE FROM audit_log WHERE seq = 1`}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tamperedCopy(t, s, tc.stmts...)
			err := audit.Verify(ctx, c)
			var ce *audit.ChainError
			if !errors.As(err, &ce) {
				t.Fatalf("Verify = %v, want a *audit.ChainError", err)
			}
			if !errors.Is(err, audit.ErrChainBroken) {
				t.Errorf("Verify error %v is not ErrChainBroken", err)
			}
			if ce.Sequence != tc.wantSeq {
				t.Errorf("Verify names sequence %d (%v), want %d", ce.Sequence, err, tc.wantSeq)
			}
		})
	}
}

func TestConcurrentAppendsFormGapFreeChain(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(ctx, entry(w*each+i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Append: %v", err)
	}
	got := readAll(t, s, 0)
	if len(got) != workers*each {
		t.Fatalf("log has %d entries, want %d", len(got), workers*each)
	}
	ids := map[string]bool{}
	for i, e := range got {
		if e.Sequence != int64(i+1) {
			t.Fatalf("entry %d has sequence %d: the chain has a gap", i, e.Sequence)
		}
		if ids[e.ID] {
			t.Fatalf("duplicate id %s", e.ID)
		}
		ids[e.ID] = true
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestOpenRejectsUnsupportedURLs(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{
		"postgres://pgx:s3cret@db.internal:5432/audit?sslmode=require",
		"postgresql://pgx:s3cret@db.internal/audit",
		"mysql://root:s3cret@localhost/audit",
		"just-a-path.db",
		"sqlite:",
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
		if !strings.Contains(msg, "sqlite:PATH") {
			t.Errorf("Open(%q) error does not name the accepted forms: %s", u, msg)
		}
	}
	if _, err := Open(ctx, "", ""); !errors.Is(err, ErrConfig) {
		t.Errorf("Open without URL or data dir = %v, want ErrConfig", err)
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

func TestAppendAfterCloseFails(t *testing.T) {
	s, _ := openTemp(t)
	s.Close()
	if _, err := s.Append(context.Background(), entry(0)); err == nil {
		t.Fatal("Append after Close succeeded")
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Fatal("Ping after Close succeeded")
	}
}

func TestNewIDEncodesTime(t *testing.T) {
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
