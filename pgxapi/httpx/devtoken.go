package httpx

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
)

// Local development mode (no issuer configured): the server verifies
// tokens signed by an ES256 key kept in its data directory, and
// "pgxsafety token" signs them with the same key. Nothing about it is
// weaker than production verification except who holds the key; the
// server refuses non-loopback listen addresses in this mode.
const (
	// DevIssuer is the "iss" of local development tokens.
	DevIssuer = "urn:pgxsafety:local-development"
	// DevAudience is their "aud".
	DevAudience = "pgxsafety-local-development"
	// DevKeyFile is the name of the signing key in the data directory
	// (a private JWK, mode 0600).
	DevKeyFile = "dev-signing-key.jwk"
	// DevMaxTTL is the longest lifetime of a development token; it is
	// also the maximum token age the development verifier accepts.
	DevMaxTTL = 24 * time.Hour
)

// LoadOrCreateDevKey returns the development signing key of dataDir,
// creating it (and dataDir, mode 0700) when missing. The key file must be
// readable by its owner only: a key file with group or other permissions
// is refused, since anyone who can read it can mint tokens.
func LoadOrCreateDevKey(dataDir string) (jwk.Key, error) {
	if dataDir == "" {
		return nil, errors.New("development key: no data directory")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("development key: %w", err)
	}
	path := filepath.Join(dataDir, DevKeyFile)
	key, err := readDevKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createDevKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	// Created now, or by a concurrent "serve" or "token": read it back.
	return readDevKey(path)
}

func readDevKey(path string) (jwk.Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("development key %s has mode %o: it must be readable by its owner only (chmod 600 %s)", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("development key: %w", err)
	}
	key, err := jwk.ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("development key %s: %w", path, err)
	}
	var raw ecdsa.PrivateKey
	if err := key.Raw(&raw); err != nil || raw.Curve != elliptic.P256() {
		return nil, fmt.Errorf("development key %s is not an ES256 (P-256) private key", path)
	}
	return key, nil
}

// createDevKey writes a new key to a temporary file and links it into
// place, so a concurrent reader never sees half a key and a concurrent
// writer's key is never replaced.
func createDevKey(path string) error {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	key, err := jwk.FromRaw(priv)
	if err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	if err := jwk.AssignKeyID(key); err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	if err := key.Set(jwk.AlgorithmKey, jwa.ES256); err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	if err := key.Set(jwk.KeyUsageKey, jwk.ForSignature); err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	b, err := json.Marshal(key)
	if err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dev-signing-key-*")
	if err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("development key: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("development key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("development key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("development key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("development key: %w", err)
	}
	return nil
}

// NewDevVerifier returns the verifier of local development mode: key's
// public half, issuer DevIssuer, audience DevAudience, maximum token age
// DevMaxTTL.
func NewDevVerifier(key jwk.Key, now func() time.Time) (*OIDCVerifier, error) {
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		return nil, fmt.Errorf("development key: %w", err)
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, fmt.Errorf("development key: %w", err)
	}
	return NewOIDCVerifier(OIDCConfig{
		Issuer:      DevIssuer,
		Audience:    DevAudience,
		Keys:        set,
		Algorithms:  []string{"ES256"},
		MaxTokenAge: DevMaxTTL,
		Now:         now,
	})
}

// MintDevToken signs a development ID token for subject, valid from now
// for ttl (at most DevMaxTTL).
func MintDevToken(key jwk.Key, subject string, ttl time.Duration, now time.Time) (string, error) {
	if !cleanClaim(subject) {
		return "", errors.New("subject must be 1 to 255 characters without control characters")
	}
	if ttl <= 0 || ttl > DevMaxTTL {
		return "", fmt.Errorf("ttl must be positive and at most %s", DevMaxTTL)
	}
	now = now.Truncate(time.Second)
	tok, err := jwt.NewBuilder().
		Issuer(DevIssuer).
		Audience([]string{DevAudience}).
		Subject(subject).
		IssuedAt(now).
		NotBefore(now).
		Expiration(now.Add(ttl)).
		Claim("name", subject+" (local development)").
		Build()
	if err != nil {
		return "", fmt.Errorf("build token: %w", err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return string(signed), nil
}
