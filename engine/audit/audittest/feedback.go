package audittest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/service"
)

// FeedbackHarness gives the feedback conformance cases a fresh feedback
// store of the audit store under test.
type FeedbackHarness struct {
	// Open returns an empty feedback store and a function counting the
	// items stored for a card.
	Open func(t *testing.T) (service.FeedbackStore, func(ctx context.Context, card string) (int, error))
}

// RunFeedback runs the feedback conformance cases: items are stored once
// (by key), repeated items count as duplicates, and an item whose audit
// fails is not stored.
func RunFeedback(t *testing.T, h FeedbackHarness) {
	t.Run("StoredOnceAndAudited", func(t *testing.T) {
		s, count := h.Open(t)
		ctx := context.Background()
		at := T0
		item := func(card, outcome string) service.FeedbackItem {
			return service.FeedbackItem{Key: card + "/" + outcome, Service: "pgx-order-select", Card: card,
				Outcome: outcome, OutcomeTimestamp: at, Item: []byte(`{}`), Issuer: "i", ReceivedAt: at.Add(time.Second)}
		}
		var audited [][2]int
		ok := func(st, dup int) error { audited = append(audited, [2]int{st, dup}); return nil }
		a := item("card-a", "overridden")
		if st, dup, err := s.StoreFeedback(ctx, []service.FeedbackItem{a, a}, ok); err != nil || st != 1 || dup != 1 {
			t.Fatalf("first post (one item twice): stored %d duplicates %d, %v; want 1 and 1", st, dup, err)
		}
		if st, dup, err := s.StoreFeedback(ctx, []service.FeedbackItem{a}, ok); err != nil || st != 0 || dup != 1 {
			t.Fatalf("second post: stored %d duplicates %d, %v; want 0 and 1", st, dup, err)
		}
		if len(audited) != 2 || audited[0] != [2]int{1, 1} || audited[1] != [2]int{0, 1} {
			t.Errorf("audited counts %v, want [[1 1] [0 1]]", audited)
		}
		boom := errors.New("audit down")
		b := item("card-a", "accepted")
		if _, _, err := s.StoreFeedback(ctx, []service.FeedbackItem{b}, func(int, int) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("audit failure not returned: %v", err)
		}
		if n, err := count(ctx, "card-a"); err != nil || n != 1 {
			t.Errorf("card-a has %d items (%v), want 1: the unaudited item must not be stored", n, err)
		}
	})
}
