package cdshooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// fiftyResourceOrderSign builds an order-sign request whose prefetch holds
// 50 resources: the Patient, 30 genomic Observations (the IG's CYP2C19
// *2/*2 Genotype and its Therapeutic Implication, and 28 dbSNP Variant
// results for tracked panel variants, reported absent) and 19 active
// MedicationRequests coded with the knowledge's RxNorm codes. The draft
// order is clopidogrel.
func fiftyResourceOrderSign(t testing.TB) []byte {
	t.Helper()
	readFHIR := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := readRequest(t, "order-sign-clopidogrel-cyp2c19-pm")
	variantTmpl, _ := json.Marshal(readFHIR("Observation-variant-1-pgx-example.json"))
	obs := []any{readFHIR("Observation-Pgx-geno-1001.json"), readFHIR("Observation-TxImp01.json")}
	for _, v := range kb.Variants {
		if len(obs) == 30 {
			break
		}
		if v.Gene == "CYP2C19" {
			continue // the Genotype covers it
		}
		var m map[string]any
		_ = json.Unmarshal(variantTmpl, &m)
		m["id"] = "var-" + v.RsID
		m["subject"] = map[string]any{"reference": "Patient/CGPatientExample01"}
		m["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "LA9634-2", "display": "Absent"}}}
		comps := m["component"].([]any)
		comps[0].(map[string]any)["valueCodeableConcept"] = map[string]any{"text": v.Gene}
		comps[1].(map[string]any)["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": "http://www.ncbi.nlm.nih.gov/projects/SNP", "code": v.RsID}}}
		obs = append(obs, m)
	}
	var meds []any
	for _, d := range kb.Drugs {
		if len(meds) == 19 {
			break
		}
		if len(d.RxNormCUIs) == 0 || d.Name == "clopidogrel" {
			continue
		}
		meds = append(meds, map[string]any{
			"resourceType": "MedicationRequest", "id": "active-" + d.RxNormCUIs[0], "status": "active", "intent": "order",
			"authoredOn":                "2024-01-15",
			"medicationCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": d.RxNormCUIs[0]}}},
			"subject":                   map[string]any{"reference": "Patient/CGPatientExample01"},
		})
	}
	bundle := func(rs []any) map[string]any {
		es := make([]any, len(rs))
		for i, r := range rs {
			es[i] = map[string]any{"resource": r}
		}
		return map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": es}
	}
	return editJSON(t, base, func(m map[string]any) {
		p := m["prefetch"].(map[string]any)
		p["pgxObservations"] = bundle(obs)
		p["activeMedications"] = bundle(meds)
		if n := 1 + len(obs) + len(meds); n != 50 {
			t.Fatalf("prefetch holds %d resources, want 50", n)
		}
	})
}

// TestFiftyResourcePrefetch: the benchmark's request is answered with the
// critical card and a valid response.
func TestFiftyResourcePrefetch(t *testing.T) {
	e := newEnv(t)
	r := decodeResponse(t, e.hook(fiftyResourceOrderSign(t)))
	if c, ok := findCard(r, "CYP2C19"); !ok || c.Indicator != cdshooks.IndicatorCritical {
		t.Errorf("no critical card: %+v", r.Cards)
	}
}

// BenchmarkOrderSignVsCheck measures, in one run over one router and one
// durable SQLite audit log (as serve builds them), the server-side latency
// of: order-sign with a 50-resource prefetch and EHR-JWT (ES384)
// verification; the same without the JWT (development switch); and POST
// /pgx/check with the same genotype (no authentication middleware in this
// router). Requests are sequential; p50/p95/p99 are reported in ms.
//
//	go test ./cdshooks -run '^$' -bench BenchmarkOrderSignVsCheck -benchtime 400x
func BenchmarkOrderSignVsCheck(b *testing.B) {
	dir := b.TempDir()
	store, err := sqlstore.Open(context.Background(), "", dir)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	svc := service.New(kb, nil, store, time.Now)
	clients, _ := json.Marshal([]cdshooks.TrustedClient{{Iss: specIssuer, JWKSFile: filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json")}})
	clientsFile := filepath.Join(dir, "clients.json")
	_ = os.WriteFile(clientsFile, clients, 0o600)
	cds, err := cdshooks.New(svc, cdshooks.Config{
		PublicURL: publicURL, ClientsFile: clientsFile, DevUnauthenticated: true, ListenAddr: "127.0.0.1:0", Feedback: store.Feedback(),
	}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	r := httpx.NewRouter()
	pgxapi.New(svc, store, zap.NewNop(), pgxapi.Config{}).Register(r)
	cds.Register(r)
	h := httpx.Wrap(r, zap.NewNop())

	signBody := fiftyResourceOrderSign(b)
	checkBody := []byte(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"},"state":"Tamil Nadu","indication":"Acute coronary syndrome with PCI","patient":{"sex":"male","age_years":55}}`)
	const signPath = "/cds-services/pgx-order-sign"

	run := func(b *testing.B, path string, body []byte, authz func() string) {
		// Tokens are minted before the clock starts: the client's cost.
		headers := make([]string, b.N)
		for i := range headers {
			headers[i] = authz()
		}
		lat := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.RemoteAddr = "127.0.0.1:40000"
			req.Header.Set("Content-Type", "application/json")
			if headers[i] != "" {
				req.Header.Set("Authorization", headers[i])
			}
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, req)
			lat = append(lat, time.Since(start))
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
		b.StopTimer()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 {
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.50), "p50-ms")
		b.ReportMetric(pct(0.95), "p95-ms")
		b.ReportMetric(pct(0.99), "p99-ms")
	}
	b.Run("order-sign-50-resources-jwt", func(b *testing.B) {
		run(b, signPath, signBody, func() string { return "Bearer " + (&token{claims: nowClaims()}).sign(b, signPath) })
	})
	b.Run("order-sign-50-resources-nojwt", func(b *testing.B) {
		run(b, signPath, signBody, func() string { return "" })
	})
	b.Run("pgx-check", func(b *testing.B) {
		run(b, "/pgx/check", checkBody, func() string { return "" })
	})
}

// nowClaims dates a token at the wall clock (the benchmark's service runs
// on time.Now).
func nowClaims() map[string]any {
	now := time.Now()
	return map[string]any{"iat": now.Unix(), "exp": now.Add(4 * time.Minute).Unix()}
}
