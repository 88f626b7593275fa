package audit

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// A batch receipt (receipt v2) is one signature for every entry a store
// committed in one transaction: the log signs a note that commits to the
// batch — its first and last sequence and the RFC 6962 Merkle root of one
// leaf per entry — and each entry's receipt is that signed note plus the
// entry's fields and its audit path to the root. Opened (OpenReceipt), it
// says what a v1 receipt says (Receipt), so CheckReceipt proves inclusion
// or omission alike. One Ed25519 signature then serves the 4–16 answers of
// a group commit instead of one each.
//
// The signed note's text is five lines:
//
//	pgxsafety audit batch receipt v1
//	origin <log origin>
//	first <sequence of the batch's first entry>
//	last <sequence of its last entry>
//	root <base64 RFC 6962 root over the last-first+1 leaves>
//
// A batch holds the entries of sequences first..last, every one, in
// order: leaf i is the entry of sequence first+i, and is the RFC 6962 leaf
// hash (SHA-256 of 0x00 and the data) of that entry's four lines
//
//	id <audit_log_id>
//	sequence <decimal>
//	entry_hash <64 lower-case hex digits>
//	time <RFC 3339, UTC, nanoseconds>
//
// The receipt of one entry is, base64-encoded (EncodeReceipt) as one
// header-safe token, the text
//
//	pgxsafety audit receipt v2
//	<the entry's four lines>
//	path <base64 hash>          (zero or more: the audit path, leaf to root)
//	<blank line>
//	<the signed batch note>
//
// Why it cannot be forged for an entry outside the batch: leaves and
// interior nodes are hashed with distinct prefixes (0x00, 0x01), the
// number of leaves is fixed by first and last, the leaf's index is its
// sequence less first (so a sequence outside first..last has no leaf),
// the leaf names its own sequence, and the path must have exactly the
// length RFC 9162 gives for that index and size. Changing any field of
// the entry, or the path, changes the root the path leads to, which is
// signed.
//
// Both headers hold spaces, which no key name (and so no checkpoint
// origin) may hold: neither is ever read as a checkpoint, nor as the
// other, nor as a v1 receipt.
const (
	receiptV2Header = "pgxsafety audit receipt v2"
	batchHeader     = "pgxsafety audit batch receipt v1"
)

// ReceiptBatch is the signed statement of a batch receipt.
type ReceiptBatch struct {
	Origin string
	// First and Last are the sequences of the batch's first and last
	// entries; it holds every entry between.
	First, Last int64
	// Root is the RFC 6962 root over the batch's leaves (ReceiptLeaf).
	Root tlog.Hash
}

// Size is the number of entries, and leaves, of the batch.
func (b ReceiptBatch) Size() uint64 { return uint64(b.Last-b.First) + 1 }

// Marshal returns the note text of b.
func (b ReceiptBatch) Marshal() []byte {
	return fmt.Appendf(nil, "%s\norigin %s\nfirst %d\nlast %d\nroot %s\n",
		batchHeader, b.Origin, b.First, b.Last, base64.StdEncoding.EncodeToString(b.Root[:]))
}

// ParseReceiptBatch parses the text of a batch note strictly: the five
// lines in order, canonical numbers and base64, first <= last.
func ParseReceiptBatch(text []byte) (ReceiptBatch, error) {
	bad := func(format string, a ...any) (ReceiptBatch, error) {
		return ReceiptBatch{}, fmt.Errorf("%w: batch receipt: %s", tlog.ErrFormat, fmt.Sprintf(format, a...))
	}
	lines, ok := noteLines(text)
	if !ok || len(lines) != 5 || lines[0] != batchHeader {
		return bad("not a %q note of five lines", batchHeader)
	}
	f, err := lineValues(lines[1:], "origin", "first", "last", "root")
	if err != nil {
		return bad("%v", err)
	}
	b := ReceiptBatch{Origin: f[0]}
	if b.First, ok = parseSequence(f[1]); !ok {
		return bad("first %q is not a positive decimal number", f[1])
	}
	if b.Last, ok = parseSequence(f[2]); !ok || b.Last < b.First {
		return bad("last %q is not a decimal number of at least first", f[2])
	}
	if b.Root, ok = parseHash(f[3]); !ok {
		return bad("root %q is not a base64 SHA-256", f[3])
	}
	return b, nil
}

// EntryProof is the unsigned part of a batch receipt: the receipted
// entry and its audit path to the batch's root.
type EntryProof struct {
	ID        string
	Sequence  int64
	EntryHash string
	Time      time.Time
	// Path is the audit path of the entry's leaf, leaf to root (RFC 6962
	// §2.1.1); empty in a batch of one.
	Path []tlog.Hash
}

// appendLeafData appends the entry's four lines, the data of its leaf.
func (p EntryProof) appendLeafData(b []byte) []byte {
	b = append(b, "id "...)
	b = append(b, p.ID...)
	b = append(b, "\nsequence "...)
	b = strconv.AppendInt(b, p.Sequence, 10)
	b = append(b, "\nentry_hash "...)
	b = append(b, p.EntryHash...)
	b = append(b, "\ntime "...)
	b = p.Time.UTC().AppendFormat(b, TimeFormat)
	return append(b, '\n')
}

// Leaf is the entry's leaf hash in its batch's tree.
func (p EntryProof) Leaf() tlog.Hash { return tlog.HashLeaf(p.appendLeafData(nil)) }

// Marshal returns the text of p: the header, the entry's four lines and
// one path line per hash.
func (p EntryProof) Marshal() []byte {
	return p.appendPath(p.appendLeafData(append(make([]byte, 0, 256+len(p.Path)*50), receiptV2Header+"\n"...)))
}

// appendPath appends p's path lines.
func (p EntryProof) appendPath(b []byte) []byte {
	for _, h := range p.Path {
		b = append(b, "path "...)
		b = base64.StdEncoding.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	return b
}

// ParseEntryProof parses the text of an entry proof strictly (the form
// Marshal writes, nothing else).
func ParseEntryProof(text []byte) (EntryProof, error) {
	bad := func(format string, a ...any) (EntryProof, error) {
		return EntryProof{}, fmt.Errorf("%w: receipt: %s", tlog.ErrFormat, fmt.Sprintf(format, a...))
	}
	lines, ok := noteLines(text)
	if !ok || len(lines) < 5 || lines[0] != receiptV2Header {
		return bad("not a %q text of at least five lines", receiptV2Header)
	}
	r, err := parseEntryLines(lines[1:5])
	if err != nil {
		return EntryProof{}, err
	}
	p := EntryProof{ID: r.ID, Sequence: r.Sequence, EntryHash: r.EntryHash, Time: r.Time}
	if len(lines)-5 > 64 {
		return bad("a path of %d hashes (a tree of at most 2^63 leaves has at most 64)", len(lines)-5)
	}
	for i, line := range lines[5:] {
		v, ok := strings.CutPrefix(line, "path ")
		h, okh := parseHash(v)
		if !ok || !okh {
			return bad("line %d is not \"path\" and a base64 SHA-256", i+6)
		}
		p.Path = append(p.Path, h)
	}
	return p, nil
}

// noteLines splits newline-terminated text into its lines.
func noteLines(text []byte) ([]string, bool) {
	s, ok := strings.CutSuffix(string(text), "\n")
	if !ok {
		return nil, false
	}
	return strings.Split(s, "\n"), true
}

// lineValues returns the value of each line, which must be the key, a
// space and a value holding no space or tab.
func lineValues(lines []string, keys ...string) ([]string, error) {
	out := make([]string, len(keys))
	for i, key := range keys {
		v, ok := strings.CutPrefix(lines[i], key+" ")
		if !ok || v == "" || strings.ContainsAny(v, " \t") {
			return nil, fmt.Errorf("line %q is not %q and a value", lines[i], key)
		}
		out[i] = v
	}
	return out, nil
}

// parseEntryLines parses the four entry lines of a receipt: id,
// sequence, entry_hash and time, each canonical.
func parseEntryLines(lines []string) (Receipt, error) {
	bad := func(format string, a ...any) (Receipt, error) {
		return Receipt{}, fmt.Errorf("%w: receipt: %s", tlog.ErrFormat, fmt.Sprintf(format, a...))
	}
	f, err := lineValues(lines, "id", "sequence", "entry_hash", "time")
	if err != nil {
		return bad("%v", err)
	}
	r := Receipt{ID: f[0]}
	var ok bool
	if r.Sequence, ok = parseSequence(f[1]); !ok {
		return bad("sequence %q is not a positive decimal number", f[1])
	}
	if _, err := LeafHash(f[2]); err != nil || strings.ToLower(f[2]) != f[2] {
		return bad("entry_hash %q is not a lower-case hex SHA-256", f[2])
	}
	r.EntryHash = f[2]
	t, err := time.Parse(TimeFormat, f[3])
	if err != nil || t.UTC().Format(TimeFormat) != f[3] {
		return bad("time %q is not RFC 3339 in UTC", f[3])
	}
	r.Time = t.UTC()
	return r, nil
}

// parseSequence parses a positive decimal number in canonical form.
func parseSequence(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 1 && strconv.FormatInt(n, 10) == s
}

// parseHash parses a hash in canonical standard base64.
func parseHash(s string) (tlog.Hash, bool) {
	var h tlog.Hash
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw) != tlog.HashSize || base64.StdEncoding.EncodeToString(raw) != s {
		return h, false
	}
	copy(h[:], raw)
	return h, true
}

// SignBatch returns the encoded batch receipts (EncodeReceipt) of
// entries, stored entries of consecutive sequences in order, one per
// entry, all under one signature. Call it only once every entry is
// durable.
func (rs *ReceiptSigner) SignBatch(entries []Entry) ([]string, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("receipt: an empty batch")
	}
	// Each entry's text is its header and leaf data, then its path:
	// the leaf is hashed from the bytes the receipt carries.
	texts := make([][]byte, len(entries))
	var tree tlog.Tree
	for i, e := range entries {
		if e.ID == "" || e.Sequence < 1 || e.EntryHash == "" {
			return nil, fmt.Errorf("receipt: entry %q is not a stored entry", e.ID)
		}
		if e.Sequence != entries[0].Sequence+int64(i) {
			return nil, fmt.Errorf("receipt: the batch's sequences are not consecutive (%d at %d after %d)", e.Sequence, i, entries[0].Sequence)
		}
		p := EntryProof{ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time}
		texts[i] = p.appendLeafData(append(make([]byte, 0, 1024), receiptV2Header+"\n"...))
		tree.Append(tlog.HashLeaf(texts[i][len(receiptV2Header)+1:]))
	}
	size := tree.Size()
	root, err := tree.Root(size)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	batch := ReceiptBatch{Origin: rs.s.Name(), First: entries[0].Sequence, Last: entries[len(entries)-1].Sequence, Root: root}
	note, err := rs.s.Sign(batch.Marshal())
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	out := make([]string, len(entries))
	var enc []byte
	for i, text := range texts {
		path, err := tree.InclusionProof(uint64(i), size)
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		text = EntryProof{Path: path}.appendPath(text)
		text = append(append(text, '\n'), note...)
		enc = base64.StdEncoding.AppendEncode(enc[:0], text)
		out[i] = string(enc)
	}
	return out, nil
}

// openBatchReceipt opens a decoded batch receipt: its note must carry a
// valid signature of key and name key's log, and the entry's path must
// lead from its leaf to the signed root.
func openBatchReceipt(key *tlog.Verifier, msg []byte) (Receipt, error) {
	i := bytes.Index(msg, []byte("\n\n"))
	if i < 0 {
		return Receipt{}, fmt.Errorf("%w: receipt: no signed batch note after the entry", tlog.ErrFormat)
	}
	p, err := ParseEntryProof(msg[:i+1])
	if err != nil {
		return Receipt{}, err
	}
	text, err := key.Open(msg[i+2:])
	if err != nil {
		return Receipt{}, err
	}
	b, err := ParseReceiptBatch(text)
	if err != nil {
		return Receipt{}, err
	}
	if b.Origin != key.Name() {
		return Receipt{}, fmt.Errorf("%w: receipt of log %q, not of %q", tlog.ErrFormat, b.Origin, key.Name())
	}
	if p.Sequence < b.First || p.Sequence > b.Last {
		return Receipt{}, fmt.Errorf("%w: the entry's sequence %d is outside the signed batch %d-%d", tlog.ErrSignature, p.Sequence, b.First, b.Last)
	}
	if err := tlog.VerifyInclusion(uint64(p.Sequence-b.First), b.Size(), p.Leaf(), p.Path, b.Root); err != nil {
		return Receipt{}, fmt.Errorf("%w: the entry is not in the signed batch: %w", tlog.ErrSignature, err)
	}
	return Receipt{Origin: b.Origin, ID: p.ID, Sequence: p.Sequence, EntryHash: p.EntryHash, Time: p.Time}, nil
}

// CommitGroup is the entries a store committed in one transaction, as
// receipts need them (id, sequence, entry hash and time), so that the
// receipts of all of them are signed once (ReceiptSigner.SignCommitted).
type CommitGroup struct {
	entries []Entry

	once     sync.Once
	by       *ReceiptSigner
	receipts []string
	err      error
}

// NewCommitGroup returns the group of stored, the entries one transaction
// committed in sequence order; nil when they are fewer than two or their
// sequences are not consecutive (their receipts are then signed one by
// one).
func NewCommitGroup(stored []Entry) *CommitGroup {
	if len(stored) < 2 {
		return nil
	}
	g := &CommitGroup{entries: make([]Entry, len(stored))}
	for i, e := range stored {
		if e.Sequence != stored[0].Sequence+int64(i) {
			return nil
		}
		g.entries[i] = Entry{ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time}
	}
	return g
}

// GroupSlot is where a store that commits entries in groups tells the
// caller of Append which group its entry was committed in. The caller
// puts it in Append's context (WithGroupSlot); a store that finds it there
// calls Set before Append returns. A store that does not, or an Appender
// in between that drops the context, leaves it empty: receipts are then
// signed one by one.
type GroupSlot struct {
	group *CommitGroup
	index int
}

// Set records that the entry was committed at index i of g. A nil g
// leaves the slot empty.
func (s *GroupSlot) Set(g *CommitGroup, i int) { s.group, s.index = g, i }

// groupSlotKey is the context key of a GroupSlot.
type groupSlotKey struct{}

// WithGroupSlot returns ctx carrying s for the store's Append.
func WithGroupSlot(ctx context.Context, s *GroupSlot) context.Context {
	return context.WithValue(ctx, groupSlotKey{}, s)
}

// GroupSlotFrom returns the GroupSlot of an Append's context, or nil.
func GroupSlotFrom(ctx context.Context) *GroupSlot {
	s, _ := ctx.Value(groupSlotKey{}).(*GroupSlot)
	return s
}

// SignCommitted returns the encoded receipt of the stored entry e whose
// Append filled slot: the batch receipt of its commit group, signed once
// for the whole group by the first of its callers to ask (the others wait
// for that signature, a few tens of microseconds, instead of each making
// one); or the v1 receipt (Sign) when slot is nil or empty, or names
// another entry, or the group was signed by another signer. Call it only
// once the entry is durable.
func (rs *ReceiptSigner) SignCommitted(e Entry, slot *GroupSlot) (string, error) {
	if slot == nil || slot.group == nil {
		return rs.Sign(e)
	}
	g, i := slot.group, slot.index
	if i < 0 || i >= len(g.entries) || g.entries[i].ID != e.ID || g.entries[i].Sequence != e.Sequence ||
		g.entries[i].EntryHash != e.EntryHash || !g.entries[i].Time.Equal(e.Time) {
		return rs.Sign(e)
	}
	g.once.Do(func() {
		g.by = rs
		g.receipts, g.err = rs.SignBatch(g.entries)
	})
	if g.by != rs || g.err != nil {
		return rs.Sign(e)
	}
	return g.receipts[i], nil
}
