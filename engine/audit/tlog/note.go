package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
	for _, e := range c.Extensions {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// ErrFormat is the kind of every error about a malformed checkpoint, note
// or key.
var ErrFormat = errors.New("malformed transparency log data")

// ParseCheckpoint parses a checkpoint body (the text of a signed note).
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint does not end with a newline", ErrFormat)
	}
	lines := strings.Split(string(text[:len(text)-1]), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint has fewer than three lines", ErrFormat)
	}
	c := Checkpoint{Origin: lines[0]}
	if c.Origin == "" {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint origin is empty", ErrFormat)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || strconv.FormatUint(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint size %q is not a decimal number", ErrFormat, lines[1])
	}
	c.Size = size
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != HashSize {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint root is not a canonical base64 SHA-256 hash", ErrFormat)
	}
	copy(c.Root[:], root)
	for _, e := range lines[3:] {
		if e == "" {
			return Checkpoint{}, fmt.Errorf("%w: empty checkpoint extension line", ErrFormat)
		}
		c.Extensions = append(c.Extensions, e)
	}
	return c, nil
}

// algEd25519 is the signed-note algorithm byte of Ed25519 keys.
const algEd25519 = 1

// validName reports whether name may name a key: non-empty, printable, no
// spaces and no '+'.
func validName(name string) bool {
	if name == "" || !utf8.ValidString(name) || strings.Contains(name, "+") {
		return false
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// keyHash is the signed-note key id: the first four bytes of
// SHA-256(name || "\n" || algorithm || public key).
func keyHash(name string, key []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte("\n"))
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// Signer signs notes with an Ed25519 key.
type Signer struct {
	name string
	hash uint32
	key  ed25519.PrivateKey
}

// Verifier checks notes signed by one Ed25519 key.
type Verifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

// Name is the key's name (the log origin).
func (s *Signer) Name() string { return s.name }

// Verifier returns the verifier of s's key.
func (s *Signer) Verifier() *Verifier {
	return &Verifier{name: s.name, hash: s.hash, key: s.key.Public().(ed25519.PublicKey)}
}

// Name is the key's name (the log origin).
func (v *Verifier) Name() string { return v.name }

// String is the verifier key in the signed-note text form
// "NAME+HASH+BASE64", which auditors keep.
func (v *Verifier) String() string {
	return fmt.Sprintf("%s+%08x+%s", v.name, v.hash, base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, v.key...)))
}

// GenerateKey returns a new Ed25519 key named name, as a signed-note
// private key ("PRIVATE+KEY+NAME+HASH+BASE64") and verifier key.
func GenerateKey(rand io.Reader, name string) (skey, vkey string, err error) {
	if !validName(name) {
		return "", "", fmt.Errorf("%w: key name %q must be non-empty, printable, without spaces or '+'", ErrFormat, name)
	}
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return "", "", err
	}
	pk := append([]byte{algEd25519}, pub...)
	h := keyHash(name, pk)
	skey = fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, h, base64.StdEncoding.EncodeToString(append([]byte{algEd25519}, priv.Seed()...)))
	vkey = fmt.Sprintf("%s+%08x+%s", name, h, base64.StdEncoding.EncodeToString(pk))
	return skey, vkey, nil
}

// splitKey splits "NAME+HASH+BASE64" (names hold no '+'; base64 may) and
// checks the form.
func splitKey(s string) (name string, hash uint32, key []byte, err error) {
	name, rest, ok1 := strings.Cut(s, "+")
	hexHash, b64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 {
		return "", 0, nil, fmt.Errorf("%w: key is not NAME+HASH+KEY", ErrFormat)
	}
	h, err1 := strconv.ParseUint(hexHash, 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(b64)
	if err1 != nil || len(hexHash) != 8 || err2 != nil || len(key) == 0 || !validName(name) {
		return "", 0, nil, fmt.Errorf("%w: key is not NAME+HASH+KEY", ErrFormat)
	}
	return name, uint32(h), key, nil
}

// NewSigner parses a private key made by GenerateKey.
func NewSigner(skey string) (*Signer, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(skey), "PRIVATE+KEY+")
	if !ok {
		return nil, fmt.Errorf("%w: private key does not start with PRIVATE+KEY+", ErrFormat)
	}
	name, h, key, err := splitKey(rest)
	if err != nil {
		return nil, err
	}
	if len(key) != 1+ed25519.SeedSize || key[0] != algEd25519 {
		return nil, fmt.Errorf("%w: private key is not an Ed25519 key", ErrFormat)
	}
	priv := ed25519.NewKeyFromSeed(key[1:])
	pk := append([]byte{algEd25519}, priv.Public().(ed25519.PublicKey)...)
	if keyHash(name, pk) != h {
		return nil, fmt.Errorf("%w: private key hash does not match its name and key", ErrFormat)
	}
	return &Signer{name: name, hash: h, key: priv}, nil
}

// NewVerifier parses a verifier key "NAME+HASH+BASE64".
func NewVerifier(vkey string) (*Verifier, error) {
	name, h, key, err := splitKey(strings.TrimSpace(vkey))
	if err != nil {
		return nil, err
	}
	if len(key) != 1+ed25519.PublicKeySize || key[0] != algEd25519 {
		return nil, fmt.Errorf("%w: verifier key is not an Ed25519 key", ErrFormat)
	}
	if keyHash(name, key) != h {
		return nil, fmt.Errorf("%w: verifier key hash does not match its name and key", ErrFormat)
	}
	return &Verifier{name: name, hash: h, key: ed25519.PublicKey(key[1:])}, nil
}

// sigPrefix starts every signature line of a note: an em dash and a space.
const sigPrefix = "\u2014 "

// checkText enforces the signed-note rules on a note's text: valid UTF-8,
// newline-terminated, no control characters but newline.
func checkText(text []byte) error {
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return fmt.Errorf("%w: note text must end with a newline", ErrFormat)
	}
	if !utf8.Valid(text) {
		return fmt.Errorf("%w: note text is not UTF-8", ErrFormat)
	}
	for _, r := range string(text) {
		if r < 0x20 && r != '\n' || r == 0x7f {
			return fmt.Errorf("%w: note text holds a control character", ErrFormat)
		}
	}
	return nil
}

// Sign returns the signed note of text: the text, a blank line and one
// signature line.
func (s *Signer) Sign(text []byte) ([]byte, error) {
	if err := checkText(text); err != nil {
		return nil, err
	}
	sig := ed25519.Sign(s.key, text)
	var buf bytes.Buffer
	buf.Write(text)
	buf.WriteString("\n" + sigPrefix + s.name + " ")
	var id [4]byte
	binary.BigEndian.PutUint32(id[:], s.hash)
	buf.WriteString(base64.StdEncoding.EncodeToString(append(id[:], sig...)))
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// ErrSignature is the kind of the error Open returns when the note carries
// no valid signature of the verifier's key.
var ErrSignature = errors.New("note is not signed by the log's key")

// Open checks that msg is a signed note with a valid signature of v's key
// and returns its text. Signatures of other keys are ignored; a signature
// line naming v's key that does not verify is an error.
func (v *Verifier) Open(msg []byte) ([]byte, error) {
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 {
		return nil, fmt.Errorf("%w: note has no signature block", ErrFormat)
	}
	text, sigs := msg[:i+1], msg[i+2:]
	if err := checkText(text); err != nil {
		return nil, err
	}
	if len(sigs) == 0 || sigs[len(sigs)-1] != '\n' {
		return nil, fmt.Errorf("%w: note signature block does not end with a newline", ErrFormat)
	}
	found := false
	for _, line := range strings.Split(string(sigs[:len(sigs)-1]), "\n") {
		rest, ok := strings.CutPrefix(line, sigPrefix)
		if !ok {
			return nil, fmt.Errorf("%w: note signature line does not start with an em dash", ErrFormat)
		}
		name, b64, ok := strings.Cut(rest, " ")
		if !ok || !validName(name) {
			return nil, fmt.Errorf("%w: malformed note signature line", ErrFormat)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(raw) < 5 {
			return nil, fmt.Errorf("%w: malformed note signature", ErrFormat)
		}
		if name != v.name || binary.BigEndian.Uint32(raw[:4]) != v.hash {
			continue
		}
		if !ed25519.Verify(v.key, text, raw[4:]) {
			return nil, fmt.Errorf("%w: the signature of %s does not verify", ErrSignature, v.name)
		}
		found = true
	}
	if !found {
		return nil, fmt.Errorf("%w: no signature of %s", ErrSignature, v.name)
	}
	return text, nil
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
	if c.Origin != v.name {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint origin %q is not the log %q", ErrFormat, c.Origin, v.name)
	}
	return c, nil
}

// SignCheckpoint returns c signed by s. c.Origin must be s's name.
func (s *Signer) SignCheckpoint(c Checkpoint) ([]byte, error) {
	if c.Origin != s.name {
		return nil, fmt.Errorf("%w: checkpoint origin %q is not the key name %q", ErrFormat, c.Origin, s.name)
	}
	return s.Sign(c.Marshal())
}
