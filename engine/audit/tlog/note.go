package tlog

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tdlog "github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is the C2SP tlog-checkpoint body: the log's origin, its size
// and its root hash, each on a line, then optional extension lines.
type Checkpoint struct {
	// Origin names the log (it is also the name of the key that signs).
	Origin string
	// Size is the number of leaves.
	Size uint64
	// Root is the root hash of the tree of Size leaves.
	Root Hash
	// Extensions are the lines after the root, without their newlines.
	Extensions []string
}

// Marshal returns the checkpoint body, newline-terminated.
func (c Checkpoint) Marshal() []byte {
	b := tdlog.Checkpoint{Origin: c.Origin, Size: c.Size, Hash: c.Root[:]}.Marshal()
	for _, e := range c.Extensions {
		b = append(b, e...)
		b = append(b, '\n')
	}
	return b
}

// ErrFormat is the kind of every error about a malformed checkpoint, note
// or key.
var ErrFormat = errors.New("malformed transparency log data")

// ParseCheckpoint parses a checkpoint body (the text of a signed note).
// transparency-dev/formats reads the three fixed lines; it accepts forms
// that do not marshal back to the same bytes ("01", non-canonical base64,
// a hash of any length), so the canonical form and the extension lines are
// checked here: a parsed checkpoint always marshals back to text.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint does not end with a newline", ErrFormat)
	}
	var tc tdlog.Checkpoint
	rest, err := tc.Unmarshal(text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	lines := strings.SplitN(string(text), "\n", 4)
	if strconv.FormatUint(tc.Size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint size %q is not a decimal number", ErrFormat, lines[1])
	}
	if len(tc.Hash) != HashSize || base64.StdEncoding.EncodeToString(tc.Hash) != lines[2] {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint root is not a canonical base64 SHA-256 hash", ErrFormat)
	}
	c := Checkpoint{Origin: tc.Origin, Size: tc.Size, Root: Hash(tc.Hash)}
	if len(rest) > 0 {
		for _, e := range strings.Split(string(rest[:len(rest)-1]), "\n") {
			if e == "" {
				return Checkpoint{}, fmt.Errorf("%w: empty checkpoint extension line", ErrFormat)
			}
			c.Extensions = append(c.Extensions, e)
		}
	}
	return c, nil
}

// Signer signs notes with an Ed25519 key (golang.org/x/mod/sumdb/note).
type Signer struct {
	signer   note.Signer
	verifier *Verifier
}

// Verifier checks notes signed by one Ed25519 key.
type Verifier struct {
	verifier note.Verifier
	vkey     string
}

// Name is the key's name (the log origin).
func (s *Signer) Name() string { return s.signer.Name() }

// Verifier returns the verifier of s's key.
func (s *Signer) Verifier() *Verifier { return s.verifier }

// Name is the key's name (the log origin).
func (v *Verifier) Name() string { return v.verifier.Name() }

// String is the verifier key in the signed-note text form
// "NAME+HASH+BASE64", which auditors keep.
func (v *Verifier) String() string { return v.vkey }

// GenerateKey returns a new Ed25519 key named name, as a signed-note
// private key ("PRIVATE+KEY+NAME+HASH+BASE64") and verifier key.
func GenerateKey(rand io.Reader, name string) (skey, vkey string, err error) {
	if !validName(name) {
		return "", "", fmt.Errorf("%w: key name %q must be non-empty, printable, without spaces or '+'", ErrFormat, name)
	}
	skey, vkey, err = note.GenerateKey(rand, name)
	if err != nil {
		return "", "", fmt.Errorf("%w: key %q: %v", ErrFormat, name, err)
	}
	return skey, vkey, nil
}

// validName reports whether name may name a key: non-empty, printable, no
// spaces and no '+'. x/mod's GenerateKey does not check the name (its
// NewSigner later refuses spaces and '+', not unprintable runes).
func validName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.Contains(name, "+") &&
		!strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

// checkText enforces the signed-note rules on a note's text: valid UTF-8,
// newline-terminated, no control characters but newline (DEL included).
// x/mod's Sign checks only the final newline, and its Open lets DEL pass.
func checkText(text []byte) error {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return fmt.Errorf("%w: note text must end with a newline", ErrFormat)
	}
	if !utf8.Valid(text) {
		return fmt.Errorf("%w: note text is not UTF-8", ErrFormat)
	}
	if bytes.ContainsFunc(text, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) {
		return fmt.Errorf("%w: note text holds a control character", ErrFormat)
	}
	return nil
}

// algEd25519 is the signed-note algorithm byte of Ed25519 keys.
const algEd25519 = 1

// NewSigner parses a private key made by GenerateKey. x/mod's signer does
// not give its public key, so the verifier key is derived here from the
// seed (the key's fifth field) once x/mod has accepted the key.
func NewSigner(skey string) (*Signer, error) {
	skey = strings.TrimSpace(skey)
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", ErrFormat, err)
	}
	// PRIVATE+KEY+NAME+HASH+BASE64: names hold no '+', base64 may.
	raw, err := base64.StdEncoding.DecodeString(strings.SplitN(skey, "+", 5)[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != algEd25519 {
		return nil, fmt.Errorf("%w: private key is not an Ed25519 key", ErrFormat)
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, fmt.Errorf("%w: private key: %v", ErrFormat, err)
	}
	v, err := NewVerifier(vkey)
	if err != nil {
		return nil, err
	}
	return &Signer{signer: s, verifier: v}, nil
}

// NewVerifier parses a verifier key "NAME+HASH+BASE64".
func NewVerifier(vkey string) (*Verifier, error) {
	vkey = strings.TrimSpace(vkey)
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: verifier key: %v", ErrFormat, err)
	}
	return &Verifier{verifier: v, vkey: vkey}, nil
}

// Sign returns the signed note of text: the text, a blank line and one
// signature line.
func (s *Signer) Sign(text []byte) ([]byte, error) {
	if err := checkText(text); err != nil {
		return nil, err
	}
	msg, err := note.Sign(&note.Note{Text: string(text)}, s.signer)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return msg, nil
}

// ErrSignature is the kind of the error Open returns when the note carries
// no valid signature of the verifier's key.
var ErrSignature = errors.New("note is not signed by the log's key")

// Open checks that msg is a signed note with a valid signature of v's key
// and returns its text. Signatures of other keys are ignored; a signature
// line naming v's key that does not verify is an error.
func (v *Verifier) Open(msg []byte) ([]byte, error) {
	n, err := note.Open(msg, note.VerifierList(v.verifier))
	var invalid *note.InvalidSignatureError
	var unverified *note.UnverifiedNoteError
	switch {
	case errors.As(err, &invalid):
		return nil, fmt.Errorf("%w: the signature of %s does not verify", ErrSignature, v.Name())
	case errors.As(err, &unverified):
		return nil, fmt.Errorf("%w: no signature of %s", ErrSignature, v.Name())
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if err := checkText([]byte(n.Text)); err != nil {
		return nil, err
	}
	return []byte(n.Text), nil
}

// OpenCheckpoint opens a signed checkpoint of v's log: the note must carry
// v's signature and the checkpoint's origin must be v's name.
func (v *Verifier) OpenCheckpoint(msg []byte) (Checkpoint, error) {
	text, err := v.Open(msg)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := ParseCheckpoint(text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint origin %q is not the log %q", ErrFormat, c.Origin, v.Name())
	}
	return c, nil
}

// SignCheckpoint returns c signed by s. c.Origin must be s's name.
func (s *Signer) SignCheckpoint(c Checkpoint) ([]byte, error) {
	if c.Origin != s.Name() {
		return nil, fmt.Errorf("%w: checkpoint origin %q is not the key name %q", ErrFormat, c.Origin, s.Name())
	}
	return s.Sign(c.Marshal())
}
