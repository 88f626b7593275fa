package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// A receipt is the log's signed promise that one entry is in it: the
// "signed entry timestamp" of Certificate Transparency (SCT) and Sigstore's
// Rekor. It names the log, the entry's id, its sequence (leaf index + 1),
// its entry hash and its time, and is a C2SP signed note signed with the
// log's key. It is issued only after the entry's transaction committed.
// Since an entry hash chains every entry before it, a receipt commits to
// the whole log up to its entry: anyone holding it can later prove that
// the log lost or rewrote that entry, or any before it (CheckReceipt),
// even when every checkpoint since was signed over the shorter log.
//
// The note's text is six lines:
//
//	pgxsafety audit receipt v1
//	origin <log origin>
//	id <audit_log_id>
//	sequence <decimal>
//	entry_hash <64 lower-case hex digits>
//	time <RFC 3339, UTC, nanoseconds>
//
// Its first line holds spaces, which no key name (and so no checkpoint
// origin) may hold: a receipt is never read as a checkpoint, nor a
// checkpoint as a receipt. Clients get it base64-encoded, one
// header-safe token (EncodeReceipt).
//
// Entries committed together get batch receipts (v2, batchreceipt.go):
// one signature for the batch, and per entry its lines and audit path.
// OpenReceipt opens both to a Receipt.
type Receipt struct {
	Origin    string
	ID        string
	Sequence  int64
	EntryHash string
	Time      time.Time
}

// receiptHeader is the first line of a receipt.
const receiptHeader = "pgxsafety audit receipt v1"

// ReceiptOf is the receipt of a stored entry of the log origin.
func ReceiptOf(origin string, e Entry) Receipt {
	return Receipt{Origin: origin, ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time.UTC()}
}

// Marshal returns the note text of r.
func (r Receipt) Marshal() []byte {
	var b strings.Builder
	b.WriteString(receiptHeader + "\n")
	fmt.Fprintf(&b, "origin %s\nid %s\nsequence %d\nentry_hash %s\ntime %s\n",
		r.Origin, r.ID, r.Sequence, r.EntryHash, r.Time.UTC().Format(TimeFormat))
	return []byte(b.String())
}

// ParseReceipt parses the text of a receipt note strictly: the six lines
// in order, canonical numbers, hash and time, nothing else.
func ParseReceipt(text []byte) (Receipt, error) {
	bad := func(format string, a ...any) (Receipt, error) {
		return Receipt{}, fmt.Errorf("%w: receipt: %s", tlog.ErrFormat, fmt.Sprintf(format, a...))
	}
	s := string(text)
	if !strings.HasSuffix(s, "\n") {
		return bad("does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 6 || lines[0] != receiptHeader {
		return bad("not a %q note of six lines", receiptHeader)
	}
	var f [5]string
	for i, key := range []string{"origin", "id", "sequence", "entry_hash", "time"} {
		v, ok := strings.CutPrefix(lines[i+1], key+" ")
		if !ok || v == "" || strings.ContainsAny(v, " \t") {
			return bad("line %d is not %q and a value", i+2, key)
		}
		f[i] = v
	}
	r := Receipt{Origin: f[0], ID: f[1]}
	seq, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || seq < 1 || strconv.FormatInt(seq, 10) != f[2] {
		return bad("sequence %q is not a positive decimal number", f[2])
	}
	r.Sequence = seq
	if _, err := LeafHash(f[3]); err != nil || strings.ToLower(f[3]) != f[3] {
		return bad("entry_hash %q is not a lower-case hex SHA-256", f[3])
	}
	r.EntryHash = f[3]
	t, err := time.Parse(TimeFormat, f[4])
	if err != nil || t.UTC().Format(TimeFormat) != f[4] {
		return bad("time %q is not RFC 3339 in UTC", f[4])
	}
	r.Time = t.UTC()
	return r, nil
}

// ReceiptSigner signs the receipts of a log with its key.
type ReceiptSigner struct{ s *tlog.Signer }

// NewReceiptSigner returns the receipt signer of the log whose key is s
// (the log's origin is the key's name).
func NewReceiptSigner(s *tlog.Signer) *ReceiptSigner { return &ReceiptSigner{s: s} }

// Sign returns the encoded receipt (Encode) of a stored entry. Call it
// only once the entry is durable.
func (rs *ReceiptSigner) Sign(e Entry) (string, error) {
	if e.ID == "" || e.Sequence < 1 || e.EntryHash == "" {
		return "", fmt.Errorf("receipt: entry %q is not a stored entry", e.ID)
	}
	msg, err := rs.s.Sign(ReceiptOf(rs.s.Name(), e).Marshal())
	if err != nil {
		return "", fmt.Errorf("receipt: %w", err)
	}
	return EncodeReceipt(msg), nil
}

// EncodeReceipt is the form clients get a signed receipt note in: standard
// base64, one token that fits an HTTP header.
func EncodeReceipt(msg []byte) string { return base64.StdEncoding.EncodeToString(msg) }

// OpenReceipt checks a receipt, v1 or a batch receipt (v2), given
// encoded (EncodeReceipt) or as its text: it must carry a valid signature
// of key, name key's log, and, for a batch receipt, the entry's audit path
// must lead to the signed root. Either way it returns what the receipt
// says of its entry.
func OpenReceipt(key *tlog.Verifier, receipt string) (Receipt, error) {
	msg := []byte(strings.TrimSpace(receipt))
	if !strings.HasPrefix(string(msg), receiptHeader) && !strings.HasPrefix(string(msg), receiptV2Header) {
		raw, err := base64.StdEncoding.DecodeString(string(msg))
		if err != nil {
			return Receipt{}, fmt.Errorf("%w: receipt is neither base64 nor a signed note", tlog.ErrFormat)
		}
		msg = raw
	} else {
		msg = append(msg, '\n')
	}
	if strings.HasPrefix(string(msg), receiptV2Header+"\n") {
		return openBatchReceipt(key, msg)
	}
	text, err := key.Open(msg)
	if err != nil {
		return Receipt{}, err
	}
	r, err := ParseReceipt(text)
	if err != nil {
		return Receipt{}, err
	}
	if r.Origin != key.Name() {
		return Receipt{}, fmt.Errorf("%w: receipt of log %q, not of %q", tlog.ErrFormat, r.Origin, key.Name())
	}
	return r, nil
}

// OmissionError is the proof that a log does not hold an entry it signed a
// receipt for: its tree is shorter than the receipt's sequence, or its
// leaf at that position is another entry. It wraps ErrChainBroken.
type OmissionError struct {
	Receipt Receipt
	// Size is the number of leaves the log holds.
	Size uint64
	// Reason says what differs.
	Reason string
}

// Error describes the omission.
func (e *OmissionError) Error() string {
	return fmt.Sprintf("the log signed a receipt for entry %s at sequence %d (hash %s, %s) but %s",
		e.Receipt.ID, e.Receipt.Sequence, e.Receipt.EntryHash, e.Receipt.Time.Format(time.RFC3339), e.Reason)
}

// Unwrap makes errors.Is(err, ErrChainBroken) true.
func (e *OmissionError) Unwrap() error { return ErrChainBroken }

// CheckReceipt checks an opened receipt against the tree of the log as it
// is now: nil when leaf Sequence-1 is the receipted entry, else an
// *OmissionError. The tree must have been built from every leaf
// (BuildTree), so a log whose chain no longer holds is refused before.
func CheckReceipt(tree *tlog.Tree, r Receipt) error {
	leaf, err := LeafHash(r.EntryHash)
	if err != nil {
		return err
	}
	i := uint64(r.Sequence - 1)
	if i >= tree.Size() {
		return &OmissionError{Receipt: r, Size: tree.Size(), Reason: fmt.Sprintf(
			"the log holds only %d entries: the entry, and every entry after %d, were removed", tree.Size(), tree.Size())}
	}
	if tree.Leaf(i) != leaf {
		return &OmissionError{Receipt: r, Size: tree.Size(), Reason: fmt.Sprintf(
			"the log's entry at sequence %d has another hash: it, or an entry before it, was removed or rewritten", r.Sequence)}
	}
	return nil
}

// CheckReceiptIn checks an opened receipt against the log r as it is now
// (every leaf read, purged ones included). It returns the tree when the
// log holds the receipted entry at its position and verifies as a tree;
// an *OmissionError when the entry is missing or another entry stands in
// its place (whether or not the rest of the log still forms a tree); or
// the log's own *TreeError when the entry is in place but the log is
// broken elsewhere.
func CheckReceiptIn(ctx context.Context, r LeafReader, rc Receipt) (*tlog.Tree, error) {
	tree, treeErr := BuildTree(ctx, r)
	if treeErr == nil {
		return tree, CheckReceipt(tree, rc)
	}
	var te *TreeError
	if !errors.As(treeErr, &te) {
		return nil, treeErr
	}
	// The log does not form a tree: look at the receipt's position itself.
	var at *Leaf
	err := r.Leaves(ctx, rc.Sequence, func(lf Leaf) error {
		at = &lf
		return errStopLeaves
	})
	if err != nil && !errors.Is(err, errStopLeaves) {
		return nil, err
	}
	switch {
	case at == nil:
		return nil, &OmissionError{Receipt: rc, Reason: fmt.Sprintf("the log holds no entry at or after sequence %d (and does not form a tree: %v)", rc.Sequence, te)}
	case at.Sequence != rc.Sequence:
		return nil, &OmissionError{Receipt: rc, Reason: fmt.Sprintf("the log has no entry of sequence %d: the next one is %d (and it does not form a tree: %v)", rc.Sequence, at.Sequence, te)}
	case at.EntryHash != rc.EntryHash:
		return nil, &OmissionError{Receipt: rc, Reason: fmt.Sprintf("the log's entry at sequence %d has another hash (and it does not form a tree: %v)", rc.Sequence, te)}
	}
	return nil, treeErr
}

// errStopLeaves ends a Leaves walk early.
var errStopLeaves = errors.New("stop")
