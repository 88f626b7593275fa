package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/service"
)

// FeedbackStore keeps CDS Hooks feedback in the table cds_feedback of the
// audit store's database (migration 0004). It implements
// service.FeedbackStore: nothing is stored that is not audited.
//
// PostgreSQL: the items are inserted in a transaction, the post's audit
// entry is appended, then the transaction commits (a failed append rolls
// the items back). SQLite has one writer at a time, and the audit writer
// needs it while the feedback transaction would hold it; so the audit
// entry is appended first, with the counts the insert will have (the
// feedback writes of the process are serialised), and the items are
// inserted after it is durable. Either way an item is stored only when its
// post is audited; on SQLite a failed insert after the entry leaves an
// entry whose items were not stored, and the caller gets the error.
type FeedbackStore struct {
	s  *Store
	mu sync.Mutex // SQLite: one feedback write at a time
}

// Feedback returns the store's CDS feedback store.
func (s *Store) Feedback() *FeedbackStore { return &FeedbackStore{s: s} }

const insertFeedback = `INSERT INTO cds_feedback
	(feedback_key, service_id, card_uuid, outcome, outcome_timestamp, item, issuer, received_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feedback_key) DO NOTHING`

// StoreFeedback implements service.FeedbackStore.
func (f *FeedbackStore) StoreFeedback(ctx context.Context, items []service.FeedbackItem, audit func(stored, duplicates int) error) (int, int, error) {
	if f.s.d.name == "sqlite" {
		return f.storeAuditFirst(ctx, items, audit)
	}
	tx, err := f.s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("feedback store: begin: %w", redactErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	stored := 0
	for _, it := range items {
		res, err := tx.ExecContext(ctx, f.s.q(insertFeedback), feedbackArgs(it)...)
		if err != nil {
			return 0, 0, fmt.Errorf("feedback store: insert: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, 0, fmt.Errorf("feedback store: %w", err)
		}
		stored += int(n)
	}
	dup := len(items) - stored
	if err := audit(stored, dup); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("feedback store: commit: %w", err)
	}
	return stored, dup, nil
}

func (f *FeedbackStore) storeAuditFirst(ctx context.Context, items []service.FeedbackItem, audit func(stored, duplicates int) error) (int, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var fresh []service.FeedbackItem
	for _, it := range items {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		var n int
		if err := f.s.db.GetContext(ctx, &n, f.s.q(`SELECT COUNT(*) FROM cds_feedback WHERE feedback_key = ?`), it.Key); err != nil {
			return 0, 0, fmt.Errorf("feedback store: %w", err)
		}
		if n == 0 {
			fresh = append(fresh, it)
		}
	}
	stored, dup := len(fresh), len(items)-len(fresh)
	if err := audit(stored, dup); err != nil {
		return 0, 0, err
	}
	tx, err := f.s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("feedback store: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, it := range fresh {
		if _, err := tx.ExecContext(ctx, f.s.q(insertFeedback), feedbackArgs(it)...); err != nil {
			return 0, 0, fmt.Errorf("feedback store: insert: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("feedback store: commit: %w", err)
	}
	return stored, dup, nil
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
