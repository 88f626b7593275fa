// Package redistest holds test doubles of Redis for the tests of the
// packages that use redisstore. Only tests import it.
package redistest

import (
	"net"
	"sync"
	"testing"
)

// Hung listens on a loopback port, accepts every connection and never
// answers: a Redis that hangs. It returns the redis:// URL; the listener
// and the connections are closed when the test ends.
func Hung(t testing.TB) string {
	t.Helper()
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
	return "redis://" + ln.Addr().String() + "/0"
}
