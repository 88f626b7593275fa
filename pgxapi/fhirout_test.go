package pgxapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fhirBundle is the part of a FHIR Bundle the tests read.
type fhirBundle struct {
	ResourceType string `json:"resourceType"`
	Type         string `json:"type"`
	Identifier   *struct {
		Value string `json:"value"`
	} `json:"identifier"`
	Entry []struct {
		Resource json.RawMessage `json:"resource"`
	} `json:"entry"`
}

// resourceTypes counts the resource types of a Bundle's entries.
func resourceTypes(t *testing.T, b fhirBundle) (map[string]int, map[string]json.RawMessage) {
	t.Helper()
	n := map[string]int{}
	first := map[string]json.RawMessage{}
	for _, e := range b.Entry {
		var h struct {
			ResourceType string `json:"resourceType"`
		}
		if err := json.Unmarshal(e.Resource, &h); err != nil {
			t.Fatal(err)
		}
		n[h.ResourceType]++
		if first[h.ResourceType] == nil {
			first[h.ResourceType] = e.Resource
		}
	}
	return n, first
}

// TestCheckFHIR: POST /pgx/check with Accept: application/fhir+json
// answers the audited check as a Genomics Reporting transaction Bundle:
// the CYP2C19 *2/*2 genotype, a Therapeutic Implication, a Medication
// Recommendation, and the audit id in the report and the Provenance.
func TestCheckFHIR(t *testing.T) {
	ts := newServer(t)
	req := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/fhir+json")
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/fhir+json" {
		t.Errorf("Content-Type %q", ct)
	}
	var b fhirBundle
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	n, first := resourceTypes(t, b)
	if b.ResourceType != "Bundle" || b.Type != "transaction" || n["DiagnosticReport"] != 1 || n["Observation"] != 2 || n["Task"] != 1 || n["Provenance"] != 1 {
		t.Fatalf("bundle %s/%s with %v", b.ResourceType, b.Type, n)
	}
	body := rec.Body.String()
	for _, want := range []string{`"text":"*2/*2"`, "Poor Metabolizer", "clopidogrel"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Bundle does not hold %s", want)
		}
	}
	if !strings.Contains(string(first["DiagnosticReport"]), `"identifier"`) || !strings.Contains(string(first["Provenance"]), "audit log entry") {
		t.Errorf("no audit id in the report or Provenance:\n%s\n%s", first["DiagnosticReport"], first["Provenance"])
	}
}

// TestVCFFHIR: POST /pgx/vcf with the part format=fhir (or Accept:
// application/fhir+json) answers a collection Bundle with one transaction
// Bundle per sample, audited as the JSON answer is. Both samples' CYP2C19
// needs review (S1: its other tier-1 positions absent; S2: a no-call at
// the *2 position): S1's actionable reading *2/*2 (Poor Metabolizer) is
// the value with the interpretation "needs review"; S2 has no reading and
// is written with the review value, not a diplotype.
func TestVCFFHIR(t *testing.T) {
	data := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n" +
		"chr10\t94781859\trs4244285\tG\tA,<*>\t.\tPASS\t.\tGT\t1/1\t0/2\n")
	ts := newServer(t)
	for _, how := range []string{"part", "accept", "bad part"} {
		parts := []formPart{vcfFile("a.vcf", data), {name: "drug", data: []byte("clopidogrel")}}
		accept := ""
		switch how {
		case "part":
			parts = append(parts, formPart{name: "format", data: []byte("fhir")})
		case "accept":
			accept = "application/fhir+json"
		case "bad part":
			parts = append(parts, formPart{name: "format", data: []byte("xml")})
		}
		rec := ts.postVCF(t, accept, parts...)
		if how == "bad part" {
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"format"`) {
				t.Errorf("format=xml: status %d: %s", rec.Code, rec.Body)
			}
			continue
		}
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/fhir+json" {
			t.Fatalf("%s: status %d %s: %s", how, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		var b fhirBundle
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		if b.Type != "collection" || len(b.Entry) != 2 || b.Identifier == nil || b.Identifier.Value == "" {
			t.Fatalf("%s: collection %q with %d entries, identifier %+v", how, b.Type, len(b.Entry), b.Identifier)
		}
		for i, e := range b.Entry {
			var s fhirBundle
			if err := json.Unmarshal(e.Resource, &s); err != nil {
				t.Fatal(err)
			}
			if s.Type != "transaction" {
				t.Errorf("%s: sample %d bundle type %q", how, i, s.Type)
			}
			sample := string(e.Resource)
			switch i {
			case 0: // the actionable reading kept beside the review is the value, said in review
				if !strings.Contains(sample, `"valueCodeableConcept":{"text":"*2/*2"}`) || !strings.Contains(sample, `"interpretation":[{"text":"needs review"}]`) {
					t.Errorf("%s: S1's CYP2C19 is not *2/*2 in review", how)
				}
			case 1:
				if !strings.Contains(sample, `"valueCodeableConcept":{"text":"not interpreted — review"}`) {
					t.Errorf("%s: S2's CYP2C19 is not written as review", how)
				}
			}
		}
	}
}

// TestCheckFHIRReview: a /pgx/check whose CYP2C19 input conflicts (*1/*1
// beside rs4244285 homozygous) is written with a Genotype in review, not a
// normal one, and no Therapeutic Implication.
func TestCheckFHIRReview(t *testing.T) {
	ts := newServer(t)
	req := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(
		`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*1/*1"},"variants":["rs4244285"],"zygosity":{"rs4244285":"hom"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/fhir+json")
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	if !strings.Contains(body, `"valueCodeableConcept":{"text":"not interpreted — review"}`) || strings.Contains(body, `"text":"*1/*1"`) ||
		strings.Contains(body, "therapeutic-implication\",\"display") {
		t.Errorf("CYP2C19 not written as review, or an implication written:\n%s", body)
	}
}
