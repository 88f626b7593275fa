package tlog_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	tdlog "github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// naiveRoot is RFC 6962's MTH written from the definition, for comparison.
func naiveRoot(leaves []tlog.Hash) tlog.Hash {
	switch len(leaves) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return leaves[0]
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	return tlog.HashChildren(naiveRoot(leaves[:k]), naiveRoot(leaves[k:]))
}

func leafHashes(n int) []tlog.Hash {
	var out []tlog.Hash
	for i := range n {
		out = append(out, tlog.HashLeaf([]byte(fmt.Sprintf("leaf %d", i))))
	}
	return out
}

func bytesOf(hs []tlog.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

func TestHashesMatchRFC6962Hasher(t *testing.T) {
	h := rfc6962.DefaultHasher
	data := []byte("pgxsafety")
	leaf := tlog.HashLeaf(data)
	if !bytes.Equal(leaf[:], h.HashLeaf(data)) {
		t.Error("HashLeaf differs from the transparency-dev RFC 6962 hasher")
	}
	node := tlog.HashChildren(leaf, leaf)
	if !bytes.Equal(node[:], h.HashChildren(leaf[:], leaf[:])) {
		t.Error("HashChildren differs from the transparency-dev RFC 6962 hasher")
	}
	if !bytes.Equal(tlog.EmptyRoot[:], h.EmptyRoot()) {
		t.Error("EmptyRoot differs")
	}
}

// TestProofsVerifyWithTransparencyDev checks every root, inclusion proof
// and consistency proof of trees up to 40 leaves against the transparency-
// dev verifier, and checks this package's verifier on the same proofs,
// intact and altered.
func TestProofsVerifyWithTransparencyDev(t *testing.T) {
	const max = 40
	leaves := leafHashes(max)
	var tree tlog.Tree
	for _, l := range leaves {
		tree.Append(l)
	}
	h := rfc6962.DefaultHasher
	for size := uint64(0); size <= max; size++ {
		root, err := tree.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		if want := naiveRoot(leaves[:size]); root != want {
			t.Fatalf("Root(%d) differs from the RFC 6962 definition", size)
		}
		for i := uint64(0); i < size; i++ {
			p, err := tree.InclusionProof(i, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyInclusion(h, i, size, leaves[i][:], bytesOf(p), root[:]); err != nil {
				t.Fatalf("transparency-dev rejects inclusion proof of %d in %d: %v", i, size, err)
			}
			if err := tlog.VerifyInclusion(i, size, leaves[i], p, root); err != nil {
				t.Fatalf("VerifyInclusion(%d, %d): %v", i, size, err)
			}
			other := leaves[(i+1)%max]
			if err := tlog.VerifyInclusion(i, size, other, p, root); err == nil && size > 1 {
				t.Fatalf("VerifyInclusion(%d, %d) accepted another leaf", i, size)
			}
		}
		for m := uint64(0); m <= size; m++ {
			p, err := tree.ConsistencyProof(m, size)
			if err != nil {
				t.Fatal(err)
			}
			r1, _ := tree.Root(m)
			if err := proof.VerifyConsistency(h, m, size, bytesOf(p), r1[:], root[:]); err != nil {
				t.Fatalf("transparency-dev rejects consistency proof %d→%d: %v", m, size, err)
			}
			if err := tlog.VerifyConsistency(m, size, p, r1, root); err != nil {
				t.Fatalf("VerifyConsistency(%d, %d): %v", m, size, err)
			}
			if m > 0 && m < size {
				bad := append([]tlog.Hash(nil), p...)
				bad[len(bad)-1][0] ^= 1
				if tlog.VerifyConsistency(m, size, bad, r1, root) == nil {
					t.Fatalf("VerifyConsistency(%d, %d) accepted an altered proof", m, size)
				}
				if proof.VerifyConsistency(h, m, size, bytesOf(bad), r1[:], root[:]) == nil {
					t.Fatalf("transparency-dev accepted an altered proof %d→%d", m, size)
				}
			}
		}
	}
	if _, err := tree.InclusionProof(5, max+1); !errors.Is(err, tlog.ErrProof) {
		t.Errorf("proof beyond the tree = %v, want ErrProof", err)
	}
	if err := tlog.VerifyConsistency(5, 4, nil, tlog.Hash{}, tlog.Hash{}); err == nil {
		t.Error("a shrinking log verified")
	}
}

func TestSignedCheckpointInteroperates(t *testing.T) {
	skey, vkey, err := tlog.GenerateKey(rand.Reader, "example.org/pgxsafety/audit")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	if s.Verifier().String() != vkey {
		t.Errorf("Verifier().String() = %q, want %q", s.Verifier().String(), vkey)
	}
	var tree tlog.Tree
	for _, l := range leafHashes(7) {
		tree.Append(l)
	}
	root, _ := tree.Root(7)
	cp := tlog.Checkpoint{Origin: s.Name(), Size: 7, Root: root, Extensions: []string{"retention 5"}}
	msg, err := s.SignCheckpoint(cp)
	if err != nil {
		t.Fatal(err)
	}

	// golang.org/x/mod/sumdb/note and transparency-dev/formats accept it.
	nv, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatalf("x/mod rejects the verifier key: %v", err)
	}
	n, err := note.Open(msg, note.VerifierList(nv))
	if err != nil {
		t.Fatalf("x/mod note.Open: %v", err)
	}
	if n.Text != string(cp.Marshal()) {
		t.Errorf("note text = %q", n.Text)
	}
	got, ext, _, err := tdlog.ParseCheckpoint(msg, s.Name(), nv)
	if err != nil {
		t.Fatalf("transparency-dev ParseCheckpoint: %v", err)
	}
	if got.Size != 7 || !bytes.Equal(got.Hash, root[:]) || string(ext) != "retention 5\n" {
		t.Errorf("transparency-dev read %+v, extensions %q", got, ext)
	}

	// And this package opens what they sign.
	v, err := tlog.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := note.NewSigner(skey)
	if err != nil {
		t.Fatalf("x/mod rejects the private key: %v", err)
	}
	xmsg, err := note.Sign(&note.Note{Text: string(cp.Marshal())}, xs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(xmsg, msg) {
		t.Errorf("x/mod signs differently:\n%s\nvs\n%s", xmsg, msg)
	}
	back, err := v.OpenCheckpoint(xmsg)
	if err != nil {
		t.Fatalf("OpenCheckpoint: %v", err)
	}
	if back.Size != cp.Size || back.Root != cp.Root || len(back.Extensions) != 1 {
		t.Errorf("OpenCheckpoint = %+v", back)
	}

	// Forgeries are refused: another key, an altered body, no signature.
	_, other, _ := tlog.GenerateKey(rand.Reader, s.Name())
	ov, _ := tlog.NewVerifier(other)
	if _, err := ov.OpenCheckpoint(msg); !errors.Is(err, tlog.ErrSignature) {
		t.Errorf("checkpoint opened with another key of the same name: %v", err)
	}
	altered := bytes.Replace(msg, []byte("\n7\n"), []byte("\n8\n"), 1)
	if _, err := v.OpenCheckpoint(altered); !errors.Is(err, tlog.ErrSignature) {
		t.Errorf("altered checkpoint: %v, want ErrSignature", err)
	}
	if _, err := v.OpenCheckpoint(cp.Marshal()); err == nil {
		t.Error("unsigned checkpoint opened")
	}
}

func TestKeysRejectMalformed(t *testing.T) {
	for _, k := range []string{"", "name", "a+b", "PRIVATE+KEY+x+00000000+AA==", "x+0000000g+AQ=="} {
		if _, err := tlog.NewVerifier(k); err == nil {
			t.Errorf("NewVerifier(%q) succeeded", k)
		}
		if _, err := tlog.NewSigner(k); err == nil {
			t.Errorf("NewSigner(%q) succeeded", k)
		}
	}
	if _, _, err := tlog.GenerateKey(rand.Reader, "has space"); err == nil {
		t.Error("GenerateKey accepted a name with a space")
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("o\n1\n" + "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"))
	f.Add([]byte("o\n01\nAA==\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := tlog.ParseCheckpoint(b)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Marshal(), b) {
			t.Fatalf("checkpoint %q re-marshals as %q", b, c.Marshal())
		}
	})
}

// BenchmarkTreeAppend is the server's cost per audit entry of keeping the
// tree (one leaf hash and, amortised, one interior hash).
func BenchmarkTreeAppend(b *testing.B) {
	leaf := tlog.HashLeaf([]byte("entry"))
	var tree tlog.Tree
	for b.Loop() {
		tree.Append(leaf)
	}
}

// BenchmarkProofs measures an inclusion proof and a consistency proof in a
// tree of a million entries.
func BenchmarkProofs(b *testing.B) {
	const n = 1 << 20
	var tree tlog.Tree
	for i := range n {
		tree.Append(tlog.HashLeaf([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
	}
	b.Run("inclusion", func(b *testing.B) {
		i := uint64(0)
		for b.Loop() {
			if _, err := tree.InclusionProof(i%n, n-1); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
	b.Run("consistency", func(b *testing.B) {
		i := uint64(1)
		for b.Loop() {
			if _, err := tree.ConsistencyProof(i%(n-2)+1, n-1); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
}
