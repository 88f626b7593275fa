package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// headQuery reads the last entry of the chain.
const headQuery = `SELECT seq, entry_hash FROM audit_log ORDER BY seq DESC LIMIT 1`

// checkpointHeadQuery reads the latest retention checkpoint (the chain
// head when every entry was purged).
const checkpointHeadQuery = `SELECT through_seq AS seq, entry_hash FROM audit_checkpoint ORDER BY through_seq DESC LIMIT 1`

// appendPipelined is appendTx for PostgreSQL in two round trips instead
// of five: BEGIN, the advisory lock and the chain head are sent together
// (pgx pipelines a batch), then the INSERT and COMMIT. The statements, the
// lock and the transaction are those of appendTx; only their sending
// changes. The head is read by its own statement after the lock's, so in
// READ COMMITTED it sees every entry committed before the lock was
// granted. The entries are answered only once COMMIT has returned.
//
// A connection left inside a transaction (a failed statement, an expired
// context) is closed rather than returned to the pool: the server then
// rolls the transaction back.
func (s *Store) appendPipelined(ctx context.Context, batch []*pending) ([]audit.Entry, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", redactErr(err))
	}
	defer conn.Close()
	var (
		out    []audit.Entry
		appErr error
	)
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			appErr = fmt.Errorf("begin: unexpected driver connection %T", dc)
			return nil
		}
		c := sc.Conn()
		out, appErr = s.appendPgx(ctx, c, batch)
		if appErr != nil && (c.IsClosed() || c.PgConn().TxStatus() != 'I') {
			return driver.ErrBadConn
		}
		return nil
	})
	if appErr != nil {
		return nil, appErr
	}
	if err != nil {
		return nil, fmt.Errorf("begin: %w", redactErr(err))
	}
	return out, nil
}

// appendPgx writes batch on c (see appendPipelined).
func (s *Store) appendPgx(ctx context.Context, c *pgx.Conn, batch []*pending) ([]audit.Entry, error) {
	var h chainHead
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(s.d.lockForWrite)
	b.Queue(headQuery)
	res := c.SendBatch(ctx, b)
	if _, err := res.Exec(); err != nil {
		res.Close()
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := res.Exec(); err != nil {
		res.Close()
		return nil, fmt.Errorf("lock: %w", err)
	}
	empty := false
	if err := res.QueryRow().Scan(&h.Seq, &h.Hash); errors.Is(err, pgx.ErrNoRows) {
		empty = true
	} else if err != nil {
		res.Close()
		return nil, fmt.Errorf("read chain head: %w", err)
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("read chain head: %w", err)
	}
	if empty {
		err := c.QueryRow(ctx, checkpointHeadQuery).Scan(&h.Seq, &h.Hash)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			h = chainHead{Seq: 0, Hash: audit.GenesisHash}
		case err != nil:
			return nil, fmt.Errorf("read checkpoint: %w", err)
		}
	}

	out := make([]audit.Entry, len(batch))
	args := make([]any, 0, len(batch)*insertArity)
	for i, p := range batch {
		e, err := s.chain(&h, p.e, p.body)
		if err != nil {
			return nil, err
		}
		out[i] = e
		args = append(args, insertArgs(e, p.rows)...)
	}
	b = &pgx.Batch{}
	q, ok := s.pgInserts[len(batch)]
	if !ok {
		// Built once per batch size: pgx finds its prepared statement by
		// this text, and rebinding 16 placeholders per entry every
		// commit would cost more than the lookup.
		q = s.insertQuery(len(batch))
		if s.pgInserts == nil {
			s.pgInserts = make(map[int]string)
		}
		s.pgInserts[len(batch)] = q
	}
	b.Queue(q, args...)
	b.Queue(`COMMIT`)
	res = c.SendBatch(ctx, b)
	if _, err := res.Exec(); err != nil {
		res.Close()
		return nil, fmt.Errorf("insert: %w", err)
	}
	tag, err := res.Exec()
	if err != nil {
		res.Close()
		return nil, fmt.Errorf("commit: %w", err)
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	// COMMIT of a transaction that failed answers ROLLBACK, not an error.
	if tag.String() != "COMMIT" {
		return nil, fmt.Errorf("commit: the transaction was rolled back (%s)", tag)
	}
	return out, nil
}
