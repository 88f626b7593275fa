package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// GenesisHash is the PrevHash of the first entry of a chain: 64 zeros, the
// width of a hex SHA-256.
var GenesisHash = strings.Repeat("0", 64)

// TimeFormat is the layout of Entry.Time in the canonical form: RFC 3339
// with nanoseconds (trailing zeros dropped), always in UTC. Stores may keep
// the time in another layout as long as it parses back to the same
// instant.
const TimeFormat = time.RFC3339Nano

// Canonical returns the canonical JSON of e: every field except EntryHash,
// in a fixed order, with Time in UTC formatted with TimeFormat, no HTML
// escaping and no trailing newline. Stores and Verify hash exactly these
// bytes, so the form must never change for existing entries.
//
// The form is that of encoding/json encoding canonicalEntry with HTML
// escaping off (canonicalReference in the tests, which
// FuzzCanonicalMatchesReference holds it to); writeCanonical writes it
// field by field so Hash can stream it into the hasher.
func Canonical(e Entry) []byte {
	var buf bytes.Buffer
	buf.Grow(canonicalSize(e))
	writeCanonical(&buf, e)
	return buf.Bytes()
}

// Hash returns the entry hash of e chained to prev: the hex SHA-256 of the
// bytes of prev (a hex string) followed by Canonical(e). e.EntryHash is
// ignored. The canonical form is written straight into the hasher, without
// building it.
func Hash(prev string, e Entry) string {
	h := sha256.New()
	io.WriteString(h, prev)
	// The hasher buffers nothing itself: a small buffer in front of it
	// turns the many short writes of the form into block-sized ones.
	w := bufio.NewWriterSize(h, 512)
	writeCanonical(w, e)
	w.Flush()
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// canonicalWriter is what writeCanonical writes to: a bytes.Buffer or a
// bufio.Writer (neither fails).
type canonicalWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

// canonicalSize is a close upper estimate of len(Canonical(e)) for
// strings that need no escaping.
func canonicalSize(e Entry) int {
	return 256 + len(e.ID) + len(e.Principal.Subject) + len(e.Principal.Issuer) + len(e.Principal.Name) +
		len(e.Principal.Email) + len(e.Endpoint) + len(e.RequestID) + len(e.KnowledgeVersion) +
		len(e.RequestDigest) + len(e.ResponseDigest) + base64.StdEncoding.EncodedLen(len(e.Request)) +
		base64.StdEncoding.EncodedLen(len(e.Response)) + len(e.PrevHash)
}

// CanonicalBody returns the part of e's canonical form that does not
// depend on what a store assigns (ID, Sequence, Time's layout, PrevHash):
// the principal, endpoint, request id, knowledge version, digests and the
// base64 of the payloads. A store computes it before its writer takes the
// entry (HashWithBody), so the base64 of the payloads is not written inside
// the writer's one serial transaction.
func CanonicalBody(e Entry) []byte {
	var buf bytes.Buffer
	buf.Grow(canonicalSize(e))
	writeCanonicalBody(&buf, e)
	return buf.Bytes()
}

// HashWithBody is Hash(prev, e) for an entry whose CanonicalBody is body:
// the same hash, with the body written as given. body must be
// CanonicalBody of e's current principal, endpoint, request id, knowledge
// version, digests and payloads.
func HashWithBody(prev string, e Entry, body []byte) string {
	h := sha256.New()
	io.WriteString(h, prev)
	w := bufio.NewWriterSize(h, 512)
	writeCanonicalHead(w, e)
	w.Flush()
	h.Write(body)
	writeCanonicalTail(w, e)
	w.Flush()
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// writeCanonical writes the canonical form of e (see Canonical) to w: its
// head (the id, sequence and time a store assigns), its body (everything
// the caller gives), then its tail (prev_hash).
func writeCanonical(w canonicalWriter, e Entry) {
	writeCanonicalHead(w, e)
	writeCanonicalBody(w, e)
	writeCanonicalTail(w, e)
}

// writeCanonicalHead writes the canonical form up to the time's closing
// quote.
func writeCanonicalHead(w canonicalWriter, e Entry) {
	var scratch [64]byte
	w.WriteString(`{"id":`)
	writeJSONString(w, e.ID)
	w.WriteString(`,"sequence":`)
	w.Write(strconv.AppendInt(scratch[:0], e.Sequence, 10))
	w.WriteString(`,"time":"`)
	// RFC 3339 text needs no escaping.
	w.Write(e.Time.UTC().AppendFormat(scratch[:0], TimeFormat))
	w.WriteByte('"')
}

// writeCanonicalBody writes the canonical form from the principal to the
// response's closing quote.
func writeCanonicalBody(w canonicalWriter, e Entry) {
	w.WriteString(`,"principal":{"subject":`)
	writeJSONString(w, e.Principal.Subject)
	w.WriteString(`,"issuer":`)
	writeJSONString(w, e.Principal.Issuer)
	w.WriteString(`,"name":`)
	writeJSONString(w, e.Principal.Name)
	w.WriteString(`,"email":`)
	writeJSONString(w, e.Principal.Email)
	w.WriteString(`},"endpoint":`)
	writeJSONString(w, e.Endpoint)
	w.WriteString(`,"request_id":`)
	writeJSONString(w, e.RequestID)
	w.WriteString(`,"knowledge_version":`)
	writeJSONString(w, e.KnowledgeVersion)
	w.WriteString(`,"request_digest":`)
	writeJSONString(w, e.RequestDigest)
	w.WriteString(`,"response_digest":`)
	writeJSONString(w, e.ResponseDigest)
	w.WriteString(`,"request":"`)
	writeBase64(w, e.Request)
	w.WriteString(`","response":"`)
	writeBase64(w, e.Response)
	w.WriteByte('"')
}

// writeCanonicalTail writes the canonical form from prev_hash to the end.
func writeCanonicalTail(w canonicalWriter, e Entry) {
	w.WriteString(`,"prev_hash":`)
	writeJSONString(w, e.PrevHash)
	w.WriteByte('}')
}

// writeBase64 writes the standard base64 of b (its alphabet needs no JSON
// escaping).
func writeBase64(w io.Writer, b []byte) {
	if len(b) == 0 {
		return
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	enc.Write(b)
	enc.Close()
}

// writeJSONString writes s as encoding/json does with HTML escaping off.
// Printable ASCII other than '"' and '\' is written as is; any other string
// is encoded by encoding/json itself.
func writeJSONString(w canonicalWriter, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			// Encoding a string cannot fail.
			if err := enc.Encode(s); err != nil {
				panic(fmt.Sprintf("audit: canonical encoding: %v", err))
			}
			w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			return
		}
	}
	w.WriteByte('"')
	w.WriteString(s)
	w.WriteByte('"')
}

// ErrChainBroken is the kind of every error Verify reports about the
// content of the log (as opposed to an error reading it).
var ErrChainBroken = errors.New("audit chain broken")

// ChainError reports the first entry at which the chain does not verify.
type ChainError struct {
	// Sequence is the sequence number of the first bad entry.
	Sequence int64
	// Reason says what is wrong with it.
	Reason string
}

// Error describes the broken entry.
func (e *ChainError) Error() string {
	return fmt.Sprintf("audit chain broken at sequence %d: %s", e.Sequence, e.Reason)
}

// Unwrap makes errors.Is(err, ErrChainBroken) true.
func (e *ChainError) Unwrap() error { return ErrChainBroken }

// Summary describes a verified chain.
type Summary struct {
	// Entries is the number of entries verified.
	Entries int64 `json:"entries"`
	// FirstSequence and LastSequence bound the verified entries (0 when
	// there are none).
	FirstSequence int64 `json:"first_sequence"`
	LastSequence  int64 `json:"last_sequence"`
	// HeadHash is the entry hash of the last entry (or of the checkpoint,
	// or GenesisHash, when no entry remains). Recording it outside the
	// database lets a later verification detect removed tail entries.
	HeadHash string `json:"head_hash"`
	// Checkpoint is the retention checkpoint the chain starts from, if
	// any.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Verify reads every entry of r in order and recomputes the chain. It
// returns nil when the chain is intact, a *ChainError naming the first
// broken sequence when it is not, and any other error when the log cannot
// be read. See VerifyChain.
func Verify(ctx context.Context, r Reader) error {
	_, err := VerifyChain(ctx, r)
	return err
}

// VerifyChain is Verify returning a summary of what it verified.
//
// The chain must start at sequence 1 from GenesisHash or, when r is a
// CheckpointReader with a checkpoint, at the sequence after the
// checkpoint from the checkpoint's hash; its sequences must be
// consecutive, so a removed entry (first, middle or any but the last) is
// reported too. An entry still present at or below the checkpoint is
// reported as well: a purge removes entries and writes its checkpoint in
// one transaction. An empty log verifies.
//
// A retention checkpoint must carry a signed note; VerifyChain refuses one
// that does not, but has no key to check the signature with: VerifyLog
// does that.
func VerifyChain(ctx context.Context, r Reader) (Summary, error) {
	return verifyChain(ctx, r)
}

func verifyChain(ctx context.Context, r Reader) (Summary, error) {
	sum := Summary{HeadHash: GenesisHash}
	wantSeq, prevHash := int64(1), GenesisHash
	if cr, ok := r.(CheckpointReader); ok {
		cp, found, err := cr.LatestCheckpoint(ctx)
		if err != nil {
			return sum, err
		}
		if found {
			if len(cp.Note) == 0 {
				return sum, fmt.Errorf("%w (through sequence %d): it is not signed", ErrRetentionCheckpoint, cp.ThroughSequence)
			}
			sum.Checkpoint = &cp
			wantSeq, prevHash = cp.ThroughSequence+1, cp.EntryHash
			sum.HeadHash = cp.EntryHash
		}
	}
	err := r.Entries(ctx, 0, func(e Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sum.Checkpoint != nil && e.Sequence <= sum.Checkpoint.ThroughSequence {
			return &ChainError{Sequence: e.Sequence, Reason: fmt.Sprintf(
				"entry is covered by the retention checkpoint through sequence %d but is still present",
				sum.Checkpoint.ThroughSequence)}
		}
		if e.Sequence != wantSeq {
			return &ChainError{Sequence: wantSeq, Reason: fmt.Sprintf("entry missing (next entry has sequence %d)", e.Sequence)}
		}
		if e.PrevHash != prevHash {
			return &ChainError{Sequence: e.Sequence, Reason: "prev_hash does not match the previous entry's hash"}
		}
		if got := Hash(e.PrevHash, e); got != e.EntryHash {
			return &ChainError{Sequence: e.Sequence, Reason: "entry_hash does not match the entry's content"}
		}
		if sum.Entries == 0 {
			sum.FirstSequence = e.Sequence
		}
		sum.Entries++
		sum.LastSequence = e.Sequence
		sum.HeadHash = e.EntryHash
		wantSeq++
		prevHash = e.EntryHash
		return nil
	})
	return sum, err
}
