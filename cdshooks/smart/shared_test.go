package smart_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pgxsafety/pgxsafety/cdshooks/smart"
	"github.com/pgxsafety/pgxsafety/cdshooks/smart/smarttest"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// memShared is a SharedStore in memory (a test double of the Redis one).
type memShared struct {
	mu   sync.Mutex
	recs map[string][]byte
	ttls map[string]time.Duration
	fail error
}

func newMemShared() *memShared {
	return &memShared{recs: map[string][]byte{}, ttls: map[string]time.Duration{}}
}

func (m *memShared) Put(_ context.Context, key string, rec []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.recs[key], m.ttls[key] = bytes.Clone(rec), ttl
	return nil
}

func (m *memShared) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	r, ok := m.recs[key]
	if !ok {
		return nil, smart.ErrNoRecord
	}
	return bytes.Clone(r), nil
}

func (m *memShared) Delete(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	_, ok := m.recs[key]
	delete(m.recs, key)
	return ok, nil
}

// replicas are review apps sharing one store behind a front that sends
// each request to the replica the test names.
type replicas struct {
	ehr    *smarttest.EHR
	front  *httptest.Server
	apps   []http.Handler
	next   int // the replica of the next request
	served []int
	logs   []*observer.ObservedLogs
	mu     sync.Mutex
}

// newReplicas starts a fake EHR and one app per key over shared.
func newReplicas(t *testing.T, shared smart.SharedStore, keys ...[]byte) *replicas {
	t.Helper()
	ehr := smarttest.New()
	t.Cleanup(ehr.Close)
	ehr.Resources = smarttest.Fixture(ehr.Patient)
	rs := &replicas{ehr: ehr}
	rs.front = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		i := rs.next
		rs.served = append(rs.served, i)
		rs.mu.Unlock()
		rs.apps[i].ServeHTTP(w, r)
	}))
	public := "http://" + rs.front.Listener.Addr().String()
	ehr.RedirectURI = public + smart.PathCallback
	audits := audittest.NewMemory() // one audit log, as replicas share one database
	for _, key := range keys {
		core, logs := observer.New(zap.DebugLevel)
		log := zap.New(core)
		cfg := smart.Config{PublicURL: public, Shared: shared, SessionKey: key,
			EHRs: []smart.EHR{{Name: "Fake EHR", ISS: ehr.ISS(), ClientID: ehr.ClientID, ClientType: smart.ClientPublic}}}
		s, err := smart.New(cfg, service.New(kb, nil, audits, time.Now), log)
		if err != nil {
			t.Fatal(err)
		}
		router := httpx.NewRouter()
		s.Register(router)
		rs.apps = append(rs.apps, httpx.Chain(router, httpx.Options{Log: log}))
		rs.logs = append(rs.logs, logs)
	}
	rs.front.Start()
	t.Cleanup(rs.front.Close)
	return rs
}

// on sends the next requests to replica i.
func (rs *replicas) on(i int) {
	rs.mu.Lock()
	rs.next = i
	rs.mu.Unlock()
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, smart.SessionKeySize) }

// launchTo runs an EHR launch on replica from; the authorization server's
// redirect to the callback is sent to replica to. It returns the review
// URL and the response of the callback (followed to the review).
func (rs *replicas) launchTo(t *testing.T, c *http.Client, from, to int) (*http.Response, string) {
	t.Helper()
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == smart.PathCallback {
			rs.on(to)
		}
		return nil
	}
	rs.on(from)
	return get(t, c, rs.front.URL+smart.PathLaunch+"?"+url.Values{"iss": {rs.ehr.ISS()}, "launch": {"l-1"}}.Encode())
}

// TestReplicasShareSessions: a launch started on one replica finishes on
// the other and its review opens on both; the shared store holds sealed
// records under hashed keys (no token, verifier, patient or session id in
// clear) that expire with the launch or session.
func TestReplicasShareSessions(t *testing.T) {
	shared := newMemShared()
	rs := newReplicas(t, shared, key(1), key(1))
	c := browser(t)
	resp, body := rs.launchTo(t, c, 0, 1)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Request.URL.Path, smart.PathReview) {
		t.Fatalf("launch on 0, callback on 1: %d at %s: %s", resp.StatusCode, resp.Request.URL, body)
	}
	if got := rs.served; len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 1 {
		t.Errorf("replicas served %v, want launch on 0, callback and review on 1", got)
	}
	mustContain(t, body, `data-drug="clopidogrel" data-severity="HIGH"`, "Poor Metabolizer")
	review := resp.Request.URL.String()
	rs.on(0)
	resp, body = get(t, c, review)
	if resp.StatusCode != 200 {
		t.Fatalf("review on the other replica: %d %s", resp.StatusCode, body)
	}
	mustContain(t, body, `data-drug="clopidogrel" data-severity="HIGH"`)

	sid := strings.TrimPrefix(resp.Request.URL.Path, smart.PathReview)
	secrets := append(rs.ehr.Secrets(), sid, rs.ehr.Patient, "Practitioner/dr-rao")
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if len(shared.recs) != 1 {
		t.Errorf("shared store holds %d records, want the session only (the launch's state is used)", len(shared.recs))
	}
	for k, rec := range shared.recs {
		if !strings.HasPrefix(k, "pgxsafety:smart:session:") {
			t.Errorf("key %q", k)
		}
		for _, sec := range secrets {
			if strings.Contains(k, sec) || bytes.Contains(rec, []byte(sec)) {
				t.Errorf("the shared store holds %q in clear", sec)
			}
		}
		if ttl := shared.ttls[k]; ttl <= 0 || ttl > smart.DefaultSessionTTL {
			t.Errorf("session record expires in %v, want within %v", ttl, smart.DefaultSessionTTL)
		}
	}
}

// TestReplicasSharedNegative: a state is used once across replicas; a
// replica with another key, or an altered record, opens no session; a
// store that cannot be reached is a 503 that shows nothing.
func TestReplicasSharedNegative(t *testing.T) {
	t.Run("callback replayed on the other replica", func(t *testing.T) {
		rs := newReplicas(t, newMemShared(), key(1), key(1))
		c := browser(t)
		var cb string
		c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if req.URL.Path == smart.PathCallback {
				cb = req.URL.String()
			}
			return nil
		}
		rs.on(0)
		if resp, body := get(t, c, rs.front.URL+smart.PathLaunch+"?"+url.Values{"iss": {rs.ehr.ISS()}, "launch": {"l"}}.Encode()); resp.StatusCode != 200 {
			t.Fatalf("launch: %d %s", resp.StatusCode, body)
		}
		rs.on(1)
		resp, body := get(t, c, cb)
		if resp.StatusCode != 400 || !strings.Contains(body, "This sign-in is not valid") {
			t.Errorf("replayed callback: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("replica with another key", func(t *testing.T) {
		rs := newReplicas(t, newMemShared(), key(1), key(2))
		c := browser(t)
		resp, body := rs.launchTo(t, c, 0, 0)
		if resp.StatusCode != 200 {
			t.Fatalf("launch: %d %s", resp.StatusCode, body)
		}
		rs.on(1)
		resp, body = get(t, c, resp.Request.URL.String())
		if resp.StatusCode != 401 || !strings.Contains(body, "This review session has ended") || strings.Contains(body, "data-drug=") {
			t.Errorf("review on a replica with another key: %d %s", resp.StatusCode, body)
		}
		if rs.logs[1].FilterMessage("SMART session record unreadable").Len() != 1 {
			t.Error("the replica does not log that the record would not open")
		}
	})
	t.Run("altered record", func(t *testing.T) {
		shared := newMemShared()
		rs := newReplicas(t, shared, key(1))
		c := browser(t)
		resp, body := rs.launchTo(t, c, 0, 0)
		if resp.StatusCode != 200 {
			t.Fatalf("launch: %d %s", resp.StatusCode, body)
		}
		shared.mu.Lock()
		for k := range shared.recs {
			shared.recs[k][len(shared.recs[k])-1] ^= 1
		}
		shared.mu.Unlock()
		resp, body = get(t, c, resp.Request.URL.String())
		if resp.StatusCode != 401 || strings.Contains(body, "data-drug=") {
			t.Errorf("review of an altered record: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("store unreachable", func(t *testing.T) {
		shared := newMemShared()
		shared.fail = errors.New("dial tcp 10.0.0.9:6379: connection refused")
		rs := newReplicas(t, shared, key(1))
		rs.on(0)
		resp, body := get(t, browser(t), rs.front.URL+smart.PathLaunch+"?"+url.Values{"iss": {rs.ehr.ISS()}, "launch": {"l"}}.Encode())
		if resp.StatusCode != 503 || !strings.Contains(body, "cannot be reached") || strings.Contains(body, "dial tcp") {
			t.Errorf("launch with the store down: %d %s", resp.StatusCode, body)
		}
		if rs.ehr.Granted != 0 {
			t.Error("a launch that could not be kept went on to the EHR")
		}
	})
	t.Run("key of the wrong size", func(t *testing.T) {
		_, err := smart.New(smart.Config{PublicURL: "https://pgx.example.org", Shared: newMemShared(), SessionKey: []byte("short")},
			service.New(kb, nil, audittest.NewMemory(), time.Now), nil)
		if err == nil || !strings.Contains(err.Error(), "32 bytes") {
			t.Errorf("a 5-byte key: %v", err)
		}
	})
}
