package audittest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

// TestMemoryFeedback: the in-memory double keeps the feedback contract
// the SQL stores keep.
func TestMemoryFeedback(t *testing.T) {
	audittest.RunFeedback(t, audittest.FeedbackHarness{
		Open: func(t *testing.T) audittest.FeedbackStore { return audittest.NewMemory() },
		FailInserts: func(t *testing.T, s audittest.FeedbackStore, table string) {
			m := s.(*audittest.Memory)
			switch table {
			case "audit_log":
				m.Fail(errors.New("disk full"))
			case "cds_feedback":
				m.FailFeedback(errors.New("disk full"))
			default:
				t.Fatalf("unknown table %q", table)
			}
		},
	})
}

// TestMemoryChain: the in-memory log chains its entries as a store does,
// finds them by id, and refuses appends once closed.
func TestMemoryChain(t *testing.T) {
	ctx := context.Background()
	m := audittest.NewMemory()
	var ids []string
	for i := range 3 {
		e, err := m.Append(ctx, audittest.Entry(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if err := audit.Verify(ctx, m); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if e, err := m.Entry(ctx, ids[1]); err != nil || e.Sequence != 2 {
		t.Errorf("Entry(%s) = %d, %v", ids[1], e.Sequence, err)
	}
	if _, err := m.Entry(ctx, "aud_nope"); !errors.Is(err, audittest.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	_ = m.Close()
	if _, err := m.Append(ctx, audittest.Entry(9)); !errors.Is(err, audit.ErrUnavailable) {
		t.Errorf("append after Close: %v", err)
	}
	if m.Ping(ctx) == nil {
		t.Error("Ping after Close answered")
	}
}
