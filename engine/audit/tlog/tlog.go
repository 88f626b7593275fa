// Package tlog is the transparency-log layer of the audit log: RFC 6962 /
// RFC 9162 Merkle tree hashing and proofs (github.com/transparency-dev/merkle),
// an in-memory tree that serves inclusion and consistency proofs, checkpoints
// in the C2SP tlog-checkpoint format (github.com/transparency-dev/formats/log)
// and Ed25519 signed notes in the C2SP signed-note format
// (golang.org/x/mod/sumdb/note, the format of the Go checksum database).
//
// What the package adds to those libraries: fixed-size Hash values, a tree
// that keeps every perfect-subtree hash so any earlier root and any proof is
// served without rehashing leaves, strict checkpoint parsing (canonical
// numbers and base64, extension lines) and error kinds (ErrProof, ErrFormat,
// ErrSignature) that callers test with errors.Is.
package tlog

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// HashSize is the size of a tree hash (SHA-256).
const HashSize = sha256.Size

// Hash is one node of the tree.
type Hash [HashSize]byte

// hasher is the RFC 6962 SHA-256 tree hasher.
var hasher = rfc6962.DefaultHasher

// EmptyRoot is the root of the tree with no leaves: SHA-256 of nothing.
var EmptyRoot = Hash(hasher.EmptyRoot())

// HashLeaf is the RFC 6962 leaf hash: SHA-256(0x00 || data).
func HashLeaf(data []byte) Hash { return Hash(hasher.HashLeaf(data)) }

// HashChildren is the RFC 6962 interior node hash: SHA-256(0x01 || l || r).
func HashChildren(l, r Hash) Hash { return Hash(hasher.HashChildren(l[:], r[:])) }

// ErrProof is the kind of every error about a proof that does not verify
// or a request for a proof that cannot exist.
var ErrProof = errors.New("transparency log proof")

// rangeFactory builds compact ranges with the RFC 6962 node hash.
var rangeFactory = &compact.RangeFactory{Hash: hasher.HashChildren}

// Tree is an append-only Merkle tree held in memory. A compact range
// (transparency-dev/merkle/compact) appends leaves; every node it creates
// is kept, levels[l][i] being the root of the perfect subtree of leaves
// [i·2^l, (i+1)·2^l), so the root of any prefix and the nodes of any proof
// are found without rehashing leaves. It costs about 64 bytes per leaf. A
// Tree is not safe for concurrent use.
type Tree struct {
	levels [][]Hash
	rng    *compact.Range
}

// Size is the number of leaves.
func (t *Tree) Size() uint64 {
	if len(t.levels) == 0 {
		return 0
	}
	return uint64(len(t.levels[0]))
}

// Append adds a leaf hash (see HashLeaf) at index Size().
func (t *Tree) Append(leaf Hash) {
	if t.rng == nil {
		t.rng = rangeFactory.NewEmptyRange(0)
	}
	// Append fails only for hashes of a range that does not start at 0.
	_ = t.rng.Append(leaf[:], t.store)
}

// store keeps a node the compact range created; nodes come level by level
// in index order.
func (t *Tree) store(id compact.NodeID, h []byte) {
	for uint(len(t.levels)) <= id.Level {
		t.levels = append(t.levels, nil)
	}
	t.levels[id.Level] = append(t.levels[id.Level], Hash(h))
}

// node is the hash of a perfect subtree the tree holds.
func (t *Tree) node(id compact.NodeID) []byte {
	h := t.levels[id.Level][id.Index]
	return h[:]
}

// Leaf returns the leaf hash at index i.
func (t *Tree) Leaf(i uint64) Hash { return t.levels[0][i] }

// Root is the root hash of the tree of the first size leaves.
func (t *Tree) Root(size uint64) (Hash, error) {
	if size > t.Size() {
		return Hash{}, fmt.Errorf("%w: tree size %d requested, the tree has %d leaves", ErrProof, size, t.Size())
	}
	if size == 0 {
		return EmptyRoot, nil
	}
	ids := compact.RangeNodes(0, size, nil)
	hashes := make([][]byte, len(ids))
	for i, id := range ids {
		hashes[i] = t.node(id)
	}
	r, err := rangeFactory.NewRange(0, size, hashes)
	if err != nil {
		return Hash{}, fmt.Errorf("%w: %v", ErrProof, err)
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		return Hash{}, fmt.Errorf("%w: %v", ErrProof, err)
	}
	return Hash(root), nil
}

// build fetches the nodes of a proof and hashes its ephemeral node.
func (t *Tree) build(n proof.Nodes) ([]Hash, error) {
	hashes := make([][]byte, len(n.IDs))
	for i, id := range n.IDs {
		hashes[i] = t.node(id)
	}
	hashes, err := n.Rehash(hashes, hasher.HashChildren)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	if len(hashes) == 0 {
		return nil, nil
	}
	out := make([]Hash, len(hashes))
	for i, h := range hashes {
		out[i] = Hash(h)
	}
	return out, nil
}

// InclusionProof is the audit path of leaf index in the tree of the first
// size leaves (RFC 6962 §2.1.1), leaf to root.
func (t *Tree) InclusionProof(index, size uint64) ([]Hash, error) {
	if size > t.Size() || index >= size {
		return nil, fmt.Errorf("%w: no inclusion proof for leaf %d in a tree of %d (the tree has %d leaves)", ErrProof, index, size, t.Size())
	}
	n, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	return t.build(n)
}

// ConsistencyProof proves that the tree of the first size1 leaves is a
// prefix of the tree of the first size2 leaves (RFC 6962 §2.1.2). It is
// empty when size1 is 0 or equal to size2.
func (t *Tree) ConsistencyProof(size1, size2 uint64) ([]Hash, error) {
	if size2 > t.Size() || size1 > size2 {
		return nil, fmt.Errorf("%w: no consistency proof from size %d to %d (the tree has %d leaves)", ErrProof, size1, size2, t.Size())
	}
	n, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProof, err)
	}
	return t.build(n)
}

// slices is hs as the byte slices the verifiers take.
func slices(hs []Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

// VerifyInclusion checks that leaf is at index in the tree of size leaves
// whose root is root (RFC 9162 §2.1.3.2).
func VerifyInclusion(index, size uint64, leaf Hash, p []Hash, root Hash) error {
	if index >= size {
		return fmt.Errorf("%w: leaf index %d is outside a tree of %d", ErrProof, index, size)
	}
	if err := proof.VerifyInclusion(hasher, index, size, leaf[:], slices(p), root[:]); err != nil {
		return fmt.Errorf("%w: inclusion of leaf %d in the tree of %d: %v", ErrProof, index, size, err)
	}
	return nil
}

// VerifyConsistency checks that the tree of size1 leaves with root1 is a
// prefix of the tree of size2 leaves with root2 (RFC 9162 §2.1.4.2).
func VerifyConsistency(size1, size2 uint64, p []Hash, root1, root2 Hash) error {
	if size1 > size2 {
		return fmt.Errorf("%w: the log shrank from %d to %d leaves", ErrProof, size1, size2)
	}
	if err := proof.VerifyConsistency(hasher, size1, size2, slices(p), root1[:], root2[:]); err != nil {
		return fmt.Errorf("%w: the tree of %d leaves is not a prefix of the tree of %d leaves: %v", ErrProof, size1, size2, err)
	}
	return nil
}
