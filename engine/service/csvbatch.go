package service

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/pgxsafety/pgxsafety/engine/labcsv"
)

// A lab CSV batch is audited in chunk entries: one entry per chunk of
// consecutive rows holds each row's input and the SHA-256 of exactly the
// result bytes released for it (or its error), and a closing entry holds
// the file's SHA-256, the counts and the ids of the chunk entries. A
// chunk's rows are released only after its entry is durable. Per-row
// entries would cap a batch at the store's commit rate; one entry for the
// whole batch could not be written before the first row is released
// without holding every result. Chunk entries give both: audit before
// release, and memory flat in the number of rows.

// csvAuditDepth is how many chunks may wait for their audit entry while
// later chunks are evaluated.
const csvAuditDepth = 8

// CSVBatch is one lab CSV batch being answered. Use it from one goroutine.
type CSVBatch struct {
	s      *Service
	call   Call
	proc   *labcsv.Processor
	file   CSVFile
	closed bool // a closing entry was attempted

	// The releaser goroutine owns chunkIDs and released while Run runs.
	chunkIDs []string
	released int
	mu       sync.Mutex
	broken   error // the release failure that stops all later releases
}

// CSVFile describes the uploaded file in the closing entry.
type CSVFile struct {
	Name string
	// Format is the answer's format: "json" or "ndjson".
	Format string
	// Bytes and SHA256 (hex) are known once the file is read.
	Bytes  int64
	SHA256 string
}

// NewCSVBatch starts a lab CSV batch read with opts.
func (s *Service) NewCSVBatch(call Call, file CSVFile, opts labcsv.Options) *CSVBatch {
	opts.NoDigest = false // each chunk entry holds every row's result digest
	return &CSVBatch{s: s, call: call, file: file, proc: labcsv.NewProcessor(s.kb, opts)}
}

// closing is the record that closes the batch with outcome.
func (b *CSVBatch) closing(st labcsv.Stats, outcome, reason string) closingRecord {
	return newClosingRecord(b.file, st, b.released, b.chunkIDs, outcome, reason)
}

// pendingChunk is a chunk whose audit entry is being appended.
type pendingChunk struct {
	c    *labcsv.Chunk
	done chan struct{}
	ref  Ref
	err  error
}

// Run reads the lab CSV from r and evaluates every row. For each chunk,
// admit is called with its row count before the chunk is audited (to
// charge a rate limit; its error stops the run); the chunk's audit entry
// is appended in the background (consecutive entries share the store's
// group commits) and release is called, in file order, with the chunk and
// its audit id once the entry is durable. A release or audit failure stops
// every later release and is returned. Rows read before a problem are
// still released in order.
func (b *CSVBatch) Run(ctx context.Context, r io.Reader, admit func(rows int) error, release func(c *labcsv.Chunk, ref Ref) error) (labcsv.Stats, error) {
	queue := make(chan *pendingChunk, csvAuditDepth)
	releaserDone := make(chan struct{})
	go func() {
		defer close(releaserDone)
		for p := range queue {
			<-p.done
			if b.failure() != nil {
				// Written but not released: the closing entry names it.
				if p.err == nil {
					b.chunkIDs = append(b.chunkIDs, p.ref.ID)
				}
				continue
			}
			err := p.err
			if err == nil {
				b.chunkIDs = append(b.chunkIDs, p.ref.ID)
				if err = release(p.c, p.ref); err == nil {
					b.released += len(p.c.Rows)
				}
			}
			if err != nil {
				b.mu.Lock()
				b.broken = err
				b.mu.Unlock()
			}
		}
	}()
	st, err := b.proc.Run(ctx, r, func(c *labcsv.Chunk) error {
		if err := admit(len(c.Rows)); err != nil {
			return err
		}
		if err := b.failure(); err != nil {
			return err
		}
		rec := newChunkRecord(c)
		p := &pendingChunk{c: c, done: make(chan struct{})}
		go func() {
			defer close(p.done)
			p.ref, p.err = b.s.append(ctx, b.call, rec)
		}()
		select {
		case queue <- p:
			return nil
		case <-ctx.Done():
			<-p.done
			return ctx.Err()
		}
	})
	close(queue)
	<-releaserDone
	if rerr := b.failure(); rerr != nil {
		err = rerr
	}
	return st, err
}

func (b *CSVBatch) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// Released is the number of rows released so far.
func (b *CSVBatch) Released() int { return b.released }

// SetFile records the size and SHA-256 of the file once it is read.
func (b *CSVBatch) SetFile(bytes int64, sha256Hex string) {
	b.file.Bytes, b.file.SHA256 = bytes, sha256Hex
}

// Complete appends the closing entry of a batch whose every row was
// released and returns the counts with its id. It is tried once: after a
// failure no further closing entry is written.
func (b *CSVBatch) Complete(ctx context.Context, st labcsv.Stats) (Audited[labcsv.Stats], error) {
	if b.closed {
		return Audited[labcsv.Stats]{}, errors.New("batch_csv: the batch is already closed")
	}
	b.closed = true
	id, err := b.s.append(ctx, b.call, b.closing(st, "completed", ""))
	if err != nil {
		return Audited[labcsv.Stats]{}, err
	}
	return audited(st, id), nil
}

// Abort appends the closing entry of a batch that could not be completed,
// when chunk entries were written (so the log says their rows were not all
// released); reason says why. It does nothing when the batch is closed or
// no chunk entry exists. It is best effort: the failure being reported may
// be the audit log itself.
func (b *CSVBatch) Abort(ctx context.Context, st labcsv.Stats, reason string) error {
	if b.closed || len(b.chunkIDs) == 0 {
		return nil
	}
	b.closed = true
	_, err := b.s.append(context.WithoutCancel(ctx), b.call, b.closing(st, "aborted", reason))
	return err
}
