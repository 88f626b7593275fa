package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
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

// ErrNoSigner is returned by Purge when the store has no Options.Signer:
// a retention checkpoint must be signed with the log's key.
var ErrNoSigner = errors.New("purge needs the audit log signing key")

// Purge removes the expired head of the chain: every entry from the
// oldest up to (not including) the first entry that is younger than the
// cutoff by any clock. It records, in the same transaction, a retention
// checkpoint holding the sequence, hash and time of the last removed entry
// and a note signed with Options.Signer (the C2SP checkpoint of the tree up
// to that entry, see audit.RetentionNoteText); it keeps the entry hashes of
// the removed entries as Merkle leaves (audit_purged_leaf). So the entries
// that remain still verify (audit.VerifyChain starts from the checkpoint),
// every earlier checkpoint stays provable, and new entries keep chaining
// after a purge that emptied the log.
//
// Purge is the only way entries leave the log. cutoff must be at least
// MinRetention before Options.Now. An entry is kept while it is younger
// than MinRetention by the service clock or the database clock, judged by
// its own time or by the time the database committed it (committed_at),
// so a replica whose clock ran behind cannot have its entries purged
// early; the database triggers enforce the same floor with the database's
// clock. Entries are removed as a prefix of the chain, so an entry older
// than cutoff that follows a younger one waits for the next purge.
func (s *Store) Purge(ctx context.Context, cutoff time.Time) (_ PurgeResult, err error) {
	if err := s.faulted(); err != nil {
		return PurgeResult{}, err
	}
	defer s.guard(&err)()
	now := s.opts.Now()
	if cutoff.After(now.Add(-MinRetention)) {
		return PurgeResult{}, fmt.Errorf("%w: cutoff %s is later than %s (retention %d days)",
			ErrRetention, cutoff.UTC().Format(time.RFC3339), now.Add(-MinRetention).UTC().Format(time.RFC3339), int(MinRetention.Hours()/24))
	}
	if s.opts.Signer == nil {
		return PurgeResult{}, fmt.Errorf("audit store: %w", ErrNoSigner)
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	defer tx.Rollback()

	var dbNowText string
	if err := tx.GetContext(ctx, &dbNowText, s.d.dbNow); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: read the database clock: %w", err)
	}
	dbNow, err := time.Parse(time.RFC3339Nano, dbNowText)
	if err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: database clock %q: %w", dbNowText, err)
	}
	if dbCutoff := dbNow.Add(-MinRetention); dbCutoff.Before(cutoff) {
		cutoff = dbCutoff
	}

	var first, firstKept sql.NullInt64
	if err := tx.GetContext(ctx, &first, `SELECT MIN(seq) FROM audit_log`); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: %w", err)
	}
	if !first.Valid {
		return PurgeResult{}, nil // empty log
	}
	// committed_at has second precision: an entry committed within the
	// cutoff's second is kept.
	if err := tx.GetContext(ctx, &firstKept, s.q(`SELECT MIN(seq) FROM audit_log WHERE time >= ? OR committed_at >= ?`),
		formatStoredTime(cutoff), cutoff.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")); err != nil {
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
	root, err := s.rootThrough(ctx, tx, through)
	if err != nil {
		return PurgeResult{}, err
	}
	cp := audit.Checkpoint{
		ThroughSequence: through,
		EntryHash:       last.EntryHash,
		ThroughTime:     lastEntry.Time,
		PurgedAt:        now.UTC(),
		Removed:         removed,
	}
	cp.Note, err = s.opts.Signer.Sign(audit.RetentionNoteText(s.opts.Signer.Name(), cp, root))
	if err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: sign: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO audit_checkpoint (through_seq, entry_hash, through_time, purged_at, removed, note)
VALUES (?, ?, ?, ?, ?, ?)`), cp.ThroughSequence, cp.EntryHash, formatStoredTime(cp.ThroughTime), formatStoredTime(cp.PurgedAt),
		cp.Removed, string(cp.Note)); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: record checkpoint: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO audit_purged_leaf (seq, entry_hash)
SELECT seq, entry_hash FROM audit_log WHERE seq <= ?`), through); err != nil {
		return PurgeResult{}, fmt.Errorf("audit store: purge: keep leaves: %w", err)
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

// rootThrough computes, inside tx, the Merkle root of the leaves up to and
// including sequence through, checking that they form one chain.
func (s *Store) rootThrough(ctx context.Context, tx *sqlx.Tx, through int64) (tlog.Hash, error) {
	rows, err := tx.QueryxContext(ctx, s.q(`SELECT seq, '' AS prev_hash, entry_hash FROM audit_purged_leaf WHERE seq <= ?
UNION ALL SELECT seq, prev_hash, entry_hash FROM audit_log WHERE seq <= ? ORDER BY seq`), through, through)
	if err != nil {
		return tlog.Hash{}, fmt.Errorf("audit store: purge: read leaves: %w", err)
	}
	defer rows.Close()
	var leaves []audit.Leaf
	for rows.Next() {
		var l audit.Leaf
		if err := rows.Scan(&l.Sequence, &l.PrevHash, &l.EntryHash); err != nil {
			return tlog.Hash{}, fmt.Errorf("audit store: purge: read leaves: %w", err)
		}
		leaves = append(leaves, l)
	}
	if err := rows.Err(); err != nil {
		return tlog.Hash{}, fmt.Errorf("audit store: purge: read leaves: %w", err)
	}
	tree, err := audit.BuildTree(ctx, leafSlice(leaves))
	if err != nil {
		return tlog.Hash{}, fmt.Errorf("audit store: purge: the log does not form a tree: %w", err)
	}
	return tree.Root(uint64(through))
}

// leafSlice is an audit.LeafReader over leaves already read.
type leafSlice []audit.Leaf

func (ls leafSlice) Leaves(_ context.Context, from int64, fn func(audit.Leaf) error) error {
	for _, l := range ls {
		if l.Sequence < from {
			continue
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}
