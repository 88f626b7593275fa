package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// TestCallFHIR: pgxsafety call --format fhir writes one collection Bundle
// holding a transaction Bundle per sample (a Genomic Report, Genotypes,
// a Provenance naming the input as offline and not audited); a finding
// not made from the sample's genotype is a report note, never a
// Therapeutic Implication.
func TestCallFHIR(t *testing.T) {
	path := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "multisample.vcf.bgz")
	stdout, stderr, err := runArgs(t, "call", path, "--format", "fhir", "--drug", "clopidogrel")
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	var doc struct {
		ResourceType, Type string
		Entry              []struct {
			Resource struct {
				ResourceType, Type string
				Entry              []struct {
					Resource map[string]any
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v", err)
	}
	if doc.ResourceType != "Bundle" || doc.Type != "collection" || len(doc.Entry) != 2 {
		t.Fatalf("%s/%s with %d entries", doc.ResourceType, doc.Type, len(doc.Entry))
	}
	for i, e := range doc.Entry {
		n := map[string]int{}
		for _, r := range e.Resource.Entry {
			n[r.Resource["resourceType"].(string)]++
		}
		if e.Resource.Type != "transaction" || n["DiagnosticReport"] != 1 || n["Provenance"] != 1 || n["Observation"] == 0 {
			t.Errorf("sample %d: %s bundle with %v", i, e.Resource.Type, n)
		}
	}
	// Neither sample has a CYP2C19 result: the clopidogrel finding is a
	// report note (test first), not a Therapeutic Implication.
	if !strings.Contains(stdout, "(offline, not audited)") || !strings.Contains(stdout, "clopidogrel, CYP2C19 (moderate): Consider CYP2C19 genotyping") ||
		strings.Contains(stdout, "Medication assessed") {
		t.Errorf("no offline provenance, no review note, or an implication in:\n%.2000s", stdout)
	}
}
