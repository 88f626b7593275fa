package fhir_test

import (
	"encoding/json"
	"testing"

	"github.com/google/fhir/go/fhirversion"
	"github.com/google/fhir/go/jsonformat"
	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// strictParse parses a resource with google/fhir's validating unmarshaller
// (required elements, references): a suggested resource must be valid R4.
func strictParse(t *testing.T, raw json.RawMessage) {
	t.Helper()
	u, err := jsonformat.NewUnmarshaller("UTC", fhirversion.R4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.UnmarshalR4(raw); err != nil {
		t.Errorf("built resource is not valid R4: %v\n%s", err, raw)
	}
}

func decodeMap(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildMedicationRequest(t *testing.T) {
	raw, err := parser.BuildMedicationRequest(fhir.MedicationSuggestion{
		OrderContext: fhir.OrderContext{PatientID: "p1", EncounterID: "e1", Requester: "PractitionerRole/123"},
		Drug:         "carbamazepine", RxNormCUIs: []string{"2002"},
		Note: "Suggested by pgxsafety.",
	})
	if err != nil {
		t.Fatal(err)
	}
	strictParse(t, raw)
	want := map[string]any{
		"resourceType": "MedicationRequest",
		"status":       "draft",
		"intent":       "order",
		"medicationCodeableConcept": map[string]any{
			"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "2002", "display": "carbamazepine"}},
			"text":   "carbamazepine",
		},
		"subject":   map[string]any{"reference": "Patient/p1"},
		"encounter": map[string]any{"reference": "Encounter/e1"},
		"requester": map[string]any{"reference": "PractitionerRole/123"},
		"note":      []any{map[string]any{"text": "Suggested by pgxsafety."}},
	}
	if diff := cmp.Diff(want, decodeMap(t, raw)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// No code in the knowledge → text only; a requester that is not a
	// relative reference of an allowed type is left out.
	raw, err = parser.BuildMedicationRequest(fhir.MedicationSuggestion{
		OrderContext: fhir.OrderContext{PatientID: "p1", Requester: "Encounter/9"}, Drug: "prasugrel"})
	if err != nil {
		t.Fatal(err)
	}
	strictParse(t, raw)
	want = map[string]any{
		"resourceType":              "MedicationRequest",
		"status":                    "draft",
		"intent":                    "order",
		"medicationCodeableConcept": map[string]any{"text": "prasugrel"},
		"subject":                   map[string]any{"reference": "Patient/p1"},
	}
	if diff := cmp.Diff(want, decodeMap(t, raw)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	for _, bad := range []fhir.MedicationSuggestion{
		{Drug: "x"},
		{OrderContext: fhir.OrderContext{PatientID: "p/1"}, Drug: "x"},
		{OrderContext: fhir.OrderContext{PatientID: "p1"}},
	} {
		if _, err := parser.BuildMedicationRequest(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestBuildServiceRequest(t *testing.T) {
	raw, err := parser.BuildServiceRequest(fhir.TestSuggestion{
		OrderContext: fhir.OrderContext{PatientID: "p1", Requester: "Practitioner/9"},
		Text:         "CYP2C19 genotype", Reason: "clopidogrel: CPIC level A gene",
	})
	if err != nil {
		t.Fatal(err)
	}
	strictParse(t, raw)
	want := map[string]any{
		"resourceType": "ServiceRequest",
		"status":       "draft",
		"intent":       "order",
		"code":         map[string]any{"text": "CYP2C19 genotype"},
		"subject":      map[string]any{"reference": "Patient/p1"},
		"requester":    map[string]any{"reference": "Practitioner/9"},
		"reasonCode":   []any{map[string]any{"text": "clopidogrel: CPIC level A gene"}},
	}
	if diff := cmp.Diff(want, decodeMap(t, raw)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
