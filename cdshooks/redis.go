package cdshooks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisKeyPrefix prefixes every key pgxsafety's CDS surface writes to Redis.
const redisKeyPrefix = "pgxsafety:cds:jti:"

// redisReplay is the jti cache shared by every replica through Redis.
type redisReplay struct {
	c   *redis.Client
	now func() time.Time
}

// NewRedisReplayCache returns a ReplayCache in the Redis at url (a
// redis:// or rediss:// URL). The client is returned so it can be closed.
func NewRedisReplayCache(ctx context.Context, url string, now func() time.Time) (ReplayCache, *redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: it is not echoed.
		return nil, nil, fmt.Errorf("PGXSAFETY_REDIS_URL is not a valid redis:// URL")
	}
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	return &redisReplay{c: c, now: now}, c, nil
}

// Claim sets the key only if it does not exist (SET NX) with the remaining
// lifetime as its expiry.
func (r *redisReplay) Claim(ctx context.Context, key string, until time.Time) (bool, error) {
	ttl := until.Sub(r.now())
	if ttl < time.Second {
		ttl = time.Second
	}
	ok, err := r.c.SetNX(ctx, redisKeyPrefix+key, 1, ttl).Result()
	if err != nil {
		return false, err
	}
	return ok, nil
}
