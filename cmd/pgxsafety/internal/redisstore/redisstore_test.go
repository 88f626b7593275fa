package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cmd/pgxsafety/internal/redisstore/redistest"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
	"github.com/redis/go-redis/v9"
)

// TestHungRedisReturnsErrors: against a Redis that accepts and never
// answers, every operation of the shared client returns an error (the
// callers then fail closed or fall back, see the package doc) instead of
// waiting on the caller's context, which here never ends.
func TestHungRedisReturnsErrors(t *testing.T) {
	rdb, err := NewClient(redistest.Hung(t))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Error("Ping of a hung Redis succeeded")
	}
	replay := NewReplayCache(rdb, time.Now)
	if ok, err := replay.Claim(ctx, "jti", time.Now().Add(time.Minute)); err == nil || ok {
		t.Errorf("Claim = %v, %v; want an error", ok, err)
	}
	if err := replay.Release(ctx, "jti"); err == nil {
		t.Error("Release succeeded")
	}
	rate := NewRateStore(rdb)
	if _, err := rate.AllowN(ctx, "k", httpx.Limit{Rate: 10, Burst: 10, Period: time.Minute}, 1); err == nil {
		t.Error("AllowN succeeded")
	}
}

// testClient connects to PGXSAFETY_TEST_REDIS_URL with the production
// client, skipping the test when it is unset and failing it when Redis
// does not answer.
func testClient(t *testing.T) *redis.Client {
	t.Helper()
	u := os.Getenv("PGXSAFETY_TEST_REDIS_URL")
	if u == "" {
		t.Skip("PGXSAFETY_TEST_REDIS_URL is not set: skipping the Redis tests (.ci/run sets it)")
	}
	rdb, err := NewClient(u)
	if err != nil {
		t.Fatalf("PGXSAFETY_TEST_REDIS_URL: %v", err)
	}
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at PGXSAFETY_TEST_REDIS_URL is set but unreachable: %v", err)
	}
	return rdb
}

func randomKey(t *testing.T, prefix string) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// TestSharedBudget: two replicas, each with its own client, share each
// caller's budget through one Redis. The limit is 60 per hour so that
// Redis's clock cannot refill a unit while the test runs; httpx's tests
// cover the limiter's arithmetic (the same GCRA, in memory).
func TestSharedBudget(t *testing.T) {
	stores := [2]*RateStore{NewRateStore(testClient(t)), NewRateStore(testClient(t))}
	lim := httpx.Limit{Rate: 60, Period: time.Hour, Burst: 60}
	ctx := context.Background()
	key := randomKey(t, "shared-")
	for i := 1; i <= 60; i++ {
		d, err := stores[i%2].AllowN(ctx, key, lim, 1)
		if err != nil || !d.Allowed || d.Remaining != 60-i {
			t.Fatalf("charge %d (replica %d) = %+v, %v; want allowed, %d remaining: the replicas do not share the budget", i, i%2, d, err, 60-i)
		}
	}
	for i, s := range stores {
		if d, err := s.AllowN(ctx, key, lim, 1); err != nil || d.Allowed || d.RetryAfter <= 0 {
			t.Errorf("61st charge on replica %d = %+v, %v; want refused with a retry time", i, d, err)
		}
	}
	if d, err := stores[0].AllowN(ctx, randomKey(t, "other-"), lim, 1); err != nil || !d.Allowed {
		t.Errorf("another caller = %+v, %v", d, err)
	}
}

// TestReplayShared: a jti claimed through one replica's client is a
// replay for another's; a released claim can be claimed again.
func TestReplayShared(t *testing.T) {
	a, b := NewReplayCache(testClient(t), time.Now), NewReplayCache(testClient(t), time.Now)
	ctx := context.Background()
	key := randomKey(t, "test-replay-")
	until := time.Now().Add(time.Minute)
	t.Cleanup(func() { _ = a.Release(ctx, key) })
	for i, c := range []*ReplayCache{a, b, a} {
		if ok, err := c.Claim(ctx, key, until); err != nil || ok != (i == 0) {
			t.Fatalf("claim %d = %v, %v; want %v", i, ok, err, i == 0)
		}
	}
	if err := a.Release(ctx, key); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Claim(ctx, key, until); err != nil || !ok {
		t.Errorf("claim after release = %v, %v; want true", ok, err)
	}
}

// TestSMARTStoreShared: a record put through one replica's client is read
// through another's, expires with its TTL, and is deleted once; keys
// outside the app's prefix are refused.
func TestSMARTStoreShared(t *testing.T) {
	a, b := NewSMARTStore(testClient(t)), NewSMARTStore(testClient(t))
	ctx := context.Background()
	key := randomKey(t, "pgxsafety:smart:test:")
	t.Cleanup(func() { _, _ = a.Delete(ctx, key) })
	if _, err := a.Get(ctx, key); !errors.Is(err, smart.ErrNoRecord) {
		t.Fatalf("missing key: %v, want smart.ErrNoRecord", err)
	}
	if err := a.Put(ctx, key, []byte{1, 0, 2}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, key); err != nil || string(got) != "\x01\x00\x02" {
		t.Fatalf("read on the other replica: %q, %v", got, err)
	}
	if ttl := a.c.PTTL(ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("TTL %v, want at most a minute", ttl)
	}
	for i, s := range []*SMARTStore{b, a} {
		if ok, err := s.Delete(ctx, key); err != nil || ok != (i == 0) {
			t.Errorf("delete %d = %v, %v; want %v (a state is used once)", i, ok, err, i == 0)
		}
	}
	if err := a.Put(ctx, "pgxsafety:cds:jti:x", nil, time.Minute); err == nil {
		t.Error("a key outside pgxsafety:smart: was written")
	}
}
