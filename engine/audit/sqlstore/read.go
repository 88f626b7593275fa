package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// row is one audit_log row.
type row struct {
	Seq              int64          `db:"seq"`
	ID               string         `db:"id"`
	Time             string         `db:"time"`
	PrincipalSubject string         `db:"principal_subject"`
	PrincipalIssuer  string         `db:"principal_issuer"`
	PrincipalName    string         `db:"principal_name"`
	PrincipalEmail   string         `db:"principal_email"`
	Endpoint         string         `db:"endpoint"`
	RequestID        string         `db:"request_id"`
	KnowledgeVersion string         `db:"knowledge_version"`
	RequestDigest    string         `db:"request_digest"`
	ResponseDigest   string         `db:"response_digest"`
	Request          []byte         `db:"request"`
	Response         []byte         `db:"response"`
	PrevHash         string         `db:"prev_hash"`
	EntryHash        string         `db:"entry_hash"`
	PayloadCodec     sql.NullString `db:"payload_codec"`
}

// columns are the columns of row.
const columns = insertColumns

func (r row) entry() (audit.Entry, error) {
	t, err := time.Parse(audit.TimeFormat, r.Time)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: entry %d: bad time %q: %w", r.Seq, r.Time, err)
	}
	req, err := decodePayload(r.PayloadCodec, r.Request, r.Seq, "request")
	if err != nil {
		return audit.Entry{}, err
	}
	resp, err := decodePayload(r.PayloadCodec, r.Response, r.Seq, "response")
	if err != nil {
		return audit.Entry{}, err
	}
	return audit.Entry{
		ID:       r.ID,
		Sequence: r.Seq,
		Time:     t.UTC(),
		Principal: audit.Principal{
			Subject: r.PrincipalSubject,
			Issuer:  r.PrincipalIssuer,
			Name:    r.PrincipalName,
			Email:   r.PrincipalEmail,
		},
		Endpoint:         r.Endpoint,
		RequestID:        r.RequestID,
		KnowledgeVersion: r.KnowledgeVersion,
		RequestDigest:    r.RequestDigest,
		ResponseDigest:   r.ResponseDigest,
		Request:          nilIfEmpty(req),
		Response:         nilIfEmpty(resp),
		PrevHash:         r.PrevHash,
		EntryHash:        r.EntryHash,
	}, nil
}

// Entries calls fn for every entry with Sequence >= from, in sequence
// order. It stops at, and returns, the first error of fn.
func (s *Store) Entries(ctx context.Context, from int64, fn func(audit.Entry) error) error {
	return s.scan(ctx, fn, nil, `SELECT `+columns+` FROM audit_log WHERE seq >= ? ORDER BY seq`, from)
}

// EntriesBetween calls fn, in sequence order, for every entry whose Time t
// satisfies since <= t < until. A zero since or until leaves that side
// open.
func (s *Store) EntriesBetween(ctx context.Context, since, until time.Time, fn func(audit.Entry) error) error {
	// The stored text sorts like the time to within a second (entries
	// written before the fixed-width layout drop trailing zeros), so the
	// query widens the range by a second and keep filters exactly.
	lo, hi := "", "9999"
	if !since.IsZero() {
		lo = formatStoredTime(since.Add(-time.Second))
	}
	if !until.IsZero() {
		hi = formatStoredTime(until.Add(time.Second))
	}
	keep := func(e audit.Entry) bool {
		return (since.IsZero() || !e.Time.Before(since)) && (until.IsZero() || e.Time.Before(until))
	}
	return s.scan(ctx, fn, keep, `SELECT `+columns+` FROM audit_log WHERE time >= ? AND time < ? ORDER BY seq`, lo, hi)
}

func (s *Store) scan(ctx context.Context, fn func(audit.Entry) error, keep func(audit.Entry) bool, query string, args ...any) (err error) {
	if err := s.faulted(); err != nil {
		return err
	}
	defer s.guard(&err)()
	rows, err := s.db.QueryxContext(ctx, s.q(query), args...)
	if err != nil {
		return fmt.Errorf("audit store: read: %w", redactErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var r row
		if err := rows.StructScan(&r); err != nil {
			return fmt.Errorf("audit store: read: %w", err)
		}
		e, err := r.entry()
		if err != nil {
			return err
		}
		if keep != nil && !keep(e) {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit store: read: %w", err)
	}
	return nil
}

// Entry returns the entry with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Entry(ctx context.Context, id string) (_ audit.Entry, err error) {
	if err := s.faulted(); err != nil {
		return audit.Entry{}, err
	}
	defer s.guard(&err)()
	var r row
	err = s.db.GetContext(ctx, &r, s.q(`SELECT `+columns+` FROM audit_log WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return audit.Entry{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: read: %w", redactErr(err))
	}
	return r.entry()
}

// checkpointRow is one audit_checkpoint row.
type checkpointRow struct {
	ThroughSeq  int64          `db:"through_seq"`
	EntryHash   string         `db:"entry_hash"`
	ThroughTime string         `db:"through_time"`
	PurgedAt    string         `db:"purged_at"`
	Removed     int64          `db:"removed"`
	Note        sql.NullString `db:"note"`
}

// LatestCheckpoint returns the retention checkpoint with the highest
// sequence, and false when nothing was ever purged.
func (s *Store) LatestCheckpoint(ctx context.Context) (_ audit.Checkpoint, _ bool, err error) {
	if err := s.faulted(); err != nil {
		return audit.Checkpoint{}, false, err
	}
	defer s.guard(&err)()
	var r checkpointRow
	err = s.db.GetContext(ctx, &r, `SELECT through_seq, entry_hash, through_time, purged_at, removed, note
FROM audit_checkpoint ORDER BY through_seq DESC LIMIT 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return audit.Checkpoint{}, false, nil
	}
	if err != nil {
		return audit.Checkpoint{}, false, fmt.Errorf("audit store: read checkpoint: %w", redactErr(err))
	}
	through, err1 := time.Parse(audit.TimeFormat, r.ThroughTime)
	purged, err2 := time.Parse(audit.TimeFormat, r.PurgedAt)
	if err := errors.Join(err1, err2); err != nil {
		return audit.Checkpoint{}, false, fmt.Errorf("audit store: checkpoint %d: bad time: %w", r.ThroughSeq, err)
	}
	return audit.Checkpoint{
		ThroughSequence: r.ThroughSeq,
		EntryHash:       r.EntryHash,
		ThroughTime:     through.UTC(),
		PurgedAt:        purged.UTC(),
		Removed:         r.Removed,
		Note:            []byte(r.Note.String),
	}, true, nil
}

// Leaves calls fn, in sequence order, for every leaf of the Merkle tree
// with Sequence >= from: the entry hash (and prev hash) of every retained
// entry and the entry hash of every purged one (audit.LeafReader).
func (s *Store) Leaves(ctx context.Context, from int64, fn func(audit.Leaf) error) (err error) {
	if err := s.faulted(); err != nil {
		return err
	}
	defer s.guard(&err)()
	rows, err := s.db.QueryxContext(ctx, s.q(`SELECT seq, '' AS prev_hash, entry_hash FROM audit_purged_leaf WHERE seq >= ?
UNION ALL SELECT seq, prev_hash, entry_hash FROM audit_log WHERE seq >= ? ORDER BY seq`), from, from)
	if err != nil {
		return fmt.Errorf("audit store: read leaves: %w", redactErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var l audit.Leaf
		if err := rows.Scan(&l.Sequence, &l.PrevHash, &l.EntryHash); err != nil {
			return fmt.Errorf("audit store: read leaves: %w", err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit store: read leaves: %w", err)
	}
	return nil
}
