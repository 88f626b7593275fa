// Package redisstore holds pgxsafety's Redis adapters. cmd builds one
// Redis client (NewClient) and hands it to both: the rate limiter's budget
// store (RateStore, an httpx.RateStore) and the CDS Hooks jti replay cache
// (ReplayCache, a cdshooks.ReplayCache). The surfaces never import Redis.
//
// Failure policy, one for every use of Redis: Redis is a shared cache
// between replicas, never a condition for starting (cmd pings it once and
// logs when it does not answer), and a Redis failure never loosens a
// check. An operation that fails returns its error and the caller falls
// back to the stricter side: the rate limiter enforces each caller's limit
// in the replica's memory until Redis answers again (shared budgets are
// lost, limits are not); the CDS replay check refuses the hook call with
// 503 (a token that may be a replay is never accepted). Operations time
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

// ReplayCache is the CDS jti replay cache shared by every replica through
// Redis.
type ReplayCache struct {
	c   *redis.Client
	now func() time.Time
}

// NewReplayCache returns a replay cache in rdb; now is the service clock.
func NewReplayCache(rdb *redis.Client, now func() time.Time) *ReplayCache {
	return &ReplayCache{c: rdb, now: now}
}

// Claim sets the key only if it does not exist (SET NX) with the remaining
// lifetime as its expiry; it reports false for a key already claimed.
func (r *ReplayCache) Claim(ctx context.Context, key string, until time.Time) (bool, error) {
	ttl := until.Sub(r.now())
	if ttl < time.Second {
		ttl = time.Second
	}
	return r.c.SetNX(ctx, replayKeyPrefix+key, 1, ttl).Result()
}

// Release deletes a claimed key (the call that claimed it gave no answer).
func (r *ReplayCache) Release(ctx context.Context, key string) error {
	return r.c.Del(ctx, replayKeyPrefix+key).Err()
}
