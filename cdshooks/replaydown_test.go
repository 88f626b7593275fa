package cdshooks_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks"
)

// downReplay is a replay cache (a test double) whose backend does not
// answer, as the Redis replay cache when Redis hangs (its own tests, in
// cmd/pgxsafety/internal/redisstore, show that it then returns errors).
type downReplay struct{}

func (downReplay) Claim(context.Context, string, time.Time, time.Time) (bool, error) {
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

// epochReplay is a replay cache (a test double) whose record began at
// since, as the Redis cache after it detected a loss: tokens issued before
// it are refused with an EpochError.
type epochReplay struct {
	since time.Time
	mem   cdshooks.ReplayCache
}

func (r epochReplay) Claim(ctx context.Context, key string, issued, until time.Time) (bool, error) {
	if issued.Before(r.since) {
		return false, &cdshooks.EpochError{Since: r.since}
	}
	return r.mem.Claim(ctx, key, issued, until)
}

func (r epochReplay) Release(ctx context.Context, key string) error { return r.mem.Release(ctx, key) }

// TestReplayEpochRefuses: a token issued before the replay cache's record
// began is refused with 401 naming why (a newly issued token is needed),
// never accepted as unused; one issued after it is answered.
func TestReplayEpochRefuses(t *testing.T) {
	since := fixedNow.Add(-5 * time.Second)
	e := newEnv(t, func(c *cdshooks.Config, _ *[]cdshooks.TrustedClient) {
		c.Replay = epochReplay{since: since, mem: cdshooks.NewMemoryReplayCache(func() time.Time { return fixedNow })}
	})
	body := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	p := problemOf(t, e.post(selectPath, body, &token{}), http.StatusUnauthorized)
	if !strings.Contains(p.Detail, "issued before") || !strings.Contains(p.Detail, "newly issued token") {
		t.Errorf("detail %q does not say the token predates the replay record", p.Detail)
	}
	after := &token{claims: map[string]any{"iat": since.Unix(), "jti": "after-epoch"}}
	if rec := e.post(selectPath, body, after); rec.Code != http.StatusOK {
		t.Errorf("token issued at the epoch: status %d: %s", rec.Code, rec.Body)
	}
}
