package audit

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// The audit log is also a transparency log (RFC 6962, as Certificate
// Transparency and the Go checksum database): leaf i of its Merkle tree
// (0-based) is the entry of sequence i+1, hashed as
//
//	leaf hash = SHA-256(0x00 || the 32 bytes of the entry's entry_hash)
//
// Entries removed by the retention purge stay leaves: the store keeps their
// entry hashes (not their content). A signed checkpoint (origin, size, root)
// commits to every entry up to its size; an inclusion proof shows one entry
// is in it, a consistency proof that a later checkpoint extends it. So an
// entry removed from the end, changed, or reordered is detected by any
// checkpoint someone kept, even when the whole chain was rewritten with
// recomputed hashes.

// MinRetention is the shortest time an entry is kept: 365 days (spec §8).
// Stores refuse to purge an entry younger than this by any clock they can
// read, and VerifyLog refuses a retention checkpoint that covers one.
const MinRetention = 365 * 24 * time.Hour

// Leaf is one leaf of the tree as a store reads it.
type Leaf struct {
	// Sequence is the entry's sequence (leaf index + 1).
	Sequence int64
	// PrevHash is the entry's prev_hash, "" for a purged entry (only its
	// entry hash is kept).
	PrevHash string
	// EntryHash is the entry's entry_hash.
	EntryHash string
}

// LeafReader is implemented by stores that are transparency logs. Leaves
// calls fn, in sequence order, for every entry ever appended with Sequence
// >= from, purged entries included.
type LeafReader interface {
	Leaves(ctx context.Context, from int64, fn func(Leaf) error) error
}

// LeafHash is the Merkle leaf hash of the entry whose entry hash is
// entryHash (hex SHA-256).
func LeafHash(entryHash string) (tlog.Hash, error) {
	raw, err := hex.DecodeString(entryHash)
	if err != nil || len(raw) != tlog.HashSize {
		return tlog.Hash{}, fmt.Errorf("entry hash %q is not a hex SHA-256", entryHash)
	}
	return tlog.HashLeaf(raw), nil
}

// TreeError reports a log that does not match a checkpoint (or does not
// form a tree at all). It wraps ErrChainBroken.
type TreeError struct {
	// Size is the size of the checkpoint (or the leaf) concerned.
	Size uint64
	// Reason says what is wrong.
	Reason string
}

// Error describes the mismatch.
func (e *TreeError) Error() string {
	return fmt.Sprintf("audit log does not match the checkpoint of size %d: %s", e.Size, e.Reason)
}

// Unwrap makes errors.Is(err, ErrChainBroken) true.
func (e *TreeError) Unwrap() error { return ErrChainBroken }

// Log maintains the Merkle tree of a store in memory and answers for
// checkpoints and proofs. It catches up with the store (Sync) before each
// answer, so several replicas appending to one database see one tree. Once
// it finds the store inconsistent with the tree it already holds (entries
// removed, rewritten or reordered since it read them) it stays broken: it
// signs nothing more and reports the error. Log is safe for concurrent use.
type Log struct {
	r LeafReader

	mu       sync.Mutex
	tree     tlog.Tree
	lastHash string
	broken   error
}

// NewLog returns the transparency view of r; the first Sync reads every
// leaf.
func NewLog(r LeafReader) *Log { return &Log{r: r} }

// Sync appends the leaves added to the store since the last Sync and
// returns the tree size.
func (l *Log) Sync(ctx context.Context) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked(ctx)
}

func (l *Log) syncLocked(ctx context.Context) (uint64, error) {
	if l.broken != nil {
		return l.tree.Size(), l.broken
	}
	// Read from the last leaf already held: it must still be there,
	// unchanged, or the store lost or rewrote entries the tree holds.
	size := l.tree.Size()
	from, seenLast := int64(size), size == 0
	if size == 0 {
		from = 1
	}
	err := l.r.Leaves(ctx, from, func(lf Leaf) error {
		if !seenLast {
			seenLast = true
			if uint64(lf.Sequence) != size || lf.EntryHash != l.lastHash {
				return &TreeError{Size: size, Reason: fmt.Sprintf("entry %d is no longer the entry the tree holds (entries removed or rewritten)", size)}
			}
			return nil
		}
		return l.add(lf)
	})
	if err == nil && !seenLast {
		err = &TreeError{Size: size, Reason: fmt.Sprintf("the store no longer holds entry %d: entries were removed from its end", size)}
	}
	var te *TreeError
	if errors.As(err, &te) {
		l.broken = err
	}
	return l.tree.Size(), err
}

// add appends one leaf, checking that it is the next one and chains to the
// previous entry.
func (l *Log) add(lf Leaf) error {
	next := l.tree.Size() + 1
	if uint64(lf.Sequence) != next {
		return &TreeError{Size: next, Reason: fmt.Sprintf("leaf %d expected, the store has %d next (entries removed)", next, lf.Sequence)}
	}
	if lf.PrevHash != "" {
		want := GenesisHash
		if next > 1 {
			want = l.lastHash
		}
		if want != "" && lf.PrevHash != want {
			return &TreeError{Size: next, Reason: fmt.Sprintf("entry %d does not chain to entry %d (entries removed, rewritten or reordered)", next, next-1)}
		}
	}
	h, err := LeafHash(lf.EntryHash)
	if err != nil {
		return &TreeError{Size: next, Reason: err.Error()}
	}
	l.tree.Append(h)
	l.lastHash = lf.EntryHash
	return nil
}

// Broken returns the inconsistency Sync found, or nil.
func (l *Log) Broken() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// Checkpoint syncs and returns the checkpoint of the whole tree.
func (l *Log) Checkpoint(ctx context.Context, origin string) (tlog.Checkpoint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := l.syncLocked(ctx)
	if err != nil {
		return tlog.Checkpoint{}, err
	}
	root, err := l.tree.Root(size)
	if err != nil {
		return tlog.Checkpoint{}, err
	}
	return tlog.Checkpoint{Origin: origin, Size: size, Root: root}, nil
}

// Root returns the root of the tree of size leaves (syncing first).
func (l *Log) Root(ctx context.Context, size uint64) (tlog.Hash, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.syncLocked(ctx); err != nil {
		return tlog.Hash{}, err
	}
	return l.tree.Root(size)
}

// InclusionProof proves that the entry of sequence seq is in the tree of
// size leaves.
func (l *Log) InclusionProof(ctx context.Context, seq int64, size uint64) ([]tlog.Hash, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.syncLocked(ctx); err != nil {
		return nil, err
	}
	if seq < 1 {
		return nil, fmt.Errorf("%w: sequence %d", tlog.ErrProof, seq)
	}
	return l.tree.InclusionProof(uint64(seq-1), size)
}

// ConsistencyProof proves that the tree of size1 leaves is a prefix of the
// tree of size2 leaves.
func (l *Log) ConsistencyProof(ctx context.Context, size1, size2 uint64) ([]tlog.Hash, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.syncLocked(ctx); err != nil {
		return nil, err
	}
	return l.tree.ConsistencyProof(size1, size2)
}

// BuildTree reads every leaf of r into a new tree, checking that sequences
// are consecutive from 1 and that each retained entry chains to the one
// before.
func BuildTree(ctx context.Context, r LeafReader) (*tlog.Tree, error) {
	l := NewLog(r)
	if _, err := l.Sync(ctx); err != nil {
		return nil, err
	}
	return &l.tree, nil
}

// CheckAgainst checks tree against a checkpoint someone kept: the log must
// have at least cp.Size leaves (else entries were removed from its end) and
// the root of its first cp.Size leaves must be cp.Root (else entries up to
// cp.Size were changed, removed or reordered, even if every hash was
// recomputed).
func CheckAgainst(tree *tlog.Tree, cp tlog.Checkpoint) error {
	if cp.Size > tree.Size() {
		return &TreeError{Size: cp.Size, Reason: fmt.Sprintf(
			"the log holds %d entries but the checkpoint commits to %d: entries were removed from its end", tree.Size(), cp.Size)}
	}
	root, err := tree.Root(cp.Size)
	if err != nil {
		return err
	}
	if root != cp.Root {
		return &TreeError{Size: cp.Size, Reason: "the root of the log's first entries differs from the checkpoint's: entries were changed, removed or reordered"}
	}
	return nil
}

// retentionTag starts the extension line of a retention checkpoint.
const retentionTag = "pgxsafety-retention"

// RetentionNoteText is the text of the signed note that authorises a
// retention purge: the C2SP checkpoint of the tree up to the last removed
// entry (so it is an ordinary checkpoint to any verifier), with one
// extension line naming that entry's hash and time, the purge time and the
// number of entries removed.
func RetentionNoteText(origin string, cp Checkpoint, root tlog.Hash) []byte {
	return tlog.Checkpoint{
		Origin: origin,
		Size:   uint64(cp.ThroughSequence),
		Root:   root,
		Extensions: []string{fmt.Sprintf("%s %s %s %s %d", retentionTag, cp.EntryHash,
			cp.ThroughTime.UTC().Format(TimeFormat), cp.PurgedAt.UTC().Format(TimeFormat), cp.Removed)},
	}.Marshal()
}

// ErrRetentionCheckpoint is the kind of every error about a retention
// checkpoint that is unsigned, mis-signed, or covers entries younger than
// MinRetention. It wraps ErrChainBroken.
var ErrRetentionCheckpoint = fmt.Errorf("%w: retention checkpoint refused", ErrChainBroken)

// CheckRetention checks a retention checkpoint: its note must be signed by
// key and say exactly what the checkpoint row says, and the last removed
// entry must be at least MinRetention older than both the purge and now.
// It returns the tree checkpoint the note carries.
func CheckRetention(key *tlog.Verifier, cp Checkpoint, now time.Time) (tlog.Checkpoint, error) {
	refuse := func(format string, a ...any) (tlog.Checkpoint, error) {
		return tlog.Checkpoint{}, fmt.Errorf("%w (through sequence %d): %s", ErrRetentionCheckpoint, cp.ThroughSequence, fmt.Sprintf(format, a...))
	}
	if len(cp.Note) == 0 {
		return refuse("it is not signed")
	}
	if key == nil {
		return refuse("no log key to check its signature with")
	}
	tc, err := key.OpenCheckpoint(cp.Note)
	if err != nil {
		return refuse("%v", err)
	}
	if tc.Size != uint64(cp.ThroughSequence) || len(tc.Extensions) != 1 {
		return refuse("the signed note does not describe this checkpoint")
	}
	f := strings.Fields(tc.Extensions[0])
	if len(f) != 5 || f[0] != retentionTag {
		return refuse("the signed note is not a retention checkpoint")
	}
	through, err1 := time.Parse(TimeFormat, f[2])
	purged, err2 := time.Parse(TimeFormat, f[3])
	removed, err3 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return refuse("the signed note is malformed: %v", err)
	}
	if f[1] != cp.EntryHash || !through.Equal(cp.ThroughTime) || !purged.Equal(cp.PurgedAt) || removed != cp.Removed {
		return refuse("the signed note does not say what the checkpoint row says")
	}
	if through.After(purged.Add(-MinRetention)) {
		return refuse("it covers an entry of %s, less than 365 days before the purge at %s",
			through.Format(time.RFC3339), purged.Format(time.RFC3339))
	}
	if through.After(now.Add(-MinRetention)) {
		return refuse("it covers an entry of %s, less than 365 days before now (%s)", through.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return tc, nil
}

// VerifyOptions configures VerifyLog.
type VerifyOptions struct {
	// Key is the log's verifier key. Retention checkpoints and Kept
	// checkpoints must be signed by it.
	Key *tlog.Verifier
	// Kept are signed checkpoints kept outside the database (by a
	// witness, an auditor, a client). The log must extend each of them.
	Kept [][]byte
	// Now is the verifier's clock (time.Now when nil).
	Now func() time.Time
}

// LogSummary describes a verified transparency log.
type LogSummary struct {
	Summary
	// Tree is the Merkle tree of every leaf (nil when the reader is not a
	// LeafReader).
	Tree *tlog.Tree `json:"-"`
	// Size and Root describe the whole tree.
	Size uint64    `json:"size"`
	Root tlog.Hash `json:"-"`
	// KeptChecked is the number of kept checkpoints the log matches.
	KeptChecked int `json:"kept_checked"`
}

// VerifyLog verifies everything the log can prove on its own and against
// kept checkpoints: the hash chain of the retained entries (VerifyChain);
// the retention checkpoint's signature and age (CheckRetention); when r is
// a LeafReader, the Merkle tree of every leaf, the leaf the retention
// checkpoint names, and each kept checkpoint (CheckAgainst). Errors about
// the content wrap ErrChainBroken.
func VerifyLog(ctx context.Context, r Reader, opts VerifyOptions) (LogSummary, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var out LogSummary
	sum, err := verifyChain(ctx, r)
	out.Summary = sum
	if err != nil {
		return out, err
	}
	var checks []tlog.Checkpoint
	var retention *tlog.Checkpoint
	if cp := sum.Checkpoint; cp != nil {
		tc, err := CheckRetention(opts.Key, *cp, now())
		if err != nil {
			return out, err
		}
		retention = &tc
		checks = append(checks, tc)
	}
	for i, msg := range opts.Kept {
		if opts.Key == nil {
			return out, errors.New("audit verify: kept checkpoints need the log key")
		}
		tc, err := opts.Key.OpenCheckpoint(msg)
		if err != nil {
			return out, fmt.Errorf("kept checkpoint %d: %w", i+1, err)
		}
		checks = append(checks, tc)
	}
	lr, ok := r.(LeafReader)
	if !ok {
		if len(checks) > 0 {
			return out, errors.New("audit verify: the store cannot be checked against checkpoints (not a transparency log)")
		}
		return out, nil
	}
	tree, err := BuildTree(ctx, lr)
	if err != nil {
		return out, err
	}
	out.Tree, out.Size = tree, tree.Size()
	out.Root, _ = tree.Root(tree.Size())
	if sum.Entries > 0 && uint64(sum.LastSequence) != tree.Size() {
		return out, &TreeError{Size: tree.Size(), Reason: fmt.Sprintf("the tree has %d leaves but the last entry is %d", tree.Size(), sum.LastSequence)}
	}
	if retention != nil {
		seq := uint64(sum.Checkpoint.ThroughSequence)
		want, err := LeafHash(sum.Checkpoint.EntryHash)
		if err != nil || seq > tree.Size() || tree.Leaf(seq-1) != want {
			return out, &TreeError{Size: seq, Reason: "the leaf of the last purged entry is not the entry the retention checkpoint names"}
		}
	}
	for _, tc := range checks {
		if err := CheckAgainst(tree, tc); err != nil {
			return out, err
		}
	}
	out.KeptChecked = len(opts.Kept)
	return out, nil
}
