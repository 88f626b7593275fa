package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// BenchmarkAppend measures durable appends through the group-commit writer
// to SQLite with 32 concurrent callers: the audit cost of one answer.
func BenchmarkAppend(b *testing.B) {
	backends := map[string]func(b *testing.B) *Store{
		"sqlite": func(b *testing.B) *Store {
			s, err := OpenWith(context.Background(), "", b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
	}
	for name, open := range backends {
		b.Run(name, func(b *testing.B) {
			s := open(b)
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
						if _, err := s.Append(ctx, e); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
		})
	}
}
