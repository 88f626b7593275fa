package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Witness cosignatures in the C2SP tlog-cosignature format (version
// cosignature/v1, Ed25519): a witness signs
//
//	cosignature/v1
//	time <Unix seconds>
//	<the checkpoint body>
//
// and its note signature is base64(key hash (4 bytes) || time (8 bytes,
// big-endian) || Ed25519 signature). Its key hash is the first four bytes
// of SHA-256(name || "\n" || 0x04 || public key). golang.org/x/mod's note
// package frames and checks the signature lines; this file supplies the
// signer and verifier of that algorithm.

// algCosignatureV1 is the signed-note algorithm byte of cosignature/v1.
const algCosignatureV1 = 4

// Cosigner signs cosignatures with a witness's Ed25519 key.
type Cosigner struct {
	name string
	hash uint32
	key  ed25519.PrivateKey
	// Now is the witness clock (time.Now when nil).
	Now func() time.Time
}

// CosignatureVerifier checks the cosignatures of one witness key. It is a
// note.Verifier.
type CosignatureVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

var _ note.Verifier = (*CosignatureVerifier)(nil)

func cosignatureKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.Sum256(append(append([]byte(name+"\n"), algCosignatureV1), pub...))
	return binary.BigEndian.Uint32(h[:4])
}

// NewCosigner reads a witness key made by GenerateKey (a signed-note
// Ed25519 private key): the same seed signs cosignatures.
func NewCosigner(skey string) (*Cosigner, error) {
	s, err := NewSigner(skey)
	if err != nil {
		return nil, err
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.SplitN(strings.TrimSpace(skey), "+", 5)[4])
	priv := ed25519.NewKeyFromSeed(raw[1:])
	return &Cosigner{name: s.Name(), hash: cosignatureKeyHash(s.Name(), priv.Public().(ed25519.PublicKey)), key: priv}, nil
}

// Name is the witness's name.
func (c *Cosigner) Name() string { return c.name }

// VerifierKey is the witness's cosignature verifier key,
// "NAME+HASH+BASE64(0x04 || public key)", which logs configure.
func (c *Cosigner) VerifierKey() string {
	pub := c.key.Public().(ed25519.PublicKey)
	return fmt.Sprintf("%s+%08x+%s", c.name, c.hash, base64.StdEncoding.EncodeToString(append([]byte{algCosignatureV1}, pub...)))
}

func cosignedMessage(t uint64, checkpoint []byte) []byte {
	return append([]byte("cosignature/v1\ntime "+strconv.FormatUint(t, 10)+"\n"), checkpoint...)
}

// Cosign returns the signature line ("— NAME BASE64\n") of the witness's
// cosignature of a checkpoint body, timestamped now.
func (c *Cosigner) Cosign(checkpoint []byte) ([]byte, error) {
	if _, err := ParseCheckpoint(checkpoint); err != nil {
		return nil, err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	t := uint64(now().Unix())
	sig := binary.BigEndian.AppendUint32(nil, c.hash)
	sig = binary.BigEndian.AppendUint64(sig, t)
	sig = append(sig, ed25519.Sign(c.key, cosignedMessage(t, checkpoint))...)
	return []byte("— " + c.name + " " + base64.StdEncoding.EncodeToString(sig) + "\n"), nil
}

// NewCosignatureVerifier parses a witness's cosignature verifier key.
func NewCosignatureVerifier(vkey string) (*CosignatureVerifier, error) {
	f := strings.SplitN(strings.TrimSpace(vkey), "+", 3)
	if len(f) != 3 || !validName(f[0]) || len(f[1]) != 8 {
		return nil, fmt.Errorf("%w: witness key %q is not NAME+HASH+KEY", ErrFormat, vkey)
	}
	h, err1 := strconv.ParseUint(f[1], 16, 32)
	raw, err2 := base64.StdEncoding.DecodeString(f[2])
	if err1 != nil || err2 != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != algCosignatureV1 {
		return nil, fmt.Errorf("%w: witness key %q is not a cosignature/v1 Ed25519 key", ErrFormat, vkey)
	}
	pub := ed25519.PublicKey(raw[1:])
	if uint32(h) != cosignatureKeyHash(f[0], pub) {
		return nil, fmt.Errorf("%w: witness key %q: its hash does not match its name and key", ErrFormat, vkey)
	}
	return &CosignatureVerifier{name: f[0], hash: uint32(h), key: pub}, nil
}

// Name implements note.Verifier.
func (v *CosignatureVerifier) Name() string { return v.name }

// KeyHash implements note.Verifier.
func (v *CosignatureVerifier) KeyHash() uint32 { return v.hash }

// Verify implements note.Verifier: sig is time || signature over the
// cosigned message of msg (a checkpoint body).
func (v *CosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	if _, err := ParseCheckpoint(msg); err != nil {
		return false
	}
	return ed25519.Verify(v.key, cosignedMessage(binary.BigEndian.Uint64(sig), msg), sig[8:])
}

// ErrNotCosigned is the kind of the error OpenCosigned returns when the
// witness's cosignature is missing or does not verify.
var ErrNotCosigned = errors.New("checkpoint is not cosigned by the witness")

// OpenCosigned opens a checkpoint that must carry both the log's signature
// (key) and the witness's cosignature (w).
func OpenCosigned(msg []byte, key *Verifier, w *CosignatureVerifier) (Checkpoint, error) {
	cp, err := key.OpenCheckpoint(msg)
	if err != nil {
		return Checkpoint{}, err
	}
	n, err := note.Open(msg, note.VerifierList(w))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %s: %v", ErrNotCosigned, w.Name(), err)
	}
	for _, s := range n.Sigs {
		if s.Name == w.Name() && s.Hash == w.KeyHash() {
			return cp, nil
		}
	}
	return Checkpoint{}, fmt.Errorf("%w: %s", ErrNotCosigned, w.Name())
}

// SplitNote returns the text of a signed note and its signature block
// (the lines after the blank line).
func SplitNote(msg []byte) (text, sigs []byte, err error) {
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 {
		return nil, nil, fmt.Errorf("%w: not a signed note", ErrFormat)
	}
	return msg[:i+1], msg[i+2:], nil
}
