package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cmd/pgxsafety/internal/redisstore/redistest"
)

// TestServeWithHungRedis: a Redis that accepts connections and never
// answers neither stops the server from starting nor holds REST answers:
// the rate limiter falls back to the replica's memory (redisstore's
// failure policy) and /pgx/check answers.
func TestServeWithHungRedis(t *testing.T) {
	clearEnv(t)
	t.Setenv("PGXSAFETY_REDIS_URL", redistest.Hung(t))
	dataDir := t.TempDir()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
		t.Fatalf("check with Redis hung: %d %s", rec.Code, rec.Body)
	}
}
