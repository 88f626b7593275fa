package cdshooks_test

import (
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx/redisstore"
)

// hungRedis listens on a loopback port, accepts every connection and never
// answers: a Redis that hangs. It returns the redis:// URL.
func hungRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "redis://" + ln.Addr().String() + "/0"
}

// TestRedisHangingReplayFailsClosed: with the shared Redis client
// (redisstore.NewClient, its short timeouts) pointed at a Redis that
// accepts and never answers, a hook call returns — 503, the replay check
// failing closed — and a second call with the same token is not refused
// as a replay once Redis answers nothing: it gets 503 again, not 401.
func TestRedisHangingReplayFailsClosed(t *testing.T) {
	rdb, err := redisstore.NewClient(hungRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	e := newEnv(t, func(c *cdshooks.Config, _ *[]cdshooks.TrustedClient) {
		c.Replay = redisstore.NewReplayCache(rdb, fixedClock)
	})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	tok := &token{rawToken: (&token{}).sign(t, selectPath)}
	for range 2 {
		problemOf(t, e.post(selectPath, body, tok), http.StatusServiceUnavailable)
	}
}
