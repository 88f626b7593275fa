package sqlstore

import (
	"testing"
	"time"
)

// waitDeadline bounds every wait of these tests: a condition that never
// comes true fails the test instead of hanging it.
const waitDeadline = 30 * time.Second

// waitFor polls cond until it holds, failing the test (naming what was
// awaited) after waitDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", waitDeadline, what)
		}
		time.Sleep(time.Millisecond)
	}
}
