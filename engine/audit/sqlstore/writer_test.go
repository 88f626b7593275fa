package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/s2"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// TestPostgresReplicasShareOneChain runs two stores (two replicas) on one
// PostgreSQL schema, each with many callers: every append must succeed and
// the log must be one chain. The pipelined append (appendPipelined) reads
// the chain head after taking the advisory lock; a head read before it
// would chain two replicas' batches to the same entry, and the second
// INSERT would fail on the sequence.
func TestPostgresReplicasShareOneChain(t *testing.T) {
	u, opts := serviceURL(t, pgSchema(t, postgresURL(t)), testOptions)
	opts.CommitTimeout = 10 * time.Second
	var stores [2]*Store
	for i := range stores {
		s, err := OpenWith(context.Background(), u, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	const callers, each = 8, 25
	var wg sync.WaitGroup
	for i := range callers * len(stores) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				if _, err := stores[i%len(stores)].Append(context.Background(), entry(i*each+j)); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := audittest.ReadAll(t, stores[0], 0)
	if len(got) != callers*len(stores)*each {
		t.Errorf("%d entries, want %d", len(got), callers*len(stores)*each)
	}
	if err := audit.Verify(context.Background(), stores[1]); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestPostgresRefusedInsertLeavesStoreUsable makes the database refuse one
// batch's INSERT: its callers get ErrUnavailable, nothing of it is stored,
// and the appends after it (on every pooled connection) chain on as if it
// had never been tried.
func TestPostgresRefusedInsertLeavesStoreUsable(t *testing.T) {
	owner := pgSchema(t, postgresURL(t))
	u, opts := serviceURL(t, owner, testOptions)
	s, err := OpenWith(context.Background(), u, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Append(ctx, entry(0)); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		`CREATE FUNCTION refuse_test_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.endpoint = 'refuse me' THEN
        RAISE EXCEPTION 'refused by the test';
    END IF;
    RETURN NEW;
END $$`,
		`CREATE TRIGGER refuse_test_entry BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_test_entry()`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	bad := entry(1)
	bad.Endpoint = "refuse me"
	if _, err := s.Append(ctx, bad); !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("refused append: %v, want ErrUnavailable", err)
	}
	var seqs []int64
	for i := range 12 { // more than the pool's connections
		e, err := s.Append(ctx, entry(2+i))
		if err != nil {
			t.Fatalf("append after the refusal: %v", err)
		}
		seqs = append(seqs, e.Sequence)
	}
	want := []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	if diff := cmp.Diff(want, seqs); diff != "" {
		t.Errorf("sequences after the refusal (-want +got):\n%s", diff)
	}
	for _, e := range audittest.ReadAll(t, s, 0) {
		if e.Endpoint == bad.Endpoint {
			t.Errorf("the refused entry was stored: %+v", e)
		}
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestSQLiteWriterJournalInMemory checks that the SQLite writer's own
// connection keeps its statement journal in memory (temp_store MEMORY, 2)
// while the pool's connections, which the purge uses, keep the default
// (0, a file past 64 KiB), and that appends still verify.
func TestSQLiteWriterJournalInMemory(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for i := range 3 {
		if _, err := s.Append(ctx, entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The writer is idle between appends: its connection is not in use.
	var writer, pool int
	if err := s.wconn.GetContext(ctx, &writer, `PRAGMA temp_store`); err != nil {
		t.Fatal(err)
	}
	c, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.GetContext(ctx, &pool, `PRAGMA temp_store`); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2, 0}, []int{writer, pool}); diff != "" {
		t.Errorf("temp_store of the writer's and a pooled connection (-want +got):\n%s", diff)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestSQLiteWriterReplacesItsConnection makes the writer's connection fail
// to begin (another connection holds the write lock past the busy
// timeout): that batch fails, the connection is discarded, and the next
// append takes a fresh one with temp_store MEMORY.
func TestSQLiteWriterReplacesItsConnection(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, entry(0)); err != nil {
		t.Fatal(err)
	}
	old := s.wconn
	c, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.BeginTxx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, entry(1)); !errors.Is(err, audit.ErrUnavailable) {
		t.Errorf("append while locked: %v, want ErrUnavailable", err)
	}
	tx.Rollback()
	c.Close()
	e, err := s.Append(ctx, entry(2))
	if err != nil {
		t.Fatalf("append after the lock: %v", err)
	}
	if e.Sequence != 2 {
		t.Errorf("sequence %d, want 2", e.Sequence)
	}
	if s.wconn == nil || s.wconn == old {
		t.Errorf("the writer kept its connection after a failed begin")
	}
	var mode int
	if err := s.wconn.GetContext(ctx, &mode, `PRAGMA temp_store`); err != nil || mode != 2 {
		t.Errorf("temp_store of the new writer connection: %d, %v; want 2", mode, err)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestPayloadsStoredCompressed checks migrations 0005 (SQLite) and 0006
// (PostgreSQL): a stored answer is kept as an S2 block, marked by
// payload_codec, smaller than given, and every read returns it as given.
func TestPayloadsStoredCompressed(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var s *Store
			var db *sql.DB
			var err error
			if backend == "sqlite" {
				dir := t.TempDir()
				if s, err = OpenWith(ctx, "", dir, testOptions); err != nil {
					t.Fatal(err)
				}
				db, err = sql.Open("sqlite", filepath.Join(dir, DBFileName))
			} else {
				owner := pgSchema(t, postgresURL(t))
				if s, err = OpenWith(ctx, owner, "", testOptions); err != nil {
					t.Fatal(err)
				}
				db, err = sql.Open("pgx", owner)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			defer db.Close()
			e := entry(0)
			for i := 0; len(e.Response) < 6000; i++ {
				e.Response = fmt.Appendf(e.Response, `{"drug":"clopidogrel","n":%d,"phenotype":"Poor Metabolizer"},`, i)
			}
			stored, err := s.Append(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			var codec sql.NullString
			var req, resp []byte
			q := `SELECT payload_codec, request, response FROM audit_log WHERE seq = ` + fmt.Sprint(stored.Sequence)
			if err := db.QueryRow(q).Scan(&codec, &req, &resp); err != nil {
				t.Fatal(err)
			}
			if codec.String != codecS2 || len(resp) >= len(e.Response)/2 {
				t.Errorf("stored payload_codec %q, response %d bytes of %d given: want s2, under half", codec.String, len(resp), len(e.Response))
			}
			if got, err := s2.Decode(nil, resp); err != nil || string(got) != string(e.Response) {
				t.Errorf("the stored response is not the answer as one S2 block: %v", err)
			}
			if got, err := s.Entry(ctx, stored.ID); err != nil || string(got.Response) != string(e.Response) || string(got.Request) != string(e.Request) {
				t.Errorf("Entry does not read the payloads back as given: %v", err)
			}
			all := readAll(t, s, 1)
			if len(all) != 1 || string(all[0].Response) != string(e.Response) || all[0].EntryHash != stored.EntryHash {
				t.Errorf("Entries does not read the payloads back as given")
			}
			if err := audit.Verify(ctx, s); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if backend == "postgres" {
				// 0006: the row of a real check answer (2.4 KB
				// compressed) stays in the table, no TOAST row.
				answer, err := os.ReadFile(filepath.Join("testdata", "check_answer.json"))
				if err != nil {
					t.Fatal(err)
				}
				real := entry(1)
				real.Response = answer
				if _, err := s.Append(ctx, real); err != nil {
					t.Fatal(err)
				}
				var toast string
				if err := db.QueryRow(`SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'audit_log'::regclass`).Scan(&toast); err != nil {
					t.Fatal(err)
				}
				var toasted int
				if err := db.QueryRow(`SELECT count(*) FROM ` + toast).Scan(&toasted); err != nil {
					t.Fatal(err)
				}
				if toasted != 0 {
					t.Errorf("%d TOAST chunks for rows of compressed answers; want none (toast_tuple_target 4080)", toasted)
				}
			}
			// Only the codecs a reader knows may be written.
			_, err = db.Exec(`INSERT INTO audit_log (seq, id, time, principal_subject, endpoint, request_id,
knowledge_version, request_digest, response_digest, prev_hash, entry_hash, committed_at, payload_codec)
VALUES (99, 'aud_x', 't', 's', 'e', 'r', 'k', 'd', 'd', 'p', 'h', 'c', 'zstd')`)
			if err == nil || !strings.Contains(err.Error(), "payload_codec") {
				t.Errorf("a row with payload_codec zstd: %v, want refused by its CHECK", err)
			}
		})
	}
}
