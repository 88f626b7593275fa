package fhir_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// TestSingleObjectForArray: a MedicationRequest whose reasonCode, category
// and dosageInstruction (and a coding) are single objects — as the CDS
// Hooks sandbox sends them — is read whole, with a warning naming the
// elements.
func TestSingleObjectForArray(t *testing.T) {
	raw := json.RawMessage(`{"resourceType":"MedicationRequest","id":"sb1","status":"draft","intent":"order",
	 "category":{"coding":{"system":"http://terminology.hl7.org/CodeSystem/medicationrequest-category","code":"outpatient"}},
	 "medicationCodeableConcept":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"32968","display":"clopidogrel"}]},
	 "subject":{"reference":"Patient/p1"},
	 "reasonCode":{"coding":[{"system":"http://snomed.info/sct","code":"394659003","display":"Acute coronary syndrome"}],"text":"Acute coronary syndrome"},
	 "dosageInstruction":{"text":"75 mg daily","doseAndRate":{"doseQuantity":{"value":75,"unit":"mg"}}}}`)
	orders := mapper.MedicationOrders([]json.RawMessage{raw}, "draftOrders", nil)
	if len(orders.Medications) != 1 {
		t.Fatalf("orders %+v", orders)
	}
	mo := orders.Medications[0]
	if mo.Partial != "" || len(mo.Drugs) != 1 || mo.Drugs[0].Drug != "clopidogrel" {
		t.Errorf("order %+v", mo)
	}
	if d := cmp.Diff([]fhir.Coding{{System: fhir.SystemSNOMED, Code: "394659003", Display: "Acute coronary syndrome"}}, mo.IndicationCodes); d != "" {
		t.Errorf("indication codes (-want +got):\n%s", d)
	}
	if mo.Indication != "Acute coronary syndrome" {
		t.Errorf("indication %q", mo.Indication)
	}
	want := []string{"category", "category.coding", "dosageInstruction", "dosageInstruction.doseAndRate", "reasonCode"}
	if len(orders.Issues) != 1 || orders.Issues[0].Severity != fhir.IssueWarning {
		t.Fatalf("issues %+v", orders.Issues)
	}
	if d := cmp.Diff(want, orders.Issues[0].Tolerated); d != "" {
		t.Errorf("tolerated (-want +got):\n%s", d)
	}
	// Anything else wrong is still refused by the strict parse.
	bad := json.RawMessage(`{"resourceType":"MedicationRequest","id":"sb2","status":"draft","intent":"order","reasonCode":"ACS",
	 "medicationCodeableConcept":{"text":"clopidogrel"},"subject":{"reference":"Patient/p1"}}`)
	orders = mapper.MedicationOrders([]json.RawMessage{bad}, "draftOrders", nil)
	if len(orders.Medications) != 0 || len(orders.Issues) != 1 || orders.Issues[0].Severity != fhir.IssueError {
		t.Errorf("a string reasonCode was not refused: %+v", orders)
	}
}

func TestActiveConditions(t *testing.T) {
	cond := func(id, clinical, verification, subject string) json.RawMessage {
		m := map[string]any{"resourceType": "Condition", "id": id, "subject": map[string]any{"reference": subject},
			"code": map[string]any{"coding": []any{map[string]any{"system": "http://hl7.org/fhir/sid/icd-10-cm", "code": "I21.4", "display": "NSTEMI"}}}}
		if clinical != "" {
			m["clinicalStatus"] = map[string]any{"coding": []any{map[string]any{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": clinical}}}
		}
		if verification != "" {
			m["verificationStatus"] = map[string]any{"coding": []any{map[string]any{"system": "http://terminology.hl7.org/CodeSystem/condition-ver-status", "code": verification}}}
		}
		b, _ := json.Marshal(m)
		return b
	}
	got, issues := mapper.ActiveConditions([]json.RawMessage{
		cond("c1", "active", "confirmed", "Patient/p1"),
		cond("c2", "resolved", "confirmed", "Patient/p1"),
		cond("c3", "active", "refuted", "Patient/p1"),
		cond("c4", "active", "", "Patient/other"),
		cond("c5", "", "", "Patient/p1"),
		cond("c6", "relapse", "", "Patient/p1"),
	}, "p1", "conditions")
	var refs []string
	for _, c := range got {
		refs = append(refs, c.Ref)
	}
	if d := cmp.Diff([]string{"Condition/c1", "Condition/c6"}, refs); d != "" {
		t.Errorf("active (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]fhir.Coding{{System: "http://hl7.org/fhir/sid/icd-10-cm", Code: "I21.4", Display: "NSTEMI"}}, got[0].Codes); d != "" {
		t.Errorf("codes (-want +got):\n%s", d)
	}
	if got[0].Text != "NSTEMI" || len(issues) != 4 {
		t.Errorf("text %q issues %+v", got[0].Text, issues)
	}
}
