package sqlstore

import (
	"context"
	"fmt"
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
