// Package redisstore holds pgxsafety's Redis adapters. cmd builds one
// Redis client (NewClient) and hands it to all three: the rate limiter's
// budget store (RateStore, an httpx.RateStore), the CDS Hooks jti replay
// cache (ReplayCache, a cdshooks.ReplayCache) and the SMART app's sealed
// launches and sessions (SMARTStore, a smart.SharedStore). The surfaces
// never import Redis.
//
// Failure policy, one for every use of Redis: Redis is a shared cache
// between replicas, never a condition for starting (cmd pings it once and
// logs when it does not answer), and a Redis failure never loosens a
// check. An operation that fails returns its error and the caller falls
// back to the stricter side: the rate limiter enforces each caller's limit
// in the replica's memory until Redis answers again (shared budgets are
// lost, limits are not); the CDS replay check refuses the hook call with
// 503 (a token that may be a replay is never accepted); a SMART launch or
// review answers 503 (a session kept in one replica's memory would not be
// found by the others). Operations time
// out quickly (DialTimeout, ReadTimeout, WriteTimeout below), so a Redis
// outage slows no answer by more than about a second.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Client timeouts (see the failure policy).
const (
	DialTimeout  = time.Second
	ReadTimeout  = 500 * time.Millisecond
	WriteTimeout = 500 * time.Millisecond
)

// ErrURL is returned for a URL that is not a redis:// or rediss:// URL.
// The URL is never quoted: it may hold a password.
var ErrURL = errors.New("not a redis:// or rediss:// URL")

// NewClient returns a client for the Redis at url with the timeouts of the
// failure policy. It does not dial.
func NewClient(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, ErrURL
	}
	opt.DialTimeout = DialTimeout
	opt.ReadTimeout = ReadTimeout
	opt.WriteTimeout = WriteTimeout
	opt.MaxRetries = 1
	opt.DialerRetries = 1
	opt.DialerRetryTimeout = 10 * time.Millisecond
	return redis.NewClient(opt), nil
}

// RateStore keeps rate-limit budgets in Redis (GCRA by redis_rate), so
// every replica configured with the same Redis shares one budget per
// caller. It uses the Redis server's clock.
type RateStore struct {
	limiter *redis_rate.Limiter
}

// NewRateStore returns a budget store using rdb.
func NewRateStore(rdb *redis.Client) *RateStore {
	return &RateStore{limiter: redis_rate.NewLimiter(rdb)}
}

// AllowN implements httpx.RateStore.
func (s *RateStore) AllowN(ctx context.Context, key string, l httpx.Limit, n int) (httpx.Decision, error) {
	if l.Rate <= 0 || l.Burst <= 0 || l.Period <= 0 || n <= 0 {
		return httpx.Decision{}, fmt.Errorf("rate limit: invalid limit %+v or cost %d", l, n)
	}
	res, err := s.limiter.AllowN(ctx, key, redis_rate.Limit{Rate: l.Rate, Burst: l.Burst, Period: l.Period}, n)
	if err != nil {
		return httpx.Decision{}, fmt.Errorf("rate limit: redis: %w", err)
	}
	d := httpx.Decision{Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: res.ResetAfter}
	if !d.Allowed {
		d.RetryAfter = res.RetryAfter
	}
	return d, nil
}

// replayKeyPrefix prefixes every key of the CDS replay cache.
const replayKeyPrefix = "pgxsafety:cds:jti:"

// epochKey holds the replay cache's epoch: "<unix ms>:<Redis run_id>",
// when the record of used token ids began and which Redis process holds
// it. It has no expiry.
const epochKey = "pgxsafety:cds:epoch"

// claimScript checks the epoch, then claims the jti (when KEYS[2] is
// given). The record is lost, and a new epoch begins at ARGV[1], when the
// epoch key is missing (a Redis restarted without persistence, FLUSHDB,
// FLUSHALL, an eviction, a failover to an empty node) or names another
// Redis process (a restart that reloaded an older snapshot, a failover to
// a replica: ids written after the snapshot may be gone). A token issued
// (ARGV[2]) before the epoch plus the skew (ARGV[4]) is refused: it may
// have been used before the loss. Replies {state, epoch ms}: state 1
// claimed, 0 already claimed (a replay), 2 issued before the epoch.
var claimScript = redis.NewScript(`
local runid = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
local e = redis.call('GET', KEYS[1])
local ms, rid
if e then ms, rid = string.match(e, '^(%d+):(%x*)$') end
if not ms or rid ~= runid then
  ms = ARGV[1]
  redis.call('SET', KEYS[1], ms .. ':' .. runid)
end
ms = tonumber(ms)
if #KEYS < 2 then return {1, ms} end
if tonumber(ARGV[2]) < ms + tonumber(ARGV[4]) then return {2, ms} end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return {1, ms} end
return {0, ms}
`)

// ReplayCache is the CDS jti replay cache shared by every replica through
// Redis. It detects the loss of its own record (see claimScript) and then
// refuses the tokens issued before the loss (cdshooks.EpochError).
type ReplayCache struct {
	c    *redis.Client
	now  func() time.Time
	skew time.Duration
}

// NewReplayCache returns a replay cache in rdb; now is the service clock
// and skew the clock skew the token checks allow (cdshooks.ClockSkew).
func NewReplayCache(rdb *redis.Client, now func() time.Time, skew time.Duration) *ReplayCache {
	return &ReplayCache{c: rdb, now: now, skew: skew}
}

// Open writes the epoch when Redis holds none (or one of another Redis
// process) and returns when the record began. serve calls it at start;
// Claim checks the epoch again on every call, so a loss after Open is
// detected too.
func (r *ReplayCache) Open(ctx context.Context) (time.Time, error) {
	_, since, err := r.run(ctx, []string{epochKey}, r.now(), 0)
	return since, err
}

// Claim checks the epoch and sets the key only if it does not exist (SET
// NX) with the remaining lifetime as its expiry; it reports false for a
// key already claimed and a *cdshooks.EpochError for a token issued
// before the epoch (plus the skew).
func (r *ReplayCache) Claim(ctx context.Context, key string, issued, until time.Time) (bool, error) {
	now := r.now()
	ttl := until.Sub(now)
	if ttl < time.Second {
		ttl = time.Second
	}
	state, since, err := r.run(ctx, []string{epochKey, replayKeyPrefix + key}, issued, ttl)
	switch {
	case err != nil:
		return false, err
	case state == 2:
		return false, &cdshooks.EpochError{Since: since}
	}
	return state == 1, nil
}

// run runs claimScript and returns its state and epoch.
func (r *ReplayCache) run(ctx context.Context, keys []string, issued time.Time, ttl time.Duration) (int64, time.Time, error) {
	res, err := claimScript.Run(ctx, r.c, keys, r.now().UnixMilli(), issued.UnixMilli(), ttl.Milliseconds(), r.skew.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("replay cache: redis: %w", err)
	}
	if len(res) != 2 {
		return 0, time.Time{}, fmt.Errorf("replay cache: redis: unexpected reply %v", res)
	}
	return res[0], time.UnixMilli(res[1]), nil
}

// Release deletes a claimed key (the call that claimed it gave no answer).
func (r *ReplayCache) Release(ctx context.Context, key string) error {
	return r.c.Del(ctx, replayKeyPrefix+key).Err()
}

// smartKeyPrefix is checked on every key of the SMART store (the app
// names its keys pgxsafety:smart:...).
const smartKeyPrefix = "pgxsafety:smart:"

// SMARTStore keeps the SMART review app's sealed launches and sessions in
// Redis (a smart.SharedStore), so every replica reaches them. Failures
// return their error: the app answers 503 and keeps nothing elsewhere.
type SMARTStore struct{ c *redis.Client }

// NewSMARTStore returns the SMART store in rdb.
func NewSMARTStore(rdb *redis.Client) *SMARTStore { return &SMARTStore{c: rdb} }

func checkSMARTKey(key string) error {
	if len(key) <= len(smartKeyPrefix) || key[:len(smartKeyPrefix)] != smartKeyPrefix {
		return fmt.Errorf("smart store: key outside %s", smartKeyPrefix)
	}
	return nil
}

// Put stores rec under key with ttl as its expiry (SET PX).
func (s *SMARTStore) Put(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	if err := checkSMARTKey(key); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	if err := s.c.Set(ctx, key, rec, ttl).Err(); err != nil {
		return fmt.Errorf("smart store: redis: %w", err)
	}
	return nil
}

// Get returns the record of key, or smart.ErrNoRecord (as errNoRecord).
func (s *SMARTStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkSMARTKey(key); err != nil {
		return nil, err
	}
	b, err := s.c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, smart.ErrNoRecord
	}
	if err != nil {
		return nil, fmt.Errorf("smart store: redis: %w", err)
	}
	return b, nil
}

// Delete removes key (DEL) and reports whether this call removed it.
func (s *SMARTStore) Delete(ctx context.Context, key string) (bool, error) {
	if err := checkSMARTKey(key); err != nil {
		return false, err
	}
	n, err := s.c.Del(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("smart store: redis: %w", err)
	}
	return n == 1, nil
}
