package cdshooks

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// FeedbackFileName is the SQLite file of CDS feedback in the data
// directory (beside the audit log's file when the audit log is SQLite).
const FeedbackFileName = "cds-feedback.db"

// FeedbackRecord is one stored feedback item.
type FeedbackRecord struct {
	// Key identifies the item: card uuid, outcome and outcome time.
	Key              string
	Service          string
	Card             string
	Outcome          string
	OutcomeTimestamp time.Time
	// Item is the feedback item as received (JSON).
	Item       []byte
	Issuer     string
	ReceivedAt time.Time
}

// FeedbackKey is the idempotency key of a feedback item: SHA-256 of the
// card uuid, the outcome and the outcome time in UTC.
func FeedbackKey(card, outcome string, at time.Time) string {
	h := sha256.Sum256([]byte(card + "\x00" + outcome + "\x00" + at.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h[:])
}

// FeedbackStore stores feedback items idempotently.
type FeedbackStore interface {
	// Store inserts the records not stored before, in one transaction,
	// then calls audit with the counts; the transaction commits only if
	// audit succeeds, so nothing is stored that is not audited.
	Store(ctx context.Context, recs []FeedbackRecord, audit func(stored, duplicates int) error) (stored, duplicates int, err error)
	Close() error
}

// SQLFeedbackStore keeps feedback in SQLite or PostgreSQL.
type SQLFeedbackStore struct {
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

// OpenFeedbackStore opens (creating when needed) the feedback store named
// by the audit log's database configuration: an empty URL means the SQLite
// file FeedbackFileName in dataDir, "sqlite:PATH" the file FeedbackFileName
// beside PATH, a postgres:// or postgresql:// URL the table cds_feedback in
// that database.
func OpenFeedbackStore(ctx context.Context, databaseURL, dataDir string) (*SQLFeedbackStore, error) {
	u := strings.TrimSpace(databaseURL)
	var driver, dsn, location string
	bind := sqlx.QUESTION
	switch {
	case u == "" || strings.HasPrefix(u, "sqlite:"):
		dir := dataDir
		if u != "" {
			p := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//")
			dir = filepath.Dir(p)
		}
		if strings.TrimSpace(dir) == "" {
			return nil, errors.New("feedback store: no data directory")
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("feedback store: %w", err)
		}
		location = filepath.Join(dir, FeedbackFileName)
		if strings.ContainsAny(location, "?#") {
			return nil, errors.New("feedback store: SQLite path must not contain '?' or '#'")
		}
		driver = "sqlite"
		dsn = location + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		driver, dsn, location, bind = "pgx", u, "postgres", sqlx.DOLLAR
	default:
		// The URL may hold a password: it is never echoed.
		return nil, errors.New("feedback store: unsupported database URL scheme (sqlite:PATH or postgres://… expected)")
	}
	db, err := sqlx.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("feedback store: open: %w", err)
	}
	s := &SQLFeedbackStore{db: db, bindType: bind, Location: location}
	if _, err := db.ExecContext(ctx, feedbackSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("feedback store: create table: %w", err)
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
func (s *SQLFeedbackStore) Close() error { return s.db.Close() }

// Store implements FeedbackStore.
func (s *SQLFeedbackStore) Store(ctx context.Context, recs []FeedbackRecord, audit func(stored, duplicates int) error) (int, int, error) {
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
func (s *SQLFeedbackStore) Count(ctx context.Context, card string) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, sqlx.Rebind(s.bindType, `SELECT COUNT(*) FROM cds_feedback WHERE card_uuid = ?`), card)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}
