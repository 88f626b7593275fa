package cdshooks_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/cdshooks/internal/cdsvalidate"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// FuzzVerify: whatever the Authorization header, verification never
// panics and never accepts a token the trusted key did not sign.
//
// The trusted key is a P-256 key made here, not the spec's P-384 one:
// Go's P-384 verification is generic code (about 1.3 ms a signature, far
// more under the fuzzer's instrumentation) and nearly every mutation of a
// signed token reaches it, which held the target to a few dozen
// executions a second; P-256 verification is assembly. The parsing and
// checks before the signature are the same for every algorithm; the spec's
// ES384 token stays a seed (refused for its algorithm).
func FuzzVerify(f *testing.F) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := jwk.FromRaw(&priv.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	_ = pub.Set(jwk.KeyIDKey, specKid)
	_ = pub.Set(jwk.AlgorithmKey, jwa.ES256)
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	b, err := json.Marshal(set)
	if err != nil {
		f.Fatal(err)
	}
	jwksFile := filepath.Join(f.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, b, 0o600); err != nil {
		f.Fatal(err)
	}
	authenticator := func() *cdshooks.Authenticator {
		a, err := cdshooks.NewAuthenticator([]cdshooks.TrustedClient{{
			Iss: specIssuer, JWKSFile: jwksFile, Algorithms: []string{"ES256"},
		}}, cdshooks.NewMemoryReplayCache(fixedClock), nil, fixedClock)
		if err != nil {
			f.Fatal(err)
		}
		return a
	}
	seed := "Bearer " + (&token{alg: jwa.ES256, key: priv}).sign(f, selectPath)
	// The seed verifies (checked on an authenticator of its own, so the
	// fuzzed one has not spent its jti).
	if _, err := authenticator().Verify(context.Background(), seed, publicURL+selectPath); err != nil {
		f.Fatalf("the seed token does not verify: %v", err)
	}
	f.Add(seed)
	f.Add("Bearer " + (&token{}).sign(f, selectPath))
	f.Add("Bearer a.b.c")
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.")
	f.Add("bearer     ")
	a := authenticator()
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
//
// Seeds are small (at most maxHookSeed bytes): the fuzzer minimises every
// input that finds new coverage, one execution per byte range tried, and
// with the 6 to 15 KB requests of testdata/cds as seeds it spent its run
// minimising them (a dozen executions in 30 s). The larger requests are
// run as they are by the hook tests.
func FuzzHookRequest(f *testing.F) {
	const maxHookSeed = 2 << 10
	files, _ := filepath.Glob(filepath.Join(testdataCD, "requests", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		if c.Len() <= maxHookSeed {
			f.Add(c.Bytes())
		}
	}
	f.Add([]byte(`{"hook":"order-select","hookInstance":"x","context":{"userId":"u","patientId":"p","selections":["MedicationRequest/1"],"draftOrders":{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"MedicationRequest","id":"1","medicationCodeableConcept":{"text":"clopidogrel"}}}]}},"prefetch":{"patient":null,"pgxObservations":null}}`))
	// order-select-clopidogrel-cyp2c19-pm.json cut down to one genotype
	// Observation and the draft order.
	f.Add([]byte(`{"hook":"order-select","hookInstance":"x","context":{"userId":"PractitionerRole/123","patientId":"CGPatientExample01","selections":["MedicationRequest/draft-clopidogrel-1"],"draftOrders":{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"MedicationRequest","id":"draft-clopidogrel-1","medicationCodeableConcept":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"32968","display":"clopidogrel"}],"text":"clopidogrel"},"reasonCode":[{"text":"Acute coronary syndrome with PCI"}]}}]}},"prefetch":{"patient":null,"pgxObservations":{"resourceType":"Bundle","type":"searchset","entry":[{"resource":{"resourceType":"Observation","status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/v2-0074","code":"GE"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},"subject":{"reference":"Patient/CGPatientExample01"},"valueCodeableConcept":{"coding":[{"system":"http://www.ncbi.nlm.nih.gov/clinvar","code":"638797","display":"CYP2C19*2/*2"}]},"component":[{"code":{"coding":[{"system":"http://loinc.org","code":"48018-6"}]},"valueCodeableConcept":{"coding":[{"system":"http://www.genenames.org","code":"HGNC:2621","display":"CYP2C19"}]}}]}}]}}}`))
	// Large seeds (issue 25): draft orders and Bundle entries over the
	// limits of one call.
	f.Add(withDrafts(f, cdshooks.MaxDraftOrders+1))
	f.Add([]byte(`{"hook":"order-sign","hookInstance":"x","context":{"userId":"u","patientId":"p","draftOrders":{"resourceType":"Bundle","entry":[` +
		strings.TrimSuffix(strings.Repeat("{},", fhir.MaxBundleEntries+1), ",") + `]}},"prefetch":{"patient":null,"pgxObservations":null}}`))
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
				if rec.Body.Len() > 4<<20 {
					t.Fatalf("a %d-byte answer to a %d-byte call", rec.Body.Len(), len(body))
				}
			case rec.Code >= 500:
				t.Fatalf("status %d for %s: %s", rec.Code, body, rec.Body)
			}
		}
	})
}
