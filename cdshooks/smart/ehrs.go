package smart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// ehrFile is one entry of the registered-EHRs file (docs/smart.md).
type ehrFile struct {
	Name             string `json:"name"`
	ISS              string `json:"iss"`
	ClientID         string `json:"client_id"`
	ClientType       string `json:"client_type"`
	ClientSecretFile string `json:"client_secret_file"`
	PrivateKeyFile   string `json:"private_key_file"`
	Scopes           string `json:"scopes"`
	StandaloneScopes string `json:"standalone_scopes"`
}

// LoadEHRs reads the registered-EHRs file: a JSON array of objects with
// name, iss, client_id, client_type (public, confidential-symmetric,
// confidential-asymmetric), client_secret_file or private_key_file (a
// private JWK with kid, alg RS384 or ES384), and optional scopes and
// standalone_scopes. Relative file names are read beside the file.
// Unknown fields are refused.
func LoadEHRs(path string) ([]EHR, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("smart: registered EHRs: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var items []ehrFile
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("smart: registered EHRs %s: %v", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	var out []EHR
	for i, it := range items {
		e := EHR{Name: it.Name, ISS: it.ISS, ClientID: it.ClientID, ClientType: it.ClientType,
			Scopes: it.Scopes, StandaloneScopes: it.StandaloneScopes}
		if it.ClientSecretFile != "" {
			sb, err := os.ReadFile(rel(it.ClientSecretFile))
			if err != nil {
				return nil, fmt.Errorf("smart: registered EHR %d (%s): client secret: %w", i+1, it.ISS, err)
			}
			e.ClientSecret = strings.TrimSpace(string(sb))
			if e.ClientSecret == "" {
				return nil, fmt.Errorf("smart: registered EHR %d (%s): the client secret file is empty", i+1, it.ISS)
			}
		}
		if it.PrivateKeyFile != "" {
			k, err := LoadSigningKey(rel(it.PrivateKeyFile))
			if err != nil {
				return nil, fmt.Errorf("smart: registered EHR %d (%s): %w", i+1, it.ISS, err)
			}
			e.Key = k
		}
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("registered EHR %d: %w", i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// maxKeyBytes bounds a private JWK (an RSA 4096-bit key is about 3.2 KB).
const maxKeyBytes = 8 << 10

// SigningKey is the private key of a confidential-asymmetric client.
type SigningKey struct {
	key jwk.Key
	alg jwa.SignatureAlgorithm
}

// LoadSigningKey reads a private JWK (RSA of at least 2048 bits with alg
// RS384, or EC P-384 with alg ES384, as SMART requires) with a kid.
func LoadSigningKey(path string) (*SigningKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	return ParseSigningKey(b)
}

// ParseSigningKey parses a private JWK (see LoadSigningKey).
func ParseSigningKey(b []byte) (*SigningKey, error) {
	if len(b) > maxKeyBytes {
		return nil, fmt.Errorf("private key: a JWK of more than %d bytes is refused", maxKeyBytes)
	}
	k, err := jwk.ParseKey(b)
	if err != nil {
		return nil, errors.New("private key: not a JWK")
	}
	if k.KeyID() == "" {
		return nil, errors.New("private key: the JWK needs a kid")
	}
	var alg jwa.SignatureAlgorithm
	switch k.KeyType() {
	case jwa.RSA:
		alg = jwa.RS384
	case jwa.EC:
		alg = jwa.ES384
	default:
		return nil, errors.New("private key: must be an RSA or EC key")
	}
	if a := k.Algorithm().String(); a != "" && a != alg.String() {
		return nil, fmt.Errorf("private key: alg must be %s for this key type, got %s", alg, a)
	}
	if _, err := k.PublicKey(); err != nil {
		return nil, errors.New("private key: no public key can be derived")
	}
	var raw any
	if err := k.Raw(&raw); err != nil {
		return nil, errors.New("private key: unreadable")
	}
	switch kk := raw.(type) {
	case interface{ Size() int }: // *rsa.PrivateKey
		if kk.Size()*8 < 2048 {
			return nil, errors.New("private key: RSA keys must have at least 2048 bits")
		}
	default:
		if k.KeyType() == jwa.RSA {
			return nil, errors.New("private key: not a private RSA key")
		}
	}
	if k.KeyType() == jwa.EC {
		if crv, ok := k.Get("crv"); !ok || fmt.Sprint(crv) != "P-384" {
			return nil, errors.New("private key: EC keys must be on P-384 (ES384)")
		}
	}
	return &SigningKey{key: k, alg: alg}, nil
}

// publicJWK returns the public half for the JWKS.
func (k *SigningKey) publicJWK() (jwk.Key, error) {
	pub, err := k.key.PublicKey()
	if err != nil {
		return nil, err
	}
	_ = pub.Set(jwk.AlgorithmKey, k.alg)
	_ = pub.Set(jwk.KeyUsageKey, "sig")
	return pub, nil
}

// jwks serves the public keys of the confidential-asymmetric clients, for
// EHRs that register the app by JWKS URL.
func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) error {
	set := jwk.NewSet()
	seen := map[string]bool{}
	for _, e := range s.order {
		if e.Key == nil || seen[e.Key.key.KeyID()] {
			continue
		}
		seen[e.Key.key.KeyID()] = true
		pub, err := e.Key.publicJWK()
		if err != nil {
			return err
		}
		_ = set.AddKey(pub)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "max-age=300")
	return httpx.WriteJSON(w, http.StatusOK, json.RawMessage(b))
}
