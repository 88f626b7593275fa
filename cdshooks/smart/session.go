package smart

import (
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
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

// memoryStore keeps pending launches and sessions in this process's
// memory (docs/smart.md: several replicas need sticky sessions).
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

// putPending stores a launch under its state; false when the store is
// full.
func (m *memoryStore) putPending(state string, p *pending) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if len(m.pending) >= maxPending {
		return false
	}
	m.pending[state] = p
	return true
}

// takePending removes and returns the launch of state when it belongs to
// browser and has not expired. A state is used once.
func (m *memoryStore) takePending(state, browser string) (*pending, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[state]
	if !ok {
		return nil, false
	}
	if subtle.ConstantTimeCompare([]byte(p.browser), []byte(browser)) != 1 {
		// Not this browser's launch (login CSRF): leave it for its owner.
		return nil, false
	}
	delete(m.pending, state)
	if !m.now().Before(p.expires) {
		return nil, false
	}
	return p, true
}

func (m *memoryStore) putSession(id string, s *session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if len(m.sessions) >= maxSessions {
		return false
	}
	m.sessions[id] = s
	return true
}

// session returns the live session id of browser.
func (m *memoryStore) session(id, browser string) (*session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || subtle.ConstantTimeCompare([]byte(s.browser), []byte(browser)) != 1 {
		return nil, false
	}
	if !m.now().Before(s.expires) {
		delete(m.sessions, id)
		return nil, false
	}
	return s, true
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
