package fhir_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// TestMedicationOrderUnread: the parts of a medication that name no
// covered drug, when another part was identified, are kept (Unread) so
// that the surfaces can say they were not checked; a part that reads on
// its own as a knowledge drug is checked as that drug; a medication named
// only by a code gets a label with the system's short name.
func TestMedicationOrderUnread(t *testing.T) {
	clop := fixture(t, "MedicationRequest-draft-clopidogrel-pgxsafety.json")
	withMed := func(cc map[string]any) json.RawMessage {
		return edit(t, clop, func(m map[string]any) { m["medicationCodeableConcept"] = cc })
	}
	tests := []struct {
		name   string
		in     json.RawMessage
		label  string
		drugs  []string
		unread []string
	}{
		{name: "one covered drug, nothing unread", in: withMed(map[string]any{"text": "clopidogrel 75 mg"}),
			label: "clopidogrel 75 mg", drugs: []string{"clopidogrel"}},
		{name: "ingredient list with an unknown ingredient", in: withMed(map[string]any{"text": "clopidogrel 75 mg + foozole 10 mg"}),
			label: "clopidogrel 75 mg + foozole 10 mg", drugs: []string{"clopidogrel"}, unread: []string{"foozole 10 mg"}},
		{name: "the same unknown part in text and display is listed once",
			in:    withMed(map[string]any{"text": "clopidogrel + foozole", "coding": []any{map[string]any{"system": fhir.SystemSNOMED, "code": "0", "display": "Clopidogrel + Foozole"}}}),
			label: "clopidogrel + foozole", drugs: []string{"clopidogrel"}, unread: []string{"foozole"}},
		// The Indian brand table lists Clopitab-A (names-in-az-full-pages)
		// under clopidogrel with the ingredients Aspirin and Clopidogrel;
		// aspirin is a knowledge drug, so the generator makes it one of the
		// row's drugs.
		{name: "a combination's listed ingredient that is a knowledge drug is checked", in: withMed(map[string]any{"text": "Clopitab-A 75"}),
			label: "Clopitab-A 75", drugs: []string{"aspirin", "clopidogrel"}},
		{name: "nothing identified: no unread parts (the whole order is not identified)", in: withMed(map[string]any{"text": "Qorvantel 200 Tablet"}),
			label: "Qorvantel 200 Tablet"},
		{name: "code only: the label names the system", in: withMed(map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "999999999"}}}),
			label: "RxNorm 999999999"},
		{name: "contained Medication, one ingredient unknown",
			in: edit(t, clop, func(m map[string]any) {
				delete(m, "medicationCodeableConcept")
				m["medicationReference"] = map[string]any{"reference": "#med1"}
				m["contained"] = []any{map[string]any{"resourceType": "Medication", "id": "med1", "ingredient": []any{
					map[string]any{"itemCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "32968", "display": "clopidogrel"}}}},
					map[string]any{"itemCodeableConcept": map[string]any{"text": "foozole"}},
				}}}
			}),
			label: "clopidogrel", drugs: []string{"clopidogrel"}, unread: []string{"foozole"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := mapper.MedicationOrders([]json.RawMessage{tc.in}, "test", nil)
			if len(o.Medications) != 1 {
				t.Fatalf("%d orders: %+v", len(o.Medications), o.Issues)
			}
			m := o.Medications[0]
			var drugs []string
			for _, d := range m.Drugs {
				drugs = append(drugs, d.Drug)
			}
			if m.Label != tc.label {
				t.Errorf("label = %q, want %q", m.Label, tc.label)
			}
			if diff := cmp.Diff(tc.drugs, drugs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("drugs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unread, m.Unread, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unread (-want +got):\n%s", diff)
			}
		})
	}
}
