package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/service"
)

// testFeedbackStore stores, de-duplicates and refuses to keep unaudited
// items.
func testFeedbackStore(t *testing.T, s *FeedbackStore) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	card := "card-" + t.Name()
	item := service.FeedbackItem{Key: card + "/overridden", Service: "pgx-order-select", Card: card,
		Outcome: "overridden", OutcomeTimestamp: at, Item: []byte(`{}`), Issuer: "i", ReceivedAt: at}
	ok := func(int, int) error { return nil }
	if st, dup, err := s.StoreFeedback(ctx, []service.FeedbackItem{item}, ok); err != nil || st != 1 || dup != 0 {
		t.Fatalf("first store: %d %d %v", st, dup, err)
	}
	if st, dup, err := s.StoreFeedback(ctx, []service.FeedbackItem{item}, ok); err != nil || st != 0 || dup != 1 {
		t.Fatalf("second store: %d %d %v", st, dup, err)
	}
	item2 := item
	item2.Key, item2.Outcome = card+"/accepted", "accepted"
	boom := errors.New("audit down")
	if _, _, err := s.StoreFeedback(ctx, []service.FeedbackItem{item2}, func(int, int) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("audit failure not returned: %v", err)
	}
	if n, err := s.Count(ctx, card); err != nil || n != 1 {
		t.Errorf("count = %d (%v), want 1: the unaudited item must not be stored", n, err)
	}
}

func TestFeedbackStoreSQLite(t *testing.T) {
	s, err := OpenFeedback(context.Background(), "", t.TempDir())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	testFeedbackStore(t, s)
}

// TestFeedbackStorePostgres runs in a schema of its own (dropped after
// the test), so it leaves nothing in the database's public schema.
func TestFeedbackStorePostgres(t *testing.T) {
	s, err := OpenFeedback(context.Background(), pgSchema(t, postgresURL(t)), "")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	testFeedbackStore(t, s)
}
