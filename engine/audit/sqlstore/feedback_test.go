package sqlstore

import (
	"context"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

func feedbackHarness(open func(t *testing.T) *Store) audittest.FeedbackHarness {
	return audittest.FeedbackHarness{Open: func(t *testing.T) (service.FeedbackStore, func(context.Context, string) (int, error)) {
		f := open(t).Feedback()
		return f, f.Count
	}}
}

func TestFeedbackConformanceSQLite(t *testing.T) {
	audittest.RunFeedback(t, feedbackHarness(func(t *testing.T) *Store {
		s, _ := openTemp(t)
		return s
	}))
}

// TestFeedbackConformancePostgres runs in a schema of its own (dropped
// after the test), so it leaves nothing in the database's public schema;
// the store connects as the least-privilege service role when
// PGXSAFETY_TEST_DATABASE_APP_USER is set.
func TestFeedbackConformancePostgres(t *testing.T) {
	base := postgresURL(t)
	audittest.RunFeedback(t, feedbackHarness(func(t *testing.T) *Store {
		u, opts := serviceURL(t, pgSchema(t, base), testOptions)
		s, err := OpenWith(context.Background(), u, "", opts)
		if err != nil {
			t.Fatalf("open PostgreSQL store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}))
}
