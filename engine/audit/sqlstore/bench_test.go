package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// BenchmarkAppend measures durable appends through the group-commit writer
// to SQLite with 32 concurrent callers: the audit cost of one answer;
// "sqlite-window=2ms" with a 2 ms commit window (Options.CommitWindow);
// "sqlite-6KB" with a response of the size of a /pgx/check answer (6 KB;
// the other cases carry a few bytes).
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
			start := time.Now()
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
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
			b.ReportMetric(float64(b.N)/float64(max(commits.Load(), 1)), "entries/commit")
		})
	}
}
