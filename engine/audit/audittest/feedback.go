package audittest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// FeedbackStore is what the feedback cases exercise: a feedback store and
// the audit log it appends to.
type FeedbackStore interface {
	service.FeedbackStore
	audit.Appender
	audit.Reader
	// Count returns how many feedback items are stored for a card.
	Count(ctx context.Context, card string) (int, error)
}

// FeedbackHarness gives the feedback conformance cases a fresh store.
type FeedbackHarness struct {
	// Open returns an empty store whose database no other test shares.
	Open func(t *testing.T) FeedbackStore
	// FailInserts makes every later insert into table ("cds_feedback" or
	// "audit_log") of the store's database fail.
	FailInserts func(t *testing.T, s FeedbackStore, table string)
}

// feedbackItem is one feedback item on card with outcome.
func feedbackItem(card, outcome string) service.FeedbackItem {
	return service.FeedbackItem{Key: card + "/" + outcome, Service: "pgx-order-select", Card: card,
		Outcome: outcome, OutcomeTimestamp: T0, Item: []byte(`{}`), Issuer: "i", ReceivedAt: T0.Add(time.Second)}
}

// feedbackEntry returns an entry builder that records the counts it was
// given in got.
func feedbackEntry(got *[][2]int) func(stored, duplicates int) (audit.Entry, error) {
	return func(stored, duplicates int) (audit.Entry, error) {
		*got = append(*got, [2]int{stored, duplicates})
		e := Entry(len(*got))
		e.Endpoint = "POST /cds-services/pgx-order-select/feedback"
		return e, nil
	}
}

// RunFeedback runs the feedback conformance cases: items are stored once
// (by key), repeated items count as duplicates, and the items and the
// post's audit entry commit together or not at all, whichever fails.
func RunFeedback(t *testing.T, h FeedbackHarness) {
	ctx := context.Background()
	t.Run("StoredOnceAndAudited", func(t *testing.T) {
		s := h.Open(t)
		var counts [][2]int
		a := feedbackItem("card-a", "overridden")
		e, err := s.AppendFeedback(ctx, []service.FeedbackItem{a, a}, feedbackEntry(&counts))
		if err != nil {
			t.Fatalf("first post (one item twice): %v", err)
		}
		if _, err := s.AppendFeedback(ctx, []service.FeedbackItem{a}, feedbackEntry(&counts)); err != nil {
			t.Fatalf("second post: %v", err)
		}
		if d := diff([][2]int{{1, 1}, {0, 1}}, counts); d != "" {
			t.Errorf("counts (stored, duplicates) given to the entry (-want +got):\n%s", d)
		}
		entries := ReadAll(t, s, 0)
		if len(entries) != 2 || entries[0].ID != e.ID || !idPattern.MatchString(e.ID) || entries[0].Endpoint != e.Endpoint {
			t.Errorf("log holds %+v; want the two posts' entries, the first %s", entries, e.ID)
		}
		if n, err := s.Count(ctx, "card-a"); err != nil || n != 1 {
			t.Errorf("card-a has %d items (%v), want 1", n, err)
		}
	})
	t.Run("EntryFailsNoRows", func(t *testing.T) {
		s := h.Open(t)
		boom := errors.New("entry cannot be built")
		_, err := s.AppendFeedback(ctx, []service.FeedbackItem{feedbackItem("card-b", "accepted")},
			func(int, int) (audit.Entry, error) { return audit.Entry{}, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the entry's error", err)
		}
		wantNothing(t, s, "card-b")
	})
	t.Run("AppendFailsNoRows", func(t *testing.T) {
		s := h.Open(t)
		h.FailInserts(t, s, "audit_log")
		var counts [][2]int
		_, err := s.AppendFeedback(ctx, []service.FeedbackItem{feedbackItem("card-c", "accepted")}, feedbackEntry(&counts))
		if !errors.Is(err, audit.ErrUnavailable) {
			t.Fatalf("err = %v, want audit.ErrUnavailable", err)
		}
		if len(counts) != 1 {
			t.Errorf("entry built %d times, want once (after the insert)", len(counts))
		}
		wantNothing(t, s, "card-c")
	})
	t.Run("InsertFailsNoEntry", func(t *testing.T) {
		s := h.Open(t)
		h.FailInserts(t, s, "cds_feedback")
		var counts [][2]int
		_, err := s.AppendFeedback(ctx, []service.FeedbackItem{feedbackItem("card-d", "accepted")}, feedbackEntry(&counts))
		if err == nil {
			t.Fatal("a failed insert was not reported")
		}
		if errors.Is(err, audit.ErrUnavailable) {
			t.Errorf("err = %v: a failed insert of the items is not a failure of the log", err)
		}
		if len(counts) != 0 {
			t.Errorf("entry built %v after a failed insert", counts)
		}
		wantNothing(t, s, "card-d")
		// The log still takes entries.
		if _, err := s.Append(ctx, Entry(1)); err != nil {
			t.Errorf("append after a failed feedback insert: %v", err)
		}
	})
}

// wantNothing fails t when s holds an audit entry or a feedback item for
// card.
func wantNothing(t *testing.T, s FeedbackStore, card string) {
	t.Helper()
	if entries := ReadAll(t, s, 0); len(entries) != 0 {
		t.Errorf("log holds %d entries, want none", len(entries))
	}
	if n, err := s.Count(context.Background(), card); err != nil || n != 0 {
		t.Errorf("%s has %d items (%v), want none", card, n, err)
	}
}
