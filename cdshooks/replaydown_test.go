package cdshooks_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks"
)

// downReplay is a replay cache (a test double) whose backend does not
// answer, as the Redis replay cache when Redis hangs (its own tests, in
// cmd/pgxsafety/internal/redisstore, show that it then returns errors).
type downReplay struct{}

func (downReplay) Claim(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("replay cache: backend down")
}

func (downReplay) Release(context.Context, string) error {
	return errors.New("replay cache: backend down")
}

// TestReplayCacheDownFailsClosed: when the replay cache cannot answer, a
// hook call returns 503 (the replay check failing closed), and a second
// call with the same token is not refused as a replay: it gets 503 again,
// not 401.
func TestReplayCacheDownFailsClosed(t *testing.T) {
	e := newEnv(t, func(c *cdshooks.Config, _ *[]cdshooks.TrustedClient) {
		c.Replay = downReplay{}
	})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	tok := &token{rawToken: (&token{}).sign(t, selectPath)}
	for range 2 {
		problemOf(t, e.post(selectPath, body, tok), http.StatusServiceUnavailable)
	}
}
