package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// ErrFault is returned (wrapped with audit.ErrUnavailable) once a storage
// fault was caught: SQLite maps its WAL index (the -shm file) into memory,
// and when the file cannot be written or grown (made immutable, its file
// system gone read-only or full) touching the mapping raises SIGBUS, which
// would kill the process. The store catches the fault in the goroutine
// that touched the mapping (debug.SetPanicOnFault), fails that call, and
// from then on refuses every call without touching the database again:
// answers get 503 and /readyz says why until the service is restarted.
var ErrFault = errors.New("audit store storage fault (memory-mapped file unavailable); restart the service once the storage is repaired")

// MinFreeBytes is the free space below which a SQLite store reports itself
// not ready: appends would soon fail with "disk full".
const MinFreeBytes = 64 << 20

// health is what the store knows of its own state beyond reachability.
type health struct {
	mu         sync.Mutex
	lastErr    error     // error of the last commit; nil when it committed
	lastAt     time.Time // when the last commit finished
	faultedErr error     // set once a storage fault was caught
}

// guard catches a memory fault raised while the caller's goroutine runs
// database code (see ErrFault) and turns it into *err. Use it as
// "defer s.guard(&err)()" at the top of every method that reaches the
// database. Other panics pass through.
func (s *Store) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		r := recover()
		debug.SetPanicOnFault(old)
		if r == nil {
			return
		}
		if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
			panic(r)
		}
		f := fmt.Errorf("%w: %w (%v)", audit.ErrUnavailable, ErrFault, r)
		s.health.mu.Lock()
		if s.health.faultedErr == nil {
			s.health.faultedErr = f
		}
		s.health.mu.Unlock()
		*err = f
	}
}

// faulted returns the caught storage fault, or nil.
func (s *Store) faulted() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.faultedErr
}

// recordCommit keeps the outcome of the last commit for Health.
func (s *Store) recordCommit(err error) {
	s.health.mu.Lock()
	s.health.lastErr, s.health.lastAt = err, time.Now()
	s.health.mu.Unlock()
}

// HealthRetry is how long after a failed commit Health keeps reporting it
// when nothing has been committed since. After that the store is judged
// by reachability and free space again, so a load balancer sends traffic
// back and the next commit shows whether the database recovered.
const HealthRetry = 10 * time.Second

// Health reports whether the store can take appends: it answers with its
// schema current (Ping), no storage fault was caught, the last commit did
// not fail (within HealthRetry), and, for SQLite, the file system holding
// the log has at least MinFreeBytes free.
func (s *Store) Health(ctx context.Context) error {
	if err := s.faulted(); err != nil {
		return err
	}
	if err := s.Ping(ctx); err != nil {
		return err
	}
	s.health.mu.Lock()
	lastErr, lastAt := s.health.lastErr, s.health.lastAt
	s.health.mu.Unlock()
	if lastErr != nil && time.Since(lastAt) < HealthRetry {
		return fmt.Errorf("audit store: the last commit failed at %s: %w", lastAt.UTC().Format(time.RFC3339), lastErr)
	}
	if s.d.name == "sqlite" {
		free, err := freeBytes(filepath.Dir(s.location))
		if err == nil && free < MinFreeBytes {
			return fmt.Errorf("audit store: only %d MiB free beside %s (at least %d MiB needed)", free>>20, s.location, MinFreeBytes>>20)
		}
	}
	return nil
}

// FreeBytes reports the free space of the file system holding a SQLite
// log (ok false for PostgreSQL, or when it cannot be read).
func (s *Store) FreeBytes() (free uint64, ok bool) {
	if s.d.name != "sqlite" {
		return 0, false
	}
	free, err := freeBytes(filepath.Dir(s.location))
	return free, err == nil
}
