package fhir_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

func addFixtureSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "fhir", "*.json"))
	ig, _ := filepath.Glob(filepath.Join("..", "testdata", "fhir", "ig", "Observation-*.json"))
	for _, p := range append(files, ig...) {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},"valueString":"CYP2D6*1/*4"}`))
	f.Add([]byte(`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},` +
		`"valueCodeableConcept":{"text":"*2/*2"},"component":[{"code":{"coding":[{"system":"http://loinc.org","code":"48018-6"}]},"valueCodeableConcept":{"text":"CYP2C19"}},` +
		`{"code":{"coding":[{"system":"urn:pgxsafety:genotype-caveat","code":"review-reason"}]},"valueString":"CYP2C19 AMP tier-1 position(s) without a called genotype"},` +
		`{"code":{"coding":[{"system":"urn:pgxsafety:genotype-caveat","code":"position-not-called"}]},"valueString":"chr10:94842866 rs3758581"},` +
		`{"code":{"coding":[{"system":"urn:pgxsafety:genotype-caveat","code":"untested-allele"}]},"valueString":"*38"}]}`))
	f.Add([]byte(`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Observation"}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"resourceType":"MedicationRequest","id":"s","status":"draft","intent":"order","reasonCode":{"coding":{"code":"I21.4"}},` +
		`"category":{"text":"x"},"dosageInstruction":{"doseAndRate":{"doseQuantity":{"value":1.10}}},"medicationCodeableConcept":{"text":"clopidogrel"}}`))
	f.Add([]byte(`{"resourceType":"Condition","id":"c","clinicalStatus":{"coding":[{"code":"active"}]},"code":{"coding":{"code":"I21.4"}}}`))
}

// FuzzActiveConditions: never panics; every condition returned is active
// and carries a code or text.
func FuzzActiveConditions(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		raws, err := fhir.Resources(b)
		if err != nil {
			raws = []json.RawMessage{b}
		}
		cs, _ := mapper.ActiveConditions(raws, "p1", "fuzz")
		for _, c := range cs {
			if c.Text == "" && len(c.Codes) == 0 {
				t.Fatalf("condition %+v has no code or text", c)
			}
			switch c.ClinicalStatus {
			case "active", "recurrence", "relapse":
			default:
				t.Fatalf("condition %+v is not active", c)
			}
		}
	})
}

// FuzzReadGenomics: whatever the input, the genotype handed to the engine
// is valid engine input (never a 422 from a lab's odd result).
func FuzzReadGenomics(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		raws, err := fhir.Resources(b)
		if err != nil {
			raws = []json.RawMessage{b}
		}
		g := mapper.ReadGenomics(append(raws, b), "CGPatientExample01", "fuzz")
		req := engine.Request{Drug: "clopidogrel"}
		g.Apply(&req)
		if err := kb.Caller().Validate(req); err != nil {
			t.Fatalf("genomics produced invalid engine input %+v: %v", req, err)
		}
	})
}

// FuzzMedicationOrders: every drug identified is a knowledge drug.
func FuzzMedicationOrders(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		raws, err := fhir.Resources(b)
		if err != nil {
			raws = []json.RawMessage{b}
		}
		o := mapper.MedicationOrders(raws, "fuzz", nil)
		for _, m := range o.Medications {
			for _, d := range m.Drugs {
				if _, ok := kb.Drug(d.Drug); !ok {
					t.Fatalf("identified %q, which is not a knowledge drug", d.Drug)
				}
			}
		}
	})
}

// FuzzReadPatient: the facts are valid engine input.
func FuzzReadPatient(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := mapper.ReadPatient(b, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
		req := engine.Request{Drug: "clopidogrel", State: p.State}
		if p.Sex != "" || p.AgeYears != nil {
			req.Patient = &engine.Patient{Sex: p.Sex, AgeYears: p.AgeYears}
		}
		if err := kb.Caller().Validate(req); err != nil {
			t.Fatalf("patient facts %+v are invalid engine input: %v", p, err)
		}
	})
}
