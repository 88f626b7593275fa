package cdshooks_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// sandboxIssuer is the iss of the CDS Hooks sandbox's tokens.
const sandboxIssuer = "https://sandbox.cds-hooks.org"

// sandboxEnv trusts a client shaped like the CDS Hooks sandbox: its keys
// are published at the URL its tokens name in jku (here a local TLS server
// serving the spec's example public key set).
func sandboxEnv(t *testing.T) (*env, string, *atomic.Int32) {
	t.Helper()
	pub, err := os.ReadFile(filepath.Join(testdataCD, "spec", "spec-2.0.1_jwks-public.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	ks := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pub)
	}))
	t.Cleanup(ks.Close)
	jku := ks.URL + "/.well-known/jwks.json"
	e := newEnv(t, func(c *cdshooks.Config, cs *[]cdshooks.TrustedClient) {
		c.KeySets = httpx.NewKeySetCache(t.Context(), ks.Client(), fixedClock)
		*cs = append(*cs, cdshooks.TrustedClient{Iss: sandboxIssuer, JWKSURL: jku, JKUAllowlist: []string{jku},
			Algorithms: []string{"ES256", "ES384"}})
	})
	return e, jku, &hits
}

// sandboxToken is a token as the sandbox sends it: jku header, issuer
// sandbox.cds-hooks.org, and here a 10-minute lifetime.
func sandboxToken(jku string, claims map[string]any) *token {
	cl := map[string]any{"iss": sandboxIssuer, "iat": fixedNow.Add(-time.Minute).Unix(), "exp": fixedNow.Add(9 * time.Minute).Unix()}
	for k, v := range claims {
		cl[k] = v
	}
	return &token{header: map[string]any{"jku": jku}, claims: cl}
}

// sandboxShaped rewrites a request's draft orders as the sandbox writes
// them: reasonCode and category as single objects, not arrays.
func sandboxShaped(t *testing.T, body []byte) []byte {
	return editJSON(t, body, func(m map[string]any) {
		for _, e := range m["context"].(map[string]any)["draftOrders"].(map[string]any)["entry"].([]any) {
			r := e.(map[string]any)["resource"].(map[string]any)
			r["reasonCode"] = map[string]any{"coding": []any{map[string]any{"system": "http://snomed.info/sct", "code": "394659003",
				"display": "Acute coronary syndrome"}}, "text": "Acute coronary syndrome"}
			r["category"] = map[string]any{"coding": []any{map[string]any{
				"system": "http://terminology.hl7.org/CodeSystem/medicationrequest-category", "code": "outpatient"}}}
		}
	})
}

// TestSandboxShapedRequests: a clopidogrel order for a CYP2C19 *2/*2
// patient, sent as the CDS Hooks sandbox sends it (object reasonCode and
// category, a jku token living 10 minutes, an aud array), gets the
// critical card — not an info card about an unchecked order.
func TestSandboxShapedRequests(t *testing.T) {
	e, jku, hits := sandboxEnv(t)
	for _, name := range []string{"order-select-clopidogrel-cyp2c19-pm", "order-sign-clopidogrel-cyp2c19-pm"} {
		body := sandboxShaped(t, readRequest(t, name))
		path := "/cds-services/" + serviceFor(t, body)
		for _, tc := range []struct {
			name   string
			claims map[string]any
		}{
			{"10-minute jku token", nil},
			{"aud array", map[string]any{"aud": []string{sandboxIssuer, publicURL + path}}},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				r := decodeResponse(t, e.post(path, body, sandboxToken(jku, tc.claims)))
				c, ok := findCard(r, "CYP2C19 Poor Metabolizer")
				if !ok || c.Indicator != cdshooks.IndicatorCritical {
					t.Fatalf("no critical CYP2C19 card: %+v", r.Cards)
				}
				if !strings.Contains(c.Detail, "Acute coronary syndrome") {
					t.Errorf("the object reasonCode was not read as the indication: %s", c.Detail)
				}
				if !strings.Contains(c.Detail, "population: CVI ACS PCI") {
					t.Errorf("the reasonCode's SNOMED CT code did not choose the ACS/PCI population: %s", c.Detail)
				}
				if _, bad := findCard(r, "was not checked"); bad {
					t.Errorf("an 'order not checked' card: %+v", r.Cards)
				}
			})
		}
	}
	if hits.Load() != 1 {
		t.Errorf("the sandbox key set was fetched %d times, want 1", hits.Load())
	}
	// The audit entry keeps the note that the deviation was tolerated.
	found := false
	for _, en := range e.auditEntries() {
		if strings.Contains(string(en.Request), "reasonCode") && strings.Contains(string(en.Request), "single object") {
			found = true
		}
	}
	if !found {
		t.Error("no audit entry records the tolerated single-object reasonCode")
	}
}

// TestOrderSelectNoDrugYet: order-select before a drug is chosen (a draft
// MedicationRequest with no medication) answers {"cards": []}.
func TestOrderSelectNoDrugYet(t *testing.T) {
	e := newEnv(t)
	body := editJSON(t, readRequest(t, "order-select-clopidogrel-cyp2c19-pm"), func(m map[string]any) {
		for _, en := range m["context"].(map[string]any)["draftOrders"].(map[string]any)["entry"].([]any) {
			r := en.(map[string]any)["resource"].(map[string]any)
			delete(r, "medicationCodeableConcept")
		}
	})
	rec := e.hook(body)
	decodeResponse(t, rec)
	if got := strings.TrimSpace(rec.Body.String()); got != `{"cards":[]}` {
		t.Errorf("body %s, want {\"cards\":[]}", got)
	}
}

// igBundle reads a Genomics Reporting IG example bundle.
func igBundle(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "ig", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// orderFor builds an order-select request for patient with one draft
// order of drug (RxNorm code) and the given genomic prefetch.
func orderFor(t *testing.T, patientID, drug, rxnorm string, genomics any, patient any) []byte {
	t.Helper()
	req := map[string]any{
		"hook": "order-select", "hookInstance": "a1b2c3d4-0000-4000-8000-" + strings.Repeat("0", 8) + rxnorm[:min(4, len(rxnorm))],
		"context": map[string]any{
			"userId": "PractitionerRole/123", "patientId": patientID, "selections": []any{"MedicationRequest/draft-1"},
			"draftOrders": map[string]any{"resourceType": "Bundle", "entry": []any{map[string]any{"resource": map[string]any{
				"resourceType": "MedicationRequest", "id": "draft-1", "status": "draft", "intent": "order",
				"medicationCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": rxnorm, "display": drug}}},
				"subject":                   map[string]any{"reference": "Patient/" + patientID}}}}},
		},
		"prefetch": map[string]any{"patient": patient, "pgxObservations": genomics, "activeMedications": nil, "conditions": nil},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIGHLABundleAbacavir: the IG's HLA full bundle (GL String genotypes
// of G groups, urn:uuid subjects) sent as the genomic prefetch, with an
// abacavir order → the critical "do not use" card.
func TestIGHLABundleAbacavir(t *testing.T) {
	e := newEnv(t)
	bundle := igBundle(t, "Bundle-bundle-CG-IG-HLA-FullBundle-01.json")
	var patient any
	for _, en := range bundle["entry"].([]any) {
		if r := en.(map[string]any)["resource"].(map[string]any); r["resourceType"] == "Patient" {
			patient = r
		}
	}
	r := decodeResponse(t, e.hook(orderFor(t, "CG-IG-HLA-FullBundle-01-1", "abacavir", "190521", bundle, patient)))
	if len(r.Cards) == 0 || r.Cards[0].Indicator != cdshooks.IndicatorCritical || !strings.Contains(r.Cards[0].Summary, "57:01") {
		t.Fatalf("no critical HLA-B*57:01 card first: %+v", r.Cards)
	}
	if !strings.Contains(r.Cards[0].Detail, "G group") {
		t.Errorf("the card does not say how the G groups were read: %s", r.Cards[0].Detail)
	}
	for _, c := range r.Cards {
		if strings.Contains(c.Summary, "no HLA-B result") || strings.Contains(c.Summary, "genotyping") {
			t.Errorf("a 'no result' card: %+v", c)
		}
	}
}

// TestUninterpretedResultNeverOrderATest: results present but not
// interpreted (CYP2C19 variants by GRCh37 position; an ambiguous HLA-B GL
// String) give a card that says so and asks for review — never "no
// result — order a test".
func TestUninterpretedResultNeverOrderATest(t *testing.T) {
	e := newEnv(t)
	var entries []any
	for _, n := range []string{"1011", "1012", "1013", "1014", "1015", "1016", "1017", "1018"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "ig", "Observation-Pgx-var-"+n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		entries = append(entries, map[string]any{"resource": m})
	}
	patient := map[string]any{"resourceType": "Patient", "id": "CGPatientExample01", "gender": "male"}
	body := orderFor(t, "CGPatientExample01", "clopidogrel", "32968", map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": entries}, patient)
	r := decodeResponse(t, e.hook(body))
	c, ok := findCard(r, "CYP2C19 result present but not interpreted — review")
	if !ok {
		t.Fatalf("no review card: %+v", r.Cards)
	}
	if !strings.Contains(c.Detail, "GRCh38 only") || !strings.Contains(c.Detail, "Observation/Pgx-var-1015") {
		t.Errorf("the card does not name what was not interpreted and why: %s", c.Detail)
	}
	for _, s := range c.Suggestions {
		if s.IsRecommended {
			t.Errorf("a test is recommended although a result exists: %+v", s)
		}
	}
	if _, bad := findCard(r, "no CYP2C19 result available"); bad {
		t.Errorf("'no result' card: %+v", r.Cards)
	}

	hla := map[string]any{"resourceType": "Observation", "id": "hla-amb", "status": "final",
		"code":                 map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "84413-4"}}},
		"subject":              map[string]any{"reference": "Patient/CGPatientExample01"},
		"valueCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": "http://glstring.org", "code": "hla#3.58.0#HLA-B*57:01:01/HLA-B*57:03:01+HLA-B*07:02:01"}}},
		"component": []any{map[string]any{"code": map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "48018-6"}}},
			"valueCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": "http://www.genenames.org", "code": "HGNC:4932", "display": "HLA-B"}}}}}}
	r = decodeResponse(t, e.hook(orderFor(t, "CGPatientExample01", "abacavir", "190521", hla, patient)))
	if _, ok := findCard(r, "HLA-B result present but not interpreted — review"); !ok {
		t.Errorf("ambiguous HLA-B typing: no review card: %+v", r.Cards)
	}
	if _, bad := findCard(r, "no HLA-B result available"); bad {
		t.Errorf("ambiguous HLA-B typing read as no result: %+v", r.Cards)
	}

	// A typing that names HLA-B*15:02 only says nothing about *57:01:
	// abacavir asks for review of the result, not for a test.
	one := hla
	one["valueCodeableConcept"] = map[string]any{"text": "HLA-B*15:02"}
	r = decodeResponse(t, e.hook(orderFor(t, "CGPatientExample01", "abacavir", "190521", one, patient)))
	if _, ok := findCard(r, "HLA-B result present but not interpreted — review"); !ok {
		t.Errorf("HLA-B typing silent on *57:01: no review card: %+v", r.Cards)
	}
	if _, bad := findCard(r, "no HLA-B result available"); bad {
		t.Errorf("HLA-B typing silent on *57:01 read as no result: %+v", r.Cards)
	}
}

// TestConditionsAsIndication: without a reasonCode, the patient's active
// Conditions (the conditions prefetch) are the indication, and the card
// says so.
func TestConditionsAsIndication(t *testing.T) {
	e := newEnv(t)
	body := editJSON(t, readRequest(t, "order-select-clopidogrel-cyp2c19-pm"), func(m map[string]any) {
		for _, en := range m["context"].(map[string]any)["draftOrders"].(map[string]any)["entry"].([]any) {
			delete(en.(map[string]any)["resource"].(map[string]any), "reasonCode")
		}
		m["prefetch"].(map[string]any)["conditions"] = map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": []any{
			map[string]any{"resource": map[string]any{"resourceType": "Condition", "id": "c1",
				"clinicalStatus": map[string]any{"coding": []any{map[string]any{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"}}},
				"code": map[string]any{"coding": []any{map[string]any{"system": "http://hl7.org/fhir/sid/icd-10-cm", "code": "I21.4",
					"display": "Non-ST elevation (NSTEMI) myocardial infarction"}}},
				"subject": map[string]any{"reference": "Patient/CGPatientExample01"}}},
			map[string]any{"resource": map[string]any{"resourceType": "Condition", "id": "c2",
				"clinicalStatus": map[string]any{"coding": []any{map[string]any{"code": "resolved"}}},
				"code":           map[string]any{"text": "Ischemic stroke"}, "subject": map[string]any{"reference": "Patient/CGPatientExample01"}}},
		}}
	})
	r := decodeResponse(t, e.hook(body))
	c, ok := findCard(r, "CYP2C19 Poor Metabolizer")
	if !ok {
		t.Fatalf("no CYP2C19 card: %+v", r.Cards)
	}
	if !strings.Contains(c.Detail, "active Conditions Condition/c1") || strings.Contains(c.Detail, "Ischemic stroke") {
		t.Errorf("the indication from Conditions is not shown (or a resolved one is): %s", c.Detail)
	}
	// The Condition's ICD-10-CM code (NSTEMI) chose the ACS/PCI population.
	if !strings.Contains(c.Detail, "population: CVI ACS PCI") {
		t.Errorf("the coded Condition did not choose the ACS/PCI population: %s", c.Detail)
	}
	// The code alone, with no display or text, decides it too.
	codeOnly := editJSON(t, body, func(m map[string]any) {
		e := m["prefetch"].(map[string]any)["conditions"].(map[string]any)["entry"].([]any)[0].(map[string]any)["resource"].(map[string]any)
		e["code"] = map[string]any{"coding": []any{map[string]any{"system": "http://hl7.org/fhir/sid/icd-10-cm", "code": "I21.4"}}}
	})
	r = decodeResponse(t, e.hook(codeOnly))
	if c, ok := findCard(r, "CYP2C19 Poor Metabolizer"); !ok || !strings.Contains(c.Detail, "population: CVI ACS PCI") {
		t.Errorf("an ICD-10-CM code alone did not choose the ACS/PCI population: %+v", r.Cards)
	}
}
