package cdshooks_test

import (
	"net/http"
	"testing"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx/redisstore"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx/redisstore/redistest"
)

// TestRedisHangingReplayFailsClosed: with the shared Redis client
// (redisstore.NewClient, its short timeouts) pointed at a Redis that
// accepts and never answers, a hook call returns — 503, the replay check
// failing closed — and a second call with the same token is not refused
// as a replay once Redis answers nothing: it gets 503 again, not 401.
func TestRedisHangingReplayFailsClosed(t *testing.T) {
	rdb, err := redisstore.NewClient(redistest.Hung(t))
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
