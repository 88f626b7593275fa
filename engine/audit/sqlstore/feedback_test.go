package sqlstore

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// feedbackStore is a Store seen through its feedback store.
type feedbackStore struct {
	*Store
	fb *FeedbackStore
}

func (f feedbackStore) AppendFeedback(ctx context.Context, items []service.FeedbackItem, entry func(int, int) (audit.Entry, error)) (audit.Entry, error) {
	return f.fb.AppendFeedback(ctx, items, entry)
}

func (f feedbackStore) Count(ctx context.Context, card string) (int, error) {
	return f.fb.Count(ctx, card)
}

func wrapFeedback(s *Store) audittest.FeedbackStore { return feedbackStore{Store: s, fb: s.Feedback()} }

func TestFeedbackConformanceSQLite(t *testing.T) {
	audittest.RunFeedback(t, audittest.FeedbackHarness{
		Open: func(t *testing.T) audittest.FeedbackStore {
			s, _ := openTemp(t)
			return wrapFeedback(s)
		},
		FailInserts: func(t *testing.T, s audittest.FeedbackStore, table string) {
			t.Helper()
			stmt := `CREATE TRIGGER test_fail_` + table + ` BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'test: inserts fail'); END`
			if _, err := s.(feedbackStore).db.ExecContext(context.Background(), stmt); err != nil {
				t.Fatal(err)
			}
		},
	})
}

// TestFeedbackConformancePostgres runs in a schema of its own (dropped
// after the test), so it leaves nothing in the database's public schema;
// the store connects as the least-privilege service role when
// PGXSAFETY_TEST_DATABASE_APP_USER is set.
func TestFeedbackConformancePostgres(t *testing.T) {
	base := postgresURL(t)
	owners := map[*Store]string{}
	audittest.RunFeedback(t, audittest.FeedbackHarness{
		Open: func(t *testing.T) audittest.FeedbackStore {
			owner := pgSchema(t, base)
			u, opts := serviceURL(t, owner, testOptions)
			s, err := OpenWith(context.Background(), u, "", opts)
			if err != nil {
				t.Fatalf("open PostgreSQL store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			owners[s] = owner
			return wrapFeedback(s)
		},
		FailInserts: func(t *testing.T, s audittest.FeedbackStore, table string) {
			t.Helper()
			db, err := sql.Open("pgx", owners[s.(feedbackStore).Store])
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, stmt := range []string{
				`CREATE FUNCTION test_fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: inserts fail'; END $$`,
				`CREATE TRIGGER test_fail_insert BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION test_fail_insert()`,
			} {
				if _, err := db.ExecContext(context.Background(), stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		},
	})
}
