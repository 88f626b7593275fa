package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// ErrRetention is returned by Purge for a cutoff that would remove entries
// younger than MinRetention.
var ErrRetention = errors.New("purge would remove entries inside the retention period")

// PurgeResult reports one purge.
type PurgeResult struct {
	// Removed is the number of entries removed (0 when nothing expired).
	Removed int64
	// Checkpoint is the checkpoint the purge recorded; zero when Removed
	// is 0.
	Checkpoint audit.Checkpoint
}

// Purge removes the expired head of the chain: every entry from the
// oldest up to (not including) the first entry whose time is at or after
// cutoff. It records a checkpoint holding the sequence, hash and time of
// the last removed entry in the same transaction, so the entries that
// remain still verify (audit.VerifyChain starts from the checkpoint) and
// new entries keep chaining after a purge that emptied the log.
//
// Purge is the only way entries leave the log. cutoff must be at least
// MinRetention before Options.Now; the database enforces the same floor
// with its own clock (its triggers refuse a checkpoint covering an entry
// younger than 365 days, and refuse to delete an entry no checkpoint
// covers). Entries are removed as a prefix of the chain, so an entry older
// than cutoff that follows a younger one (clock skew between replicas)
// waits for the next purge.
func (s *Store) Purge(ctx context.Context, cutoff time.Time) (PurgeResult, error) {
	now := s.opts.Now()
	if cutoff.After(now.Add(-MinRetention)) {
		return PurgeResult{}, fmt.Errorf("%w: cutoff %s is later than %s (retention %d days)",
			ErrRetention, cutoff.UTC().Format(time.RFC3339), now.Add(-MinRetention).UTC().Format(time.RFC3339), int(MinRetention.Hours()/24))
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	defer tx.Rollback()

	var first, firstKept sql.NullInt64
	if err := tx.GetContext(ctx, &first, `SELECT MIN(seq) FROM audit_log`); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	if !first.Valid {
		return PurgeResult{}, nil // empty log
	}
	if err := tx.GetContext(ctx, &firstKept, s.q(`SELECT MIN(seq) FROM audit_log WHERE time >= ?`), formatStoredTime(cutoff)); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	var through int64
	if firstKept.Valid {
		through = firstKept.Int64 - 1
	} else if err := tx.GetContext(ctx, &through, `SELECT MAX(seq) FROM audit_log`); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	if through < first.Int64 {
		return PurgeResult{}, nil // nothing expired
	}

	var last row
	if err := tx.GetContext(ctx, &last, s.q(`SELECT `+columns+` FROM audit_log WHERE seq = ?`), through); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: read entry %d: %w", through, err)
	}
	lastEntry, err := last.entry()
	if err != nil {
		return PurgeResult{}, err
	}
	var removed int64
	if err := tx.GetContext(ctx, &removed, s.q(`SELECT COUNT(*) FROM audit_log WHERE seq <= ?`), through); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	cp := audit.Checkpoint{
		ThroughSequence: through,
		EntryHash:       last.EntryHash,
		ThroughTime:     lastEntry.Time,
		PurgedAt:        now.UTC(),
		Removed:         removed,
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO audit_checkpoint (through_seq, entry_hash, through_time, purged_at, removed)
VALUES (?, ?, ?, ?, ?)`), cp.ThroughSequence, cp.EntryHash, formatStoredTime(cp.ThroughTime), formatStoredTime(cp.PurgedAt), cp.Removed); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: record checkpoint: %w", err)
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM audit_log WHERE seq <= ?`), through)
	if err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: delete: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n != removed {
		return PurgeResult{}, fmt.Errorf("audit store: purge: deleted %d entries, expected %d; rolled back", n, removed)
	}
	if err := tx.Commit(); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: commit: %w", err)
	}
	return PurgeResult{Removed: removed, Checkpoint: cp}, nil
}
