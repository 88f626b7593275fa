package smart

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// browserCookie binds a browser to its launches. It holds a random value
// only: tokens never leave the server.
const browserCookie = "pgxsafety_smart"

// pending is a launch waiting for its callback.
type pending struct {
	browser    string
	ehr        *EHR
	iss        string
	verifier   string // PKCE code verifier
	launch     string
	standalone bool
	expires    time.Time
}

// session is one authorised launch: the access token and launch context.
type session struct {
	browser     string
	ehr         *EHR
	iss         string
	accessToken string
	patient     string
	encounter   string
	principal   audit.Principal
	appContext  string
	cardDrug    string
	needBanner  bool
	scope       string
	standalone  bool
	expires     time.Time
}

// sessionStore keeps pending launches (by state) and review sessions (by
// session id): in this process's memory (memoryStore, the single-process
// default) or sealed in a store shared by every replica (sealedStore).
type sessionStore interface {
	// putPending stores a launch under its state (errStoreFull when the
	// store is full).
	putPending(ctx context.Context, state string, p *pending) error
	// takePending removes and returns the launch of state when it belongs
	// to browser and has not expired (errNoRecord otherwise). A state is
	// used once; a state of another browser is left for its owner.
	takePending(ctx context.Context, state, browser string) (*pending, error)
	// putSession stores a session under its id.
	putSession(ctx context.Context, id string, s *session) error
	// session returns the live session id of browser, or errNoRecord.
	session(ctx context.Context, id, browser string) (*session, error)
}

// Errors of the session stores.
var (
	errNoRecord  = errors.New("smart: no such launch or session")
	errStoreFull = errors.New("smart: too many launches or sessions")
)

// memoryStore keeps pending launches and sessions in this process's
// memory: one replica only (docs/smart.md; replicas use a SharedStore).
type memoryStore struct {
	mu       sync.Mutex
	now      func() time.Time
	pending  map[string]*pending // by state
	sessions map[string]*session // by session id
}

func newMemoryStore(now func() time.Time) *memoryStore {
	return &memoryStore{now: now, pending: map[string]*pending{}, sessions: map[string]*session{}}
}

// sweep drops what has expired; the caller holds mu.
func (m *memoryStore) sweep() {
	now := m.now()
	for k, p := range m.pending {
		if !now.Before(p.expires) {
			delete(m.pending, k)
		}
	}
	for k, s := range m.sessions {
		if !now.Before(s.expires) {
			delete(m.sessions, k)
		}
	}
}

func (m *memoryStore) putPending(_ context.Context, state string, p *pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if len(m.pending) >= maxPending {
		return errStoreFull
	}
	m.pending[state] = p
	return nil
}

func (m *memoryStore) takePending(_ context.Context, state, browser string) (*pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[state]
	if !ok || !sameBrowser(p.browser, browser) {
		// Not this browser's launch (login CSRF): leave it for its owner.
		return nil, errNoRecord
	}
	delete(m.pending, state)
	if !m.now().Before(p.expires) {
		return nil, errNoRecord
	}
	return p, nil
}

func (m *memoryStore) putSession(_ context.Context, id string, s *session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if len(m.sessions) >= maxSessions {
		return errStoreFull
	}
	m.sessions[id] = s
	return nil
}

func (m *memoryStore) session(_ context.Context, id, browser string) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || !sameBrowser(s.browser, browser) {
		return nil, errNoRecord
	}
	if !m.now().Before(s.expires) {
		delete(m.sessions, id)
		return nil, errNoRecord
	}
	return s, nil
}

// storeFailure is the page of a store that is full (full names what) or
// cannot be reached: 503, try again; nothing about the store is shown.
func storeFailure(err error, full string) error {
	if errors.Is(err, errStoreFull) {
		return &pageError{Kind: httpx.KindBusy, Title: full, Detail: "Try again in a few minutes."}
	}
	return &pageError{Kind: httpx.KindBusy, Title: "The review sessions cannot be reached",
		Detail: "pgxsafety could not reach the store its replicas share review sessions in. Try again in a minute; if it persists, tell the service's operator (quote the request id).", Err: err}
}

// lookupFailure is the page of a launch or session the store did not
// give: notFound when it holds none for this browser, or holds one this
// replica cannot open (logged: the replicas' session keys may differ);
// the store's failure page otherwise.
func lookupFailure(ctx context.Context, err error, what string, notFound *pageError) error {
	switch {
	case errors.Is(err, errUnreadable):
		httpx.Logger(ctx).Warn("SMART "+what+" record unreadable", zap.Error(err))
		return notFound
	case errors.Is(err, errNoRecord):
		return notFound
	default:
		return storeFailure(err, "")
	}
}

// sameBrowser compares two browser binding values in constant time.
func sameBrowser(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// browserID returns the browser's binding value, setting a new cookie
// when there is none.
func (s *Server) browserID(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(browserCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	v := randomToken(32)
	http.SetCookie(w, &http.Cookie{
		Name: browserCookie, Value: v, Path: "/smart/", HttpOnly: true, Secure: s.secure,
		// Lax: the cookie must come back on the authorization server's
		// top-level redirect to the callback.
		SameSite: http.SameSiteLaxMode,
		MaxAge:   int((12 * time.Hour).Seconds()),
	})
	return v
}

// existingBrowserID returns the browser's binding value, or "".
func existingBrowserID(r *http.Request) string {
	if c, err := r.Cookie(browserCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	return ""
}
