package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/pgxsafety/pgxsafety/engine/service"
)

// The CDS Hooks feedback store (service.FeedbackStore). It lives beside the
// audit log and is configured by the same database URL (one parser:
// resolve): in PostgreSQL the table cds_feedback of the same database; in
// SQLite its own file FeedbackFileName beside the audit log's file, so that
// the feedback transaction, which appends the post's audit entry before it
// commits, never waits on the audit log's own write lock.

// FeedbackFileName is the SQLite file of CDS feedback in the data
// directory (beside the audit log's file when the audit log is SQLite).
const FeedbackFileName = "cds-feedback.db"

// FeedbackStore keeps CDS feedback in SQLite or PostgreSQL.
type FeedbackStore struct {
	db       *sqlx.DB
	bindType int
	// Location names where feedback is kept (a file path or "postgres").
	Location string
}

const feedbackSchema = `CREATE TABLE IF NOT EXISTS cds_feedback (
	feedback_key      TEXT PRIMARY KEY,
	service_id        TEXT NOT NULL,
	card_uuid         TEXT NOT NULL,
	outcome           TEXT NOT NULL,
	outcome_timestamp TEXT NOT NULL,
	item              TEXT NOT NULL,
	issuer            TEXT NOT NULL,
	received_at       TEXT NOT NULL
)`

// OpenFeedback opens (creating when needed) the feedback store of the
// audit log configured by databaseURL and dataDir (see Open).
func OpenFeedback(ctx context.Context, databaseURL, dataDir string) (*FeedbackStore, error) {
	d, target, err := resolve(databaseURL, dataDir)
	if err != nil {
		return nil, fmt.Errorf("feedback store: %w", err)
	}
	var dsn, location string
	bind := d.bindType
	switch d.name {
	case "sqlite":
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("feedback store: %w", err)
		}
		location = filepath.Join(dir, FeedbackFileName)
		dsn = location + "?" + sqlitePragmas(5*time.Second)
	default:
		dsn, location = target, "postgres"
	}
	driver := d.driver
	db, err := sqlx.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("feedback store: open: %w", redactErr(err))
	}
	s := &FeedbackStore{db: db, bindType: bind, Location: location}
	if _, err := db.ExecContext(ctx, feedbackSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("feedback store: create table: %w", redactErr(err))
	}
	if driver == "sqlite" {
		// Feedback names patients' cards: the database and its WAL files
		// are readable by the service account only.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Chmod(location+suffix, 0o600); err != nil && (suffix == "" || !errors.Is(err, os.ErrNotExist)) {
				db.Close()
				return nil, fmt.Errorf("feedback store: %w", err)
			}
		}
	}
	return s, nil
}

// Close closes the database.
func (s *FeedbackStore) Close() error { return s.db.Close() }

// StoreFeedback implements service.FeedbackStore.
func (s *FeedbackStore) StoreFeedback(ctx context.Context, recs []service.FeedbackItem, audit func(stored, duplicates int) error) (int, int, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("feedback store: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	q := sqlx.Rebind(s.bindType, `INSERT INTO cds_feedback
		(feedback_key, service_id, card_uuid, outcome, outcome_timestamp, item, issuer, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (feedback_key) DO NOTHING`)
	stored := 0
	for _, r := range recs {
		res, err := tx.ExecContext(ctx, q, r.Key, r.Service, r.Card, r.Outcome,
			r.OutcomeTimestamp.UTC().Format(time.RFC3339Nano), string(r.Item), r.Issuer, r.ReceivedAt.UTC().Format(time.RFC3339Nano))
		if err != nil {
			return 0, 0, fmt.Errorf("feedback store: insert: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, 0, fmt.Errorf("feedback store: %w", err)
		}
		stored += int(n)
	}
	dup := len(recs) - stored
	if err := audit(stored, dup); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("feedback store: commit: %w", err)
	}
	return stored, dup, nil
}

// Count returns how many feedback items are stored for a card (for tests
// and operations).
func (s *FeedbackStore) Count(ctx context.Context, card string) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, sqlx.Rebind(s.bindType, `SELECT COUNT(*) FROM cds_feedback WHERE card_uuid = ?`), card)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
