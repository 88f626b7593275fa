package cdshooks_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/internal/cdsvalidate"
	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// FuzzVerify: whatever the Authorization header, verification never
// panics and never accepts a token the spec key did not sign.
func FuzzVerify(f *testing.F) {
	f.Add("Bearer " + (&token{}).sign(f, selectPath))
	f.Add("Bearer a.b.c")
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.")
	f.Add("bearer     ")
	a, err := cdshooks.NewAuthenticator([]cdshooks.TrustedClient{{
		Iss: specIssuer, JWKSFile: filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json"),
	}}, cdshooks.NewMemoryReplayCache(fixedClock), nil, fixedClock)
	if err != nil {
		f.Fatal(err)
	}
	valid := map[string]bool{}
	f.Fuzz(func(t *testing.T, header string) {
		p, err := a.Verify(context.Background(), header, publicURL+selectPath)
		if err == nil && !valid[header] {
			// Only the seed token can verify (once: its jti is then spent).
			valid[header] = true
			if p.Issuer != specIssuer {
				t.Fatalf("accepted %q as %+v", header, p)
			}
		}
	})
}

// memAppender is an in-memory audit log (a test double).
type memAppender struct {
	mu sync.Mutex
	n  int64
}

func (m *memAppender) Append(_ context.Context, e audit.Entry) (audit.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	e.Sequence = m.n
	e.ID = fmt.Sprintf("mem-%d", m.n)
	return e, nil
}

// FuzzHookRequest: whatever the body, a hook call answers 200 with a valid
// response or a 4xx problem — never a 5xx.
func FuzzHookRequest(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataCD, "requests", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"hook":"order-select","hookInstance":"x","context":{"userId":"u","patientId":"p","selections":["MedicationRequest/1"],"draftOrders":{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"MedicationRequest","id":"1","medicationCodeableConcept":{"text":"clopidogrel"}}}]}},"prefetch":{"patient":null,"pgxObservations":null}}`))
	// An in-memory audit log: the SQLite store is slow under the fuzzer's
	// coverage instrumentation.
	e := newEnvWith(f, f.TempDir(), &memAppender{}, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) {
		c.DevUnauthenticated = true
		*cs = nil
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/cds-services/pgx-order-select", "/cds-services/pgx-order-sign"} {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.RemoteAddr = "127.0.0.1:1"
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			switch {
			case rec.Code == http.StatusOK:
				if p := cdsvalidate.Response(rec.Body.Bytes(), cdsvalidate.Options{Strict: true}); len(p) > 0 {
					t.Fatalf("invalid response %v for %s", p, body)
				}
			case rec.Code >= 500:
				t.Fatalf("status %d for %s: %s", rec.Code, body, rec.Body)
			}
		}
	})
}
