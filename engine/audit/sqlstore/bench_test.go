package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// BenchmarkAppend measures durable appends through the group-commit writer
// to SQLite with 32 concurrent callers: the audit cost of one answer;
// "sqlite-window=2ms" with a 2 ms commit window (Options.CommitWindow);
// "sqlite-6KB" with a response of the size of a /pgx/check answer (6 KB;
// the other cases carry a few bytes). cpu-us/op is the process's CPU time
// (user and system, from getrusage: the callers, the writer and SQLite)
// per append, which the machine's load changes less than ns/op.
func BenchmarkAppend(b *testing.B) {
	backends := map[string]Options{
		"sqlite":            {},
		"sqlite-window=2ms": {CommitWindow: 2 * time.Millisecond},
		"sqlite-6KB":        {},
	}
	for name, opts := range backends {
		var payload []byte
		if strings.HasSuffix(name, "-6KB") {
			// Distinct text, as answers are: not a run compression would erase.
			for i := 0; len(payload) < 6000; i++ {
				payload = fmt.Appendf(payload, `{"gene":"CYP2C19","n":%d,"text":"recommendation %d"},`, i, i*7919)
			}
		}
		b.Run(name, func(b *testing.B) {
			var commits atomic.Int64
			opts.OnCommit = func(CommitStats) { commits.Add(1) }
			s, err := OpenWith(context.Background(), "", b.TempDir(), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			const clients = 32
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime(b)
			var wg sync.WaitGroup
			var next int64
			var mu sync.Mutex
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= int64(b.N) {
							return
						}
						e := audittest.Entry(int(i))
						e.Time = time.Now()
						if payload != nil {
							e.Response = payload
						}
						if _, err := s.Append(ctx, e); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
			b.ReportMetric(float64(b.N)/float64(max(commits.Load(), 1)), "entries/commit")
		})
	}
}

// BenchmarkCommit measures the writer's work for one group commit of a
// fixed number of entries (one op is one commit; cpu-us/entry divides by
// the entries): BEGIN, the chain head, the hashes, the INSERT and the
// durable COMMIT, without the callers and the queue, so its instruction
// count is the same on every run (valgrind --tool=callgrind). A /pgx/check
// answer under load commits about 4.5 entries at a time; "-6KB" carries a
// response of that answer's size. The postgres cases run when
// PGXSAFETY_TEST_DATABASE_URL is set, as the service role when
// PGXSAFETY_TEST_DATABASE_APP_USER is; their CPU is this process's only
// (the server is another process).
func BenchmarkCommit(b *testing.B) {
	var payload []byte
	for i := 0; len(payload) < 6000; i++ {
		payload = fmt.Appendf(payload, `{"gene":"CYP2C19","n":%d,"text":"recommendation %d"},`, i, i*7919)
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 4, 16} {
			for _, big := range []bool{false, true} {
				name := fmt.Sprintf("%s/entries=%d", backend, n)
				if big {
					name += "-6KB"
				}
				b.Run(name, func(b *testing.B) {
					s := openBenchStore(b, backend)
					defer s.Close()
					batch := make([]*pending, n)
					next := 0
					b.ResetTimer()
					cpu0 := cpuTime(b)
					for range b.N {
						for j := range batch {
							e := audittest.Entry(next)
							next++
							e.Time = time.Now()
							if big {
								e.Response = payload
							}
							// The writer goroutine is idle (nothing is
							// queued): this goroutine stands in for it,
							// and for the callers' share of Append.
							e = s.payloadsAsStored(e)
							batch[j] = &pending{e: e, body: audit.CanonicalBody(e), reply: make(chan appendResult, 1)}
						}
						s.commit(batch)
						for _, p := range batch {
							if r := <-p.reply; r.err != nil {
								b.Fatal(r.err)
							}
						}
					}
					b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N*n), "cpu-us/entry")
				})
			}
		}
	}
}

// openBenchStore opens a fresh store of the backend ("sqlite" or
// "postgres", the latter skipped without PGXSAFETY_TEST_DATABASE_URL).
func openBenchStore(b *testing.B, backend string) *Store {
	b.Helper()
	u, opts := "", Options{}
	if backend == "postgres" {
		u, opts = serviceURL(b, pgSchema(b, postgresURL(b)), opts)
	}
	s, err := OpenWith(context.Background(), u, b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// largeLogRows is the log size BenchmarkCommitLargeLog writes into: a few
// months of a busy service, where an index with random keys no longer fits
// the page cache of one commit.
const largeLogRows = 300_000

var (
	largeLogOnce sync.Once
	largeLogFile string
	largeLogErr  error
)

// largeLogTemplate writes, once per process, an SQLite log of largeLogRows
// entries without payloads (the payload pages of old entries are never
// touched again; the indexes are), with random hashes and request ids of
// the two forms (random, and time-first as httpx.NewRequestID writes them).
// Each benchmark copies it.
func largeLogTemplate(b *testing.B) string {
	largeLogOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pgxsafety-largelog-")
		if err != nil {
			largeLogErr = err
			return
		}
		s, err := OpenWith(context.Background(), "", dir, Options{})
		if err != nil {
			largeLogErr = err
			return
		}
		defer s.Close()
		tx, err := s.db.Begin()
		if err != nil {
			largeLogErr = err
			return
		}
		defer tx.Rollback()
		st, err := tx.Prepare(`INSERT INTO audit_log (` + insertColumns + `, committed_at) VALUES (` +
			strings.TrimSuffix(strings.Repeat("?, ", insertArity), ", ") + `, 'prefill')`)
		if err != nil {
			largeLogErr = err
			return
		}
		t0 := audittest.T0
		for i := 1; i <= largeLogRows; i++ {
			e := audittest.Entry(i)
			e.Sequence = int64(i)
			e.ID, _ = newID(e.Time)
			e.RequestID = benchRequestID(i%2 == 0, t0.Add(time.Duration(i)*time.Millisecond))
			e.PrevHash, e.EntryHash = randomHex(32), randomHex(32)
			if _, err := st.Exec(insertArgs(e, storedPayloads{})...); err != nil {
				largeLogErr = err
				return
			}
		}
		if largeLogErr = tx.Commit(); largeLogErr == nil {
			_, largeLogErr = s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		largeLogFile = filepath.Join(dir, DBFileName)
	})
	if largeLogErr != nil {
		b.Fatal(largeLogErr)
	}
	return largeLogFile
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// benchRequestID is a request id as httpx.NewRequestID writes it
// (timeFirst) or as it did before (random).
func benchRequestID(timeFirst bool, t time.Time) string {
	if !timeFirst {
		return "req_" + randomHex(16)
	}
	return fmt.Sprintf("req_%012x%s", t.UnixMilli(), randomHex(10))
}

// BenchmarkCommitLargeLog measures the writer's work per entry (like
// BenchmarkCommit: commits of 4 entries, cpu-us/entry) on an SQLite log
// that already holds largeLogRows entries, with a real /pgx/check request
// and answer (testdata). "as-built" is the store as it is; "before-0005"
// puts back what migration 0005_lean_log and the time-first request ids
// removed: a UNIQUE index on entry_hash, random request ids and payloads
// stored as given.
func BenchmarkCommitLargeLog(b *testing.B) {
	req, err := os.ReadFile(filepath.Join("testdata", "check_request.json"))
	if err != nil {
		b.Fatal(err)
	}
	answer, err := os.ReadFile(filepath.Join("testdata", "check_answer.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, before := range []bool{false, true} {
		name := "as-built"
		if before {
			name = "before-0005"
		}
		b.Run(name, func(b *testing.B) {
			tmpl := largeLogTemplate(b)
			dir := b.TempDir()
			data, err := os.ReadFile(tmpl)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, DBFileName), data, 0o600); err != nil {
				b.Fatal(err)
			}
			s, err := OpenWith(context.Background(), "", dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if before {
				if _, err := s.db.Exec(`CREATE UNIQUE INDEX audit_log_entry_hash_before_0005 ON audit_log (entry_hash)`); err != nil {
					b.Fatal(err)
				}
			}
			const n = 4
			batch := make([]*pending, n)
			next := largeLogRows + 1
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for range b.N {
				for j := range batch {
					e := audittest.Entry(next)
					next++
					e.Time = time.Now()
					e.RequestID = benchRequestID(!before, e.Time)
					e.Request, e.Response = req, answer
					e = s.payloadsAsStored(e)
					rows := encodePayloads(e)
					if before {
						rows = storedPayloads{request: e.Request, response: e.Response}
					}
					batch[j] = &pending{e: e, body: audit.CanonicalBody(e), rows: rows, reply: make(chan appendResult, 1)}
				}
				s.commit(batch)
				for _, p := range batch {
					if r := <-p.reply; r.err != nil {
						b.Fatal(r.err)
					}
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N*n), "cpu-us/entry")
		})
	}
}
