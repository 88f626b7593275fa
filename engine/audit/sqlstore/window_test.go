package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// withCommitWindow sets testOptions.CommitWindow for the rest of the test.
func withCommitWindow(t *testing.T, w time.Duration) {
	old := testOptions
	testOptions.CommitWindow = w
	t.Cleanup(func() { testOptions = old })
}

// The conformance suites hold with a commit window too.
func TestConformanceSQLiteCommitWindow(t *testing.T) {
	withCommitWindow(t, 2*time.Millisecond)
	audittest.Run(t, sqliteHarness())
}

func TestConformancePostgresCommitWindow(t *testing.T) {
	u := postgresURL(t)
	withCommitWindow(t, 2*time.Millisecond)
	audittest.Run(t, postgresHarness(u))
}

// TestCommitWindowGrowsBusyBatches: with a commit window, a batch that
// found more than one entry queued waits for more (here until MaxBatch,
// the window being a minute), while a lone entry is committed at once.
// Every Append still returns its committed entry.
func TestCommitWindowGrowsBusyBatches(t *testing.T) {
	ctx := context.Background()
	var (
		mu      sync.Mutex
		batches []int
	)
	hold := make(chan struct{})
	opts := testOptions
	opts.MaxBatch = 5
	opts.CommitWindow = time.Minute
	opts.OnCommit = func(st CommitStats) {
		mu.Lock()
		batches = append(batches, st.Entries)
		n := len(batches)
		mu.Unlock()
		if st.Err != nil {
			t.Errorf("commit failed: %v", st.Err)
		}
		if n == 1 {
			<-hold
		}
	}
	s, err := OpenWith(ctx, "", t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	appendAsync := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := s.Append(ctx, entry(i))
			if err != nil || e.EntryHash == "" {
				t.Errorf("Append %d: %v, %+v", i, err, e)
			}
		}()
	}
	nBatches := func() int { mu.Lock(); defer mu.Unlock(); return len(batches) }
	appendAsync(0) // alone: committed without waiting for the window
	waitFor(t, "the writer to commit the first entry", func() bool { return nBatches() == 1 })
	appendAsync(1)
	appendAsync(2)
	waitFor(t, "two appends to queue", func() bool { return len(s.queue) == 2 })
	close(hold)
	// The writer takes both and, busy, waits for more.
	waitFor(t, "the writer to take the queued appends", func() bool { return len(s.queue) == 0 })
	for i := 3; i < 6; i++ {
		appendAsync(i)
	}
	wg.Wait()
	if _, err := s.Append(ctx, entry(6)); err != nil { // alone again
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]int{1, 5, 1}, batches); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
	if err := audit.Verify(ctx, s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
