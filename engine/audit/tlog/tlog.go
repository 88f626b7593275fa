// Package tlog is the transparency-log layer of the audit log, written with
// the standard library only: RFC 6962 / RFC 9162 Merkle tree hashing, an
// in-memory tree that produces inclusion and consistency proofs, checkpoints
// in the C2SP tlog-checkpoint format, and Ed25519 signed notes in the C2SP
// signed-note format (the format of the Go checksum database).
//
// Its output is checked in tests against the transparency-dev verifier
// (github.com/transparency-dev/merkle/proof), golang.org/x/mod/sumdb/note and
// github.com/transparency-dev/formats/log, so any tool that speaks those
// formats can check this log.
package tlog

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
)

// HashSize is the size of a tree hash (SHA-256).
const HashSize = sha256.Size

// Hash is one node of the tree.
type Hash [HashSize]byte

// EmptyRoot is the root of the tree with no leaves: SHA-256 of nothing.
var EmptyRoot = Hash(sha256.Sum256(nil))

// HashLeaf is the RFC 6962 leaf hash: SHA-256(0x00 || data).
func HashLeaf(data []byte) Hash {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// HashChildren is the RFC 6962 interior node hash: SHA-256(0x01 || l || r).
func HashChildren(l, r Hash) Hash {
	var buf [1 + 2*HashSize]byte
	buf[0] = 1
	copy(buf[1:], l[:])
	copy(buf[1+HashSize:], r[:])
	return sha256.Sum256(buf[:])
}

// ErrProof is the kind of every error about a proof that does not verify
// or a request for a proof that cannot exist.
var ErrProof = errors.New("transparency log proof")

// Tree is an append-only Merkle tree held in memory. levels[0] holds the
// leaf hashes and levels[l][i] the root of the complete subtree of leaves
// [i·2^l, (i+1)·2^l), so the hash of any range is found without rehashing
// leaves. It costs about 64 bytes per leaf. A Tree is not safe for
// concurrent use.
type Tree struct {
	levels [][]Hash
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
	if len(t.levels) == 0 {
		t.levels = append(t.levels, nil)
	}
	t.levels[0] = append(t.levels[0], leaf)
	for l := 0; len(t.levels[l])%2 == 0; l++ {
		n := len(t.levels[l])
		parent := HashChildren(t.levels[l][n-2], t.levels[l][n-1])
		if l+1 == len(t.levels) {
			t.levels = append(t.levels, nil)
		}
		t.levels[l+1] = append(t.levels[l+1], parent)
	}
}

// Leaf returns the leaf hash at index i.
func (t *Tree) Leaf(i uint64) Hash { return t.levels[0][i] }

// split is the largest power of two smaller than n (n > 1).
func split(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }

// subtree is the Merkle tree hash of leaves [lo, hi), hi > lo.
func (t *Tree) subtree(lo, hi uint64) Hash {
	n := hi - lo
	if n&(n-1) == 0 && lo%n == 0 {
		l := bits.TrailingZeros64(n)
		return t.levels[l][lo>>l]
	}
	k := split(n)
	return HashChildren(t.subtree(lo, lo+k), t.subtree(lo+k, hi))
}

// Root is the root hash of the tree of the first size leaves.
func (t *Tree) Root(size uint64) (Hash, error) {
	if size > t.Size() {
		return Hash{}, fmt.Errorf("%w: tree size %d requested, the tree has %d leaves", ErrProof, size, t.Size())
	}
	if size == 0 {
		return EmptyRoot, nil
	}
	return t.subtree(0, size), nil
}

// InclusionProof is the audit path of leaf index in the tree of the first
// size leaves (RFC 6962 §2.1.1), leaf to root.
func (t *Tree) InclusionProof(index, size uint64) ([]Hash, error) {
	if size > t.Size() || index >= size {
		return nil, fmt.Errorf("%w: no inclusion proof for leaf %d in a tree of %d (the tree has %d leaves)", ErrProof, index, size, t.Size())
	}
	return t.path(index, 0, size), nil
}

func (t *Tree) path(m, lo, hi uint64) []Hash {
	n := hi - lo
	if n == 1 {
		return nil
	}
	k := split(n)
	if m < k {
		return append(t.path(m, lo, lo+k), t.subtree(lo+k, hi))
	}
	return append(t.path(m-k, lo+k, hi), t.subtree(lo, lo+k))
}

// ConsistencyProof proves that the tree of the first size1 leaves is a
// prefix of the tree of the first size2 leaves (RFC 6962 §2.1.2). It is
// empty when size1 is 0 or equal to size2.
func (t *Tree) ConsistencyProof(size1, size2 uint64) ([]Hash, error) {
	if size2 > t.Size() || size1 > size2 {
		return nil, fmt.Errorf("%w: no consistency proof from size %d to %d (the tree has %d leaves)", ErrProof, size1, size2, t.Size())
	}
	if size1 == 0 || size1 == size2 {
		return nil, nil
	}
	return t.subproof(size1, 0, size2, true), nil
}

func (t *Tree) subproof(m, lo, hi uint64, whole bool) []Hash {
	n := hi - lo
	if m == n {
		if whole {
			return nil
		}
		return []Hash{t.subtree(lo, hi)}
	}
	k := split(n)
	if m <= k {
		return append(t.subproof(m, lo, lo+k, whole), t.subtree(lo+k, hi))
	}
	return append(t.subproof(m-k, lo+k, hi, false), t.subtree(lo, lo+k))
}

// VerifyInclusion checks that leaf is at index in the tree of size leaves
// whose root is root, following RFC 9162 §2.1.3.2.
func VerifyInclusion(index, size uint64, leaf Hash, proof []Hash, root Hash) error {
	if index >= size {
		return fmt.Errorf("%w: leaf index %d is outside a tree of %d", ErrProof, index, size)
	}
	fn, sn := index, size-1
	r := leaf
	for _, p := range proof {
		if sn == 0 {
			return fmt.Errorf("%w: inclusion proof too long", ErrProof)
		}
		if fn&1 == 1 || fn == sn {
			r = HashChildren(p, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = HashChildren(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: inclusion proof too short", ErrProof)
	}
	if r != root {
		return fmt.Errorf("%w: inclusion proof of leaf %d leads to another root than the tree of %d", ErrProof, index, size)
	}
	return nil
}

// VerifyConsistency checks that the tree of size1 leaves with root1 is a
// prefix of the tree of size2 leaves with root2, following RFC 9162
// §2.1.4.2.
func VerifyConsistency(size1, size2 uint64, proof []Hash, root1, root2 Hash) error {
	switch {
	case size1 > size2:
		return fmt.Errorf("%w: the log shrank from %d to %d leaves", ErrProof, size1, size2)
	case size1 == size2:
		if len(proof) != 0 {
			return fmt.Errorf("%w: non-empty consistency proof between equal sizes", ErrProof)
		}
		if root1 != root2 {
			return fmt.Errorf("%w: two different roots for a tree of %d leaves", ErrProof, size1)
		}
		return nil
	case size1 == 0:
		if len(proof) != 0 {
			return fmt.Errorf("%w: non-empty consistency proof from the empty tree", ErrProof)
		}
		return nil
	}
	if len(proof) == 0 {
		return fmt.Errorf("%w: empty consistency proof", ErrProof)
	}
	p := proof
	if size1&(size1-1) == 0 {
		// size1 is a power of two: its root is the first node.
		p = append([]Hash{root1}, proof...)
	}
	fn, sn := size1-1, size2-1
	for fn&1 == 1 {
		fn >>= 1
		sn >>= 1
	}
	fr, sr := p[0], p[0]
	for _, c := range p[1:] {
		if sn == 0 {
			return fmt.Errorf("%w: consistency proof too long", ErrProof)
		}
		if fn&1 == 1 || fn == sn {
			fr = HashChildren(c, fr)
			sr = HashChildren(c, sr)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			sr = HashChildren(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: consistency proof too short", ErrProof)
	}
	if fr != root1 || sr != root2 {
		return fmt.Errorf("%w: the tree of %d leaves is not a prefix of the tree of %d leaves", ErrProof, size1, size2)
	}
	return nil
}
