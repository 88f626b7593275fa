package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx/redisstore/redistest"
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
