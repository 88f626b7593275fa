package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks"
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
	replay := NewReplayCache(rdb, time.Now, 0)
	if ok, err := replay.Claim(ctx, "jti", time.Now(), time.Now().Add(time.Minute)); err == nil || ok {
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
	return testClientDB(t, -1)
}

// testClientDB is testClient on database db of the same Redis (the URL's
// own when db < 0).
func testClientDB(t *testing.T, db int) *redis.Client {
	t.Helper()
	u := os.Getenv("PGXSAFETY_TEST_REDIS_URL")
	if u == "" {
		t.Skip("PGXSAFETY_TEST_REDIS_URL is not set: skipping the Redis tests (.ci/run sets it)")
	}
	if db >= 0 {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatalf("PGXSAFETY_TEST_REDIS_URL: %v", err)
		}
		pu.Path = "/" + strconv.Itoa(db)
		u = pu.String()
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
	a, b := NewReplayCache(testClient(t), time.Now, 0), NewReplayCache(testClient(t), time.Now, 0)
	ctx := context.Background()
	key := randomKey(t, "test-replay-")
	until := time.Now().Add(time.Minute)
	// Issued after the epoch, whenever this Redis's record began.
	issued := time.Now().Add(time.Second)
	t.Cleanup(func() { _ = a.Release(ctx, key) })
	for i, c := range []*ReplayCache{a, b, a} {
		if ok, err := c.Claim(ctx, key, issued, until); err != nil || ok != (i == 0) {
			t.Fatalf("claim %d = %v, %v; want %v", i, ok, err, i == 0)
		}
	}
	if err := a.Release(ctx, key); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Claim(ctx, key, issued, until); err != nil || !ok {
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

// epochTestDB is the Redis database TestReplayAfterLoss flushes: no other
// test uses it (the test Redis is shared).
const epochTestDB = 11

// TestReplayAfterLoss: a jti used before Redis lost its record (FLUSHDB,
// as a restart without persistence leaves it; or a restart that reloaded
// an older snapshot, seen as another run_id in the epoch) is refused
// afterwards, as is every token issued before the loss was detected plus
// the skew; a token issued after that is claimed normally.
func TestReplayAfterLoss(t *testing.T) {
	rdb := testClientDB(t, epochTestDB)
	ctx := context.Background()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.FlushDB(context.Background()) })
	const skew = time.Minute
	now := time.Now().Truncate(time.Millisecond)
	clock := func() time.Time { return now }
	c := NewReplayCache(rdb, clock, skew)
	start, err := c.Open(ctx)
	if err != nil || !start.Equal(now) {
		t.Fatalf("Open = %v, %v; want the epoch at %v", start, err, now)
	}
	// Open again (another replica starting): the same epoch.
	now = now.Add(time.Second)
	if again, err := c.Open(ctx); err != nil || !again.Equal(start) {
		t.Fatalf("second Open = %v, %v; want %v", again, err, start)
	}

	wantEpoch := func(t *testing.T, key string, issued time.Time, since time.Time) {
		t.Helper()
		ok, err := c.Claim(ctx, key, issued, now.Add(5*time.Minute))
		var ee *cdshooks.EpochError
		if ok || !errors.As(err, &ee) || !ee.Since.Equal(since) {
			t.Fatalf("Claim(issued %v) = %v, %v; want an EpochError since %v", issued.Sub(since), ok, err, since)
		}
	}
	// A token issued before the epoch plus the skew is refused at once.
	wantEpoch(t, "early", start.Add(skew-time.Millisecond), start)

	now = start.Add(2 * time.Minute)
	issued := now.Add(-10 * time.Second)
	if ok, err := c.Claim(ctx, "used", issued, now.Add(5*time.Minute)); err != nil || !ok {
		t.Fatalf("first use = %v, %v", ok, err)
	}
	if ok, err := c.Claim(ctx, "used", issued, now.Add(5*time.Minute)); err != nil || ok {
		t.Fatalf("replay before the loss = %v, %v; want refused", ok, err)
	}

	// Redis loses everything.
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	lost := now
	wantEpoch(t, "used", issued, lost)
	// Any other token issued before the loss (plus the skew) is refused
	// too, on every replica, until it expires.
	other := NewReplayCache(testClientDB(t, epochTestDB), clock, skew)
	wantEpoch(t, "never-seen", lost.Add(skew-time.Second), lost)
	if ok, err := other.Claim(ctx, "never-seen", lost.Add(skew-time.Second), now.Add(5*time.Minute)); ok || err == nil {
		t.Fatalf("other replica: %v, %v; want an EpochError", ok, err)
	}
	now = lost.Add(skew + 5*time.Second)
	fresh := lost.Add(skew + time.Second)
	if ok, err := other.Claim(ctx, "fresh", fresh, now.Add(5*time.Minute)); err != nil || !ok {
		t.Fatalf("token issued after the loss = %v, %v; want claimed", ok, err)
	}
	if ok, err := c.Claim(ctx, "fresh", fresh, now.Add(5*time.Minute)); err != nil || ok {
		t.Fatalf("its replay = %v, %v; want refused", ok, err)
	}

	// A restart that reloads an older snapshot: the epoch names another
	// Redis process. The ids written since the snapshot may be gone, so
	// the record begins again.
	if err := rdb.Set(ctx, epochKey, strconv.FormatInt(start.UnixMilli(), 10)+":0123456789abcdef", 0).Err(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	reloaded := now
	wantEpoch(t, "fresh-2", fresh, reloaded)
}
