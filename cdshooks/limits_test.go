package cdshooks_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// withDrafts returns the order-sign request with n copies of its draft
// order (each its own id).
func withDrafts(t testing.TB, n int) []byte {
	return editJSON(t, readRequest(t, "order-sign-clopidogrel-cyp2c19-pm"), func(m map[string]any) {
		do := m["context"].(map[string]any)["draftOrders"].(map[string]any)
		first := do["entry"].([]any)[0].(map[string]any)
		entries := make([]any, n)
		for i := range entries {
			res := map[string]any{}
			for k, v := range first["resource"].(map[string]any) {
				res[k] = v
			}
			res["id"] = fmt.Sprintf("draft-%d", i)
			entries[i] = map[string]any{"resource": res}
		}
		do["entry"] = entries
	})
}

// TestCallSizeLimits: draft orders, resources per prefetch key and per
// call, and Bundle entries are bounded; a call over a limit is a 413
// naming the field and the limit before anything is checked or audited,
// and a call at the limit is answered.
func TestCallSizeLimits(t *testing.T) {
	e := newEnv(t)
	type tc struct {
		body   []byte
		status int
		field  string
		reason string
	}
	manyEntries := func(key string, n int, entry string) []byte {
		return editJSON(t, readRequest(t, "order-sign-clopidogrel-cyp2c19-pm"), func(m map[string]any) {
			entries := make([]any, n)
			for i := range entries {
				if entry == "" {
					entries[i] = map[string]any{}
				} else {
					entries[i] = map[string]any{"resource": map[string]any{"resourceType": entry, "id": fmt.Sprint("c", i), "status": "active",
						"subject": map[string]any{"reference": "Patient/CGPatientExample01"}, "medicationCodeableConcept": map[string]any{"text": "paracetamol"}}}
				}
			}
			b := map[string]any{"resourceType": "Bundle", "type": "searchset", "entry": entries}
			if key == "draftOrders" {
				m["context"].(map[string]any)["draftOrders"] = b
			} else {
				m["prefetch"].(map[string]any)[key] = b
			}
		})
	}
	cases := map[string]tc{
		"draft orders at the limit":     {withDrafts(t, cdshooks.MaxDraftOrders), http.StatusOK, "", ""},
		"draft orders over the limit":   {withDrafts(t, cdshooks.MaxDraftOrders+1), http.StatusRequestEntityTooLarge, "context.draftOrders", fmt.Sprintf("holds %d draft orders; at most %d", cdshooks.MaxDraftOrders+1, cdshooks.MaxDraftOrders)},
		"issue 25: 18,500 draft orders": {withDrafts(t, 18500), http.StatusRequestEntityTooLarge, "context.draftOrders", "is a Bundle of 18500 entries"},
		"medications at the key limit":  {manyEntries("activeMedications", cdshooks.MaxKeyResources, "MedicationRequest"), http.StatusOK, "", ""},
		"medications over the key limit": {manyEntries("activeMedications", cdshooks.MaxKeyResources+1, "MedicationRequest"), http.StatusRequestEntityTooLarge,
			"prefetch.activeMedications", fmt.Sprintf("holds %d resources; at most %d", cdshooks.MaxKeyResources+1, cdshooks.MaxKeyResources)},
		"empty Bundle entries over the limit": {manyEntries("pgxObservations", fhir.MaxBundleEntries+1, ""), http.StatusRequestEntityTooLarge,
			"prefetch.pgxObservations", fmt.Sprintf("is a Bundle of %d entries; at most %d", fhir.MaxBundleEntries+1, fhir.MaxBundleEntries)},
		"empty draft entries over the limit": {manyEntries("draftOrders", fhir.MaxBundleEntries+1, ""), http.StatusRequestEntityTooLarge,
			"context.draftOrders", "entries; at most"},
		"resources per call over the limit": {func() []byte {
			b := manyEntries("activeMedications", cdshooks.MaxKeyResources, "MedicationRequest")
			return editJSON(t, b, func(m map[string]any) {
				m["prefetch"].(map[string]any)["pgxObservations"] = m["prefetch"].(map[string]any)["activeMedications"]
			})
		}(), http.StatusRequestEntityTooLarge, "prefetch", fmt.Sprintf("at most %d are read per call", cdshooks.MaxCallResources)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			before := len(e.auditEntries())
			rec := e.post("/cds-services/pgx-order-sign", c.body, &token{})
			if c.status == http.StatusOK {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %.500s", rec.Code, rec.Body)
				}
				return
			}
			p := problemOf(t, rec, c.status)
			if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != c.field || !strings.Contains(p.InvalidParams[0].Reason, c.reason) {
				t.Errorf("invalid_params %+v, want %s: …%s…", p.InvalidParams, c.field, c.reason)
			}
			if n := len(e.auditEntries()); n != before {
				t.Errorf("a refused call wrote %d audit entries", n-before)
			}
		})
	}
}
