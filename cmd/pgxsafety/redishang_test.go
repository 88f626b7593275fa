package main

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestServeWithHungRedis: a Redis that accepts connections and never
// answers neither stops the server from starting nor holds REST answers:
// the rate limiter falls back to the replica's memory (redisstore's
// failure policy) and /pgx/check answers.
func TestServeWithHungRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	clearEnv(t)
	t.Setenv("PGXSAFETY_REDIS_URL", "redis://"+ln.Addr().String()+"/0")
	dataDir := t.TempDir()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
		t.Fatalf("check with Redis hung: %d %s", rec.Code, rec.Body)
	}
}
