package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// pending is one entry waiting for the writer.
type pending struct {
	e     audit.Entry
	fb    *feedbackWrite    // set for a feedback post: e is built in the transaction
	slot  *audit.GroupSlot  // from Append's context: told the entry's commit group
	body  []byte            // audit.CanonicalBody of e, written by the caller (nil for feedback)
	rows  storedPayloads    // e's payloads as the row keeps them, written by the caller
	reply chan appendResult // buffered (1): the writer never blocks on it
}

type appendResult struct {
	e   audit.Entry
	err error
}

// Append queues e for the writer and returns it, with its ID, Sequence,
// PrevHash and EntryHash assigned, once the transaction that holds it has
// committed (durable: SQLite runs with synchronous FULL, PostgreSQL with
// its configured synchronous_commit, on by default). e.Time must be set:
// the log records the service's clock, not the store's.
//
// When ctx carries an audit.GroupSlot, it is told the entry's commit
// group (the entries of its transaction) before Append returns.
//
// Errors wrap audit.ErrUnavailable: the store could not be written (or was
// closed) and the caller must not release the answer. When ctx ends first
// Append returns the context's error; the entry may still be committed
// later, which over-audits but never under-audits.
func (s *Store) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if e.Time.IsZero() {
		return audit.Entry{}, errors.New("audit store: entry has no time")
	}
	// The payloads as stored, compressed for the row, and the part of the
	// canonical form they make (their base64), are written here in the
	// caller's goroutine: the writer's transaction is the one serial step
	// of every answer.
	e = s.payloadsAsStored(e)
	return s.enqueue(ctx, &pending{e: e, body: audit.CanonicalBody(e), rows: encodePayloads(e), slot: audit.GroupSlotFrom(ctx), reply: make(chan appendResult, 1)})
}

// enqueue hands p to the writer and waits for its answer.
func (s *Store) enqueue(ctx context.Context, p *pending) (audit.Entry, error) {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return audit.Entry{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, ErrClosed)
	}
	select {
	case s.queue <- p:
	case <-ctx.Done():
		s.closeMu.RUnlock()
		return audit.Entry{}, fmt.Errorf("audit store: append: %w", ctx.Err())
	}
	s.closeMu.RUnlock()
	select {
	case r := <-p.reply:
		return r.e, r.err
	case <-ctx.Done():
		return audit.Entry{}, fmt.Errorf("audit store: append: %w", ctx.Err())
	}
}

// writer is the one goroutine that writes entries. It takes the first
// queued entry, then every entry already queued (up to MaxBatch), writes
// them in one transaction and answers each caller. While a transaction
// commits, new entries queue up and form the next batch: batches grow with
// load and cost no added latency when the service is idle. With a
// CommitWindow, a batch that found more than one entry waiting (the
// service is busy) also waits up to the window for more before it
// commits; a lone entry never waits. After Close it drains the queue and
// stops.
func (s *Store) writer() {
	defer close(s.stopped)
	defer s.closeInserts()
	batch := make([]*pending, 0, s.opts.MaxBatch)
	var window *time.Timer
	for first := range s.queue {
		batch = append(batch[:0], first)
		open := true
	fill:
		for len(batch) < s.opts.MaxBatch {
			select {
			case p, ok := <-s.queue:
				if !ok {
					open = false
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		if w := s.opts.CommitWindow; w > 0 && open && len(batch) > 1 && len(batch) < s.opts.MaxBatch {
			if window == nil {
				window = time.NewTimer(w)
			} else {
				window.Reset(w)
			}
		wait:
			for len(batch) < s.opts.MaxBatch {
				select {
				case p, ok := <-s.queue:
					if !ok {
						break wait
					}
					batch = append(batch, p)
				case <-window.C:
					break wait
				}
			}
			window.Stop()
		}
		s.commitBatch(batch)
		clear(batch)
	}
}

// commitBatch writes batch and answers every caller: each feedback post
// in a transaction of its own (a failed insert of its items must fail it
// alone), the other entries together in one.
func (s *Store) commitBatch(batch []*pending) {
	n := 0
	for _, p := range batch {
		if p.fb != nil {
			s.commit([]*pending{p})
			continue
		}
		batch[n] = p
		n++
	}
	if n > 0 {
		s.commit(batch[:n])
	}
}

// commit writes batch in one transaction and answers every caller.
func (s *Store) commit(batch []*pending) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CommitTimeout)
	stored, err := s.appendTx(ctx, batch)
	cancel()
	var fe *feedbackError
	if errors.As(err, &fe) {
		// Not a failure of the log: the post's items could not be
		// stored, so neither they nor its entry were committed.
		batch[0].reply <- appendResult{err: fe.err}
		return
	}
	s.recordCommit(err)
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(CommitStats{Entries: len(batch), Duration: time.Since(start), Err: err})
	}
	var group *audit.CommitGroup
	for i, p := range batch {
		if err != nil {
			if !errors.Is(err, audit.ErrUnavailable) {
				err = fmt.Errorf("%w: %w", audit.ErrUnavailable, err)
			}
			p.reply <- appendResult{err: err}
			continue
		}
		if p.slot != nil {
			if group == nil {
				group = audit.NewCommitGroup(stored)
			}
			p.slot.Set(group, i)
		}
		p.reply <- appendResult{e: stored[i]}
	}
}

// chainHead is the sequence and hash the next entry chains to.
type chainHead struct {
	Seq  int64  `db:"seq"`
	Hash string `db:"entry_hash"`
}

// head reads the chain head inside tx: the last entry (a statement
// prepared once, like the INSERTs), else the latest retention checkpoint
// (everything was purged), else the genesis.
func (s *Store) head(ctx context.Context, tx *sqlx.Tx) (chainHead, error) {
	var h chainHead
	if s.headStmt == nil {
		st, err := s.db.PreparexContext(ctx, headQuery)
		if err != nil {
			return h, fmt.Errorf("prepare chain head: %w", redactErr(err))
		}
		s.headStmt = st
	}
	err := tx.StmtxContext(ctx, s.headStmt).GetContext(ctx, &h)
	if err == nil {
		return h, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("read chain head: %w", err)
	}
	err = tx.GetContext(ctx, &h, checkpointHeadQuery)
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, sql.ErrNoRows):
		return chainHead{Seq: 0, Hash: audit.GenesisHash}, nil
	default:
		return h, fmt.Errorf("read checkpoint: %w", err)
	}
}

// beginWrite starts a transaction holding the cross-process write lock.
func (s *Store) beginWrite(ctx context.Context) (*sqlx.Tx, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", redactErr(err))
	}
	if s.d.lockForWrite != "" {
		if _, err := tx.ExecContext(ctx, s.d.lockForWrite); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
	return tx, nil
}

// insertColumns are the columns an append writes, in the order of
// insertArgs.
const insertColumns = `seq, id, time, principal_subject, principal_issuer, principal_name, principal_email,
    endpoint, request_id, knowledge_version, request_digest, response_digest, request, response,
    prev_hash, entry_hash, payload_codec`

const insertArity = 17

// insertArgs are the values of e's row; p holds its payloads as stored.
func insertArgs(e audit.Entry, p storedPayloads) []any {
	return []any{
		e.Sequence, e.ID, formatStoredTime(e.Time),
		e.Principal.Subject, e.Principal.Issuer, e.Principal.Name, e.Principal.Email,
		e.Endpoint, e.RequestID, e.KnowledgeVersion, e.RequestDigest, e.ResponseDigest,
		p.request, p.response, e.PrevHash, e.EntryHash, p.codec,
	}
}

// appendTx chains and inserts the batch in one transaction.
func (s *Store) appendTx(ctx context.Context, batch []*pending) (_ []audit.Entry, err error) {
	if err := s.faulted(); err != nil {
		return nil, err
	}
	defer s.guard(&err)()
	if s.d.name == "postgres" && batch[0].fb == nil {
		// commitBatch gives a feedback post a transaction of its own.
		return s.appendPipelined(ctx, batch)
	}
	tx, err := s.beginAppend(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	h, err := s.head(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := make([]audit.Entry, len(batch))
	args := make([]any, 0, len(batch)*insertArity)
	for i, p := range batch {
		e, body, rows := p.e, p.body, p.rows
		if p.fb != nil {
			if e, err = s.insertFeedback(ctx, tx, p.fb); err != nil {
				return nil, err
			}
			body = nil
		}
		if e, err = s.chain(&h, e, body); err != nil {
			return nil, err
		}
		if p.fb != nil {
			rows = encodePayloads(e)
		}
		out[i] = e
		args = append(args, insertArgs(e, rows)...)
	}
	stmt, err := s.insertStmt(ctx, len(batch))
	if err != nil {
		return nil, err
	}
	if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
		return nil, fmt.Errorf("insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return out, nil
}

// beginAppend starts the writer's transaction: for SQLite on the writer's
// own connection (Store.wconn), for PostgreSQL as beginWrite.
func (s *Store) beginAppend(ctx context.Context) (*sqlx.Tx, error) {
	if s.d.name != "sqlite" {
		return s.beginWrite(ctx)
	}
	if s.wconn == nil {
		c, err := s.db.Connx(ctx)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		if _, err := c.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
			c.Close()
			return nil, fmt.Errorf("begin: %w", err)
		}
		s.wconn = c
	}
	tx, err := s.wconn.BeginTxx(ctx, nil)
	if err != nil {
		// Take a fresh connection next time. This one may be broken or
		// still inside a transaction: discard it (ErrBadConn) rather than
		// hand it to the pool.
		_ = s.wconn.Raw(func(any) error { return driver.ErrBadConn })
		_ = s.wconn.Close()
		s.wconn = nil
		return nil, fmt.Errorf("begin: %w", err)
	}
	return tx, nil
}

// payloadsAsStored returns e with the payloads the store keeps: none with
// OmitPayloads, and nil for an empty one.
func (s *Store) payloadsAsStored(e audit.Entry) audit.Entry {
	if s.opts.OmitPayloads {
		e.Request, e.Response = nil, nil
	}
	e.Request = nilIfEmpty(e.Request)
	e.Response = nilIfEmpty(e.Response)
	return e
}

// chain gives e its id, sequence, previous hash and entry hash after h,
// and advances h to it. body is audit.CanonicalBody of e as stored, or
// nil to write it here.
func (s *Store) chain(h *chainHead, e audit.Entry, body []byte) (audit.Entry, error) {
	id, err := newID(e.Time)
	if err != nil {
		return audit.Entry{}, err
	}
	e.ID = id
	e.Sequence = h.Seq + 1
	e.Time = e.Time.UTC()
	e.PrevHash = h.Hash
	if body != nil {
		e.EntryHash = audit.HashWithBody(e.PrevHash, e, body)
	} else {
		e = s.payloadsAsStored(e)
		e.EntryHash = audit.Hash(e.PrevHash, e)
	}
	*h = chainHead{Seq: e.Sequence, Hash: e.EntryHash}
	return e, nil
}

// insertQuery is the INSERT of n entries, in the dialect's bind style.
func (s *Store) insertQuery(n int) string {
	cols, row := insertColumns, "("+strings.TrimSuffix(strings.Repeat("?, ", insertArity), ", ")
	if s.d.committedAt != "" {
		cols += ", committed_at"
		row += ", " + s.d.committedAt
	}
	row += ")"
	return s.q(`INSERT INTO audit_log (` + cols + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", "))
}

// insertStmt returns the INSERT of n entries, prepared the first time a
// batch of n is written (compiling it for every commit cost about a fifth
// of the commit). modernc.org/sqlite reuses a prepared statement's
// compiled program from v1.41.0 on; before, it compiled the SQL again on
// every execution.
func (s *Store) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if st, ok := s.inserts[n]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.insertQuery(n))
	if err != nil {
		return nil, fmt.Errorf("prepare insert: %w", redactErr(err))
	}
	if s.inserts == nil {
		s.inserts = make(map[int]*sql.Stmt)
	}
	s.inserts[n] = st
	return st, nil
}

// closeInserts closes the prepared INSERTs, the chain-head read and the
// writer's connection (the writer is done).
func (s *Store) closeInserts() {
	if s.faulted() != nil {
		return // the connections may be inside a broken mapping
	}
	for n, st := range s.inserts {
		_ = st.Close()
		delete(s.inserts, n)
	}
	if s.headStmt != nil {
		_ = s.headStmt.Close()
		s.headStmt = nil
	}
	if s.wconn != nil {
		_ = s.wconn.Close()
		s.wconn = nil
	}
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// idPrefix starts every audit entry id.
const idPrefix = "aud_"

// crockford is the Crockford base-32 alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newID returns "aud_" followed by 26 Crockford base-32 characters of a
// 128-bit value: the 48-bit Unix millisecond time of t (so ids sort
// roughly by time) and 80 bits from crypto/rand (so ids never collide,
// even under a fixed clock).
func newID(t time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	ms &= 1<<48 - 1
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return idPrefix + string(out[:]), nil
}
