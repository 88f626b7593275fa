package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// nopAppender is the benchmark's "audit disabled": it assigns an id and
// stores nothing. It exists only in this test file: the product has no way
// to run unaudited.
type nopAppender struct{ n atomic.Int64 }

func (a *nopAppender) Append(_ context.Context, e audit.Entry) (audit.Entry, error) {
	e.ID = fmt.Sprintf("aud_NOP%022d", a.n.Add(1))
	return e, nil
}

// benchClients are the numbers of concurrent clients measured.
var benchClients = []int{4, 32}

// BenchmarkCheckLoopback measures POST /pgx/check over a real loopback
// listener through the whole production stack (token verification, rate
// limit, decoding, evaluation, audit, encoding), with 4 and with 32
// concurrent keep-alive clients sharing b.N requests. It reports
// requests/s, p50 and p95 latency as seen by the clients, and for durable
// audit the mean and largest group-commit batch. Sub-benchmarks, in one
// run: audit=sqlite (durable, synchronous FULL), audit=none (no-op
// appender, this file only), audit=postgres (when
// PGXSAFETY_TEST_DATABASE_URL is set). Run with a fixed count, e.g.
//
//	go test -run '^$' -bench BenchmarkCheckLoopback -benchtime 5000x ./cmd/pgxsafety
func BenchmarkCheckLoopback(b *testing.B) {
	for _, clients := range benchClients {
		for _, mode := range []string{"sqlite", "none", "postgres"} {
			b.Run(fmt.Sprintf("clients=%d/audit=%s", clients, mode), func(b *testing.B) { benchLoopback(b, mode, clients) })
		}
	}
}

func benchLoopback(b *testing.B, mode string, benchClients int) {
	for _, k := range platformEnv {
		b.Setenv(k, "")
	}
	b.Setenv("PGXSAFETY_RATE_LIMIT_PER_MINUTE", "100000000")
	dataDir := b.TempDir()
	if mode == "postgres" {
		// As deployed: the service role, migrated by the owner.
		b.Setenv("PGXSAFETY_DATABASE_URL", pgServiceURL(b, pgSchemaURL(b)))
		b.Setenv("PGXSAFETY_DATABASE_MIGRATE", "false")
	}
	var (
		batchMu  sync.Mutex
		batches  []int
		commitNs time.Duration
	)
	opts := serverOptions{storeOptions: func(o *sqlstore.Options) {
		prev := o.OnCommit
		o.OnCommit = func(st sqlstore.CommitStats) {
			prev(st)
			batchMu.Lock()
			batches = append(batches, st.Entries)
			commitNs += st.Duration
			batchMu.Unlock()
		}
	}}
	if mode == "none" {
		opts.appender = &nopAppender{}
	}
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	s, err := newServer(context.Background(), cfg, zap.NewNop(), io.Discard, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	// The transparency log runs as in serve, but signs a checkpoint every
	// second (serve: every 10 s), each with its tree sync and witness
	// consistency proof.
	cpCtx, stopCheckpoints := context.WithCancel(context.Background())
	cpDone := make(chan struct{})
	go func() { s.checkpoints.run(cpCtx, time.Second); close(cpDone) }()
	defer func() { stopCheckpoints(); <-cpDone }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: readHeaderTimeout}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	key, err := httpx.LoadOrCreateDevKey(dataDir)
	if err != nil {
		b.Fatal(err)
	}
	token, err := httpx.MintDevToken(key, "bench", time.Hour, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: benchClients, MaxIdleConnsPerHost: benchClients}}
	do := func() (time.Duration, error) {
		req, err := http.NewRequest(http.MethodPost, base+"/pgx/check", strings.NewReader(checkBody))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(start), err
	}
	// Warm up the connections.
	for range benchClients {
		if _, err := do(); err != nil {
			b.Fatal(err)
		}
	}
	batchMu.Lock()
	batches, commitNs = nil, 0
	batchMu.Unlock()

	latencies := make([][]time.Duration, benchClients)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				d, err := do()
				if err != nil {
					failed.Store(err)
					return
				}
				latencies[c] = append(latencies[c], d)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	pct := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(float64(len(all))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(0, "ns/op")
	batchMu.Lock()
	defer batchMu.Unlock()
	if len(batches) > 0 {
		total := 0
		for _, n := range batches {
			total += n
		}
		b.ReportMetric(float64(total)/float64(len(batches)), "entries/commit")
		b.ReportMetric(float64(slices.Max(batches)), "max-batch")
		b.ReportMetric(float64(len(batches)), "commits")
		b.ReportMetric(commitNs.Seconds()*1000/float64(len(batches)), "commit-ms")
	}
}
