package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
)

// FeedbackStore keeps CDS Hooks feedback in the table cds_feedback of the
// audit store's database (migration 0004). It implements
// service.FeedbackStore: the audit writer inserts a post's items and
// appends its entry in one transaction of their own (on SQLite and
// PostgreSQL alike), so the rows and the entry commit together or neither
// does.
type FeedbackStore struct {
	s *Store
}

// Feedback returns the store's CDS feedback store.
func (s *Store) Feedback() *FeedbackStore { return &FeedbackStore{s: s} }

const insertFeedback = `INSERT INTO cds_feedback
	(feedback_key, service_id, card_uuid, outcome, outcome_timestamp, item, issuer, received_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feedback_key) DO NOTHING`

// feedbackWrite is the work of one feedback post for the writer.
type feedbackWrite struct {
	items []service.FeedbackItem
	entry func(stored, duplicates int) (audit.Entry, error)
}

// feedbackError is a failure of a post's own work (inserting its items,
// building its entry), not of the log: the writer returns the cause as is.
type feedbackError struct{ err error }

func (e *feedbackError) Error() string { return e.err.Error() }

// AppendFeedback implements service.FeedbackStore.
func (f *FeedbackStore) AppendFeedback(ctx context.Context, items []service.FeedbackItem, entry func(stored, duplicates int) (audit.Entry, error)) (audit.Entry, error) {
	return f.s.enqueue(ctx, &pending{fb: &feedbackWrite{items: items, entry: entry}, reply: make(chan appendResult, 1)})
}

// insertFeedback inserts the post's items in tx and returns its entry,
// built from the counts.
func (s *Store) insertFeedback(ctx context.Context, tx *sqlx.Tx, fb *feedbackWrite) (audit.Entry, error) {
	stored := 0
	for _, it := range fb.items {
		res, err := tx.ExecContext(ctx, s.q(insertFeedback), feedbackArgs(it)...)
		if err != nil {
			return audit.Entry{}, &feedbackError{fmt.Errorf("feedback store: insert: %w", redactErr(err))}
		}
		n, err := res.RowsAffected()
		if err != nil {
			return audit.Entry{}, &feedbackError{fmt.Errorf("feedback store: %w", err)}
		}
		stored += int(n)
	}
	e, err := fb.entry(stored, len(fb.items)-stored)
	if err != nil {
		return audit.Entry{}, &feedbackError{err}
	}
	if e.Time.IsZero() {
		return audit.Entry{}, &feedbackError{errors.New("audit store: entry has no time")}
	}
	return e, nil
}

func feedbackArgs(it service.FeedbackItem) []any {
	return []any{it.Key, it.Service, it.Card, it.Outcome, it.OutcomeTimestamp.UTC().Format(time.RFC3339Nano),
		string(it.Item), it.Issuer, it.ReceivedAt.UTC().Format(time.RFC3339Nano)}
}

// Count returns how many feedback items are stored for a card (for tests
// and operations).
func (f *FeedbackStore) Count(ctx context.Context, card string) (int, error) {
	var n int
	err := f.s.db.GetContext(ctx, &n, f.s.q(`SELECT COUNT(*) FROM cds_feedback WHERE card_uuid = ?`), card)
	return n, err
}
