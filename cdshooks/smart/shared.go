package smart

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// SharedStore keeps the app's pending launches and review sessions where
// every replica reaches them (cmd implements it over Redis), so a launch
// may start on one replica and finish on another without sticky sessions.
// The app seals each record (AES-256-GCM with the configured session key)
// before it reaches the store: the store sees opaque keys (SHA-256 of the
// state or session id, never the id itself) and ciphertext, never an EHR
// access token, a PKCE verifier or a patient id.
type SharedStore interface {
	// Put stores rec under key for ttl, replacing any record there.
	Put(ctx context.Context, key string, rec []byte, ttl time.Duration) error
	// Get returns the record of key, or ErrNoRecord.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes key and reports whether this call removed it (a
	// launch's state is used once: of two callbacks, one wins).
	Delete(ctx context.Context, key string) (bool, error)
}

// ErrNoRecord is what a SharedStore returns for a key it does not hold.
var ErrNoRecord = errNoRecord

// SessionKeySize is the size of the session key (AES-256).
const SessionKeySize = 32

// Key prefixes of the shared store.
const (
	sharedPendingPrefix = "pgxsafety:smart:launch:"
	sharedSessionPrefix = "pgxsafety:smart:session:"
	// sealVersion starts every sealed record (a new format or key
	// scheme gets a new version).
	sealVersion = 1
)

// errUnreadable: a record that does not open with this replica's key
// (another key, altered, or another format). The page says the session
// has ended; the log says why.
var errUnreadable = errors.New("smart: a shared launch or session record could not be opened with this replica's session key (do all replicas use the same PGXSAFETY_SMART_SESSION_KEY_FILE?)")

// sealedStore is the sessionStore over a SharedStore.
type sealedStore struct {
	shared SharedStore
	aead   cipher.AEAD
	ehrs   map[string]*EHR // by normalised iss
	now    func() time.Time
}

func newSealedStore(shared SharedStore, key []byte, ehrs map[string]*EHR, now func() time.Time) (*sealedStore, error) {
	if len(key) != SessionKeySize {
		return nil, fmt.Errorf("smart: the session key must be %d bytes, got %d", SessionKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealedStore{shared: shared, aead: aead, ehrs: ehrs, now: now}, nil
}

// pendingRecord is a pending launch as sealed.
type pendingRecord struct {
	Browser    string    `json:"b"`
	EHR        string    `json:"e"` // the registered EHR's normalised iss
	ISS        string    `json:"i"`
	Verifier   string    `json:"v"`
	Launch     string    `json:"l,omitempty"`
	Standalone bool      `json:"s,omitempty"`
	Expires    time.Time `json:"x"`
}

// sessionRecord is a review session as sealed.
type sessionRecord struct {
	Browser     string          `json:"b"`
	EHR         string          `json:"e"`
	ISS         string          `json:"i"`
	AccessToken string          `json:"t"`
	Patient     string          `json:"p"`
	Encounter   string          `json:"n,omitempty"`
	Principal   audit.Principal `json:"u"`
	AppContext  string          `json:"a,omitempty"`
	CardDrug    string          `json:"d,omitempty"`
	NeedBanner  bool            `json:"nb,omitempty"`
	Scope       string          `json:"sc,omitempty"`
	Standalone  bool            `json:"s,omitempty"`
	Expires     time.Time       `json:"x"`
}

// storeKey is the shared store's key of an id: its SHA-256, so whoever
// reads the store learns no state or session id.
func storeKey(prefix, id string) string {
	h := sha256.Sum256([]byte(id))
	return prefix + base64.RawURLEncoding.EncodeToString(h[:])
}

// seal encrypts v bound to key (the additional data): a record cannot be
// moved to another key.
func (s *sealedStore) seal(key string, v any) ([]byte, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return s.aead.Seal(out, out[1:], plain, []byte(key)), nil
}

// open decrypts a record sealed under key into v.
func (s *sealedStore) open(key string, rec []byte, v any) error {
	n := s.aead.NonceSize()
	if len(rec) < 1+n || rec[0] != sealVersion {
		return errUnreadable
	}
	plain, err := s.aead.Open(nil, rec[1:1+n], rec[1+n:], []byte(key))
	if err != nil {
		return errUnreadable
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return errUnreadable
	}
	return nil
}

func (s *sealedStore) put(ctx context.Context, key string, v any, expires time.Time) error {
	ttl := expires.Sub(s.now())
	if ttl <= 0 {
		return nil // already over: nothing to keep
	}
	rec, err := s.seal(key, v)
	if err != nil {
		return err
	}
	return s.shared.Put(ctx, key, rec, ttl)
}

func (s *sealedStore) get(ctx context.Context, key string, v any) error {
	rec, err := s.shared.Get(ctx, key)
	if err != nil {
		return err
	}
	return s.open(key, rec, v)
}

func (s *sealedStore) putPending(ctx context.Context, state string, p *pending) error {
	return s.put(ctx, storeKey(sharedPendingPrefix, state), pendingRecord{Browser: p.browser, EHR: normISS(p.ehr.ISS),
		ISS: p.iss, Verifier: p.verifier, Launch: p.launch, Standalone: p.standalone, Expires: p.expires}, p.expires)
}

func (s *sealedStore) takePending(ctx context.Context, state, browser string) (*pending, error) {
	key := storeKey(sharedPendingPrefix, state)
	var r pendingRecord
	if err := s.get(ctx, key, &r); err != nil {
		return nil, err
	}
	if !sameBrowser(r.Browser, browser) {
		// Not this browser's launch (login CSRF): leave it for its owner.
		return nil, errNoRecord
	}
	removed, err := s.shared.Delete(ctx, key)
	if err != nil {
		return nil, err
	}
	ehr, ok := s.ehrs[r.EHR]
	if !removed || !ok || !s.now().Before(r.Expires) {
		// Used by another callback, its EHR no longer registered, or
		// over.
		return nil, errNoRecord
	}
	return &pending{browser: r.Browser, ehr: ehr, iss: r.ISS, verifier: r.Verifier, launch: r.Launch,
		standalone: r.Standalone, expires: r.Expires}, nil
}

func (s *sealedStore) putSession(ctx context.Context, id string, ss *session) error {
	return s.put(ctx, storeKey(sharedSessionPrefix, id), sessionRecord{Browser: ss.browser, EHR: normISS(ss.ehr.ISS),
		ISS: ss.iss, AccessToken: ss.accessToken, Patient: ss.patient, Encounter: ss.encounter, Principal: ss.principal,
		AppContext: ss.appContext, CardDrug: ss.cardDrug, NeedBanner: ss.needBanner, Scope: ss.scope,
		Standalone: ss.standalone, Expires: ss.expires}, ss.expires)
}

func (s *sealedStore) session(ctx context.Context, id, browser string) (*session, error) {
	var r sessionRecord
	if err := s.get(ctx, storeKey(sharedSessionPrefix, id), &r); err != nil {
		return nil, err
	}
	ehr, ok := s.ehrs[r.EHR]
	if !sameBrowser(r.Browser, browser) || !ok || !s.now().Before(r.Expires) {
		return nil, errNoRecord
	}
	return &session{browser: r.Browser, ehr: ehr, iss: r.ISS, accessToken: r.AccessToken, patient: r.Patient,
		encounter: r.Encounter, principal: r.Principal, appContext: r.AppContext, cardDrug: r.CardDrug,
		needBanner: r.NeedBanner, scope: r.Scope, standalone: r.Standalone, expires: r.Expires}, nil
}
