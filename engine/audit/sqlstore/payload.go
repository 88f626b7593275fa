package sqlstore

import (
	"bytes"
	"database/sql"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// codecS2 is the payload_codec of a row whose request and response are
// each one S2 block (github.com/klauspost/compress/s2). A NULL
// payload_codec stores them as given (rows written before migration
// 0005/0006, and payloads too large to compress here).
const codecS2 = "s2"

// maxStoredPayload bounds a payload the store compresses and, so, the
// size a stored block may claim when it is read back: a row rewritten to
// claim more is refused instead of allocated. A larger payload is stored
// as given.
const maxStoredPayload = 256 << 20

// storedPayloads are an entry's payloads as the row keeps them.
type storedPayloads struct {
	codec             any // nil (SQL NULL) or codecS2
	request, response []byte
}

// encodePayloads compresses e's payloads (as stored: payloadsAsStored)
// for the row. It runs in the caller's goroutine (Append), not in the
// writer's transaction: a 5.8 KB answer becomes about 2.4 KB in a few
// microseconds, and its row fits in one database page instead of
// spilling into overflow pages.
func encodePayloads(e audit.Entry) storedPayloads {
	if (e.Request == nil && e.Response == nil) || len(e.Request) > maxStoredPayload || len(e.Response) > maxStoredPayload {
		return storedPayloads{request: e.Request, response: e.Response}
	}
	return storedPayloads{codec: codecS2, request: encodeS2(e.Request), response: encodeS2(e.Response)}
}

// encodeS2 returns b as one S2 block in a slice of its own size (the
// encoder needs s2.MaxEncodedLen, about 1.2 times b, to write it; the
// block, about half of b for an answer, waits in the queue).
func encodeS2(b []byte) []byte {
	if b == nil {
		return nil
	}
	scratch := s2Scratch.Get().(*[]byte)
	if n := s2.MaxEncodedLen(len(b)); cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	out := bytes.Clone(s2.Encode((*scratch)[:cap(*scratch)], b))
	if cap(*scratch) <= maxPooledScratch {
		s2Scratch.Put(scratch)
	}
	return out
}

// maxPooledScratch bounds the encoder scratch kept for reuse: a rare
// large payload's buffer is left to the collector.
const maxPooledScratch = 256 << 10

var s2Scratch = sync.Pool{New: func() any { return new([]byte) }}

// decodePayload returns a stored payload as given: b itself for a row
// without a codec, else b decompressed. which names the column in errors.
func decodePayload(codec sql.NullString, b []byte, seq int64, which string) ([]byte, error) {
	if !codec.Valid || len(b) == 0 {
		return b, nil
	}
	if codec.String != codecS2 {
		return nil, fmt.Errorf("audit store: entry %d: unknown payload_codec %q", seq, codec.String)
	}
	n, err := s2.DecodedLen(b)
	if err != nil {
		return nil, fmt.Errorf("audit store: entry %d: %s: %w", seq, which, err)
	}
	if n > maxStoredPayload {
		return nil, fmt.Errorf("audit store: entry %d: %s claims %d bytes, more than the store writes", seq, which, n)
	}
	out, err := s2.Decode(make([]byte, n), b)
	if err != nil {
		return nil, fmt.Errorf("audit store: entry %d: %s: %w", seq, which, err)
	}
	return out, nil
}
