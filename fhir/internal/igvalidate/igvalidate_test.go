package igvalidate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// igExamples is the folder of the IG package's examples (CC0), shared with
// package fhir's tests.
var igExamples = filepath.Join("..", "..", "..", "testdata", "fhir", "ig")

func load(t testing.TB) *Validator {
	t.Helper()
	ps, err := Load(filepath.Join("testdata", "ig"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 5 {
		t.Fatalf("%d profiles loaded, want 5", len(ps))
	}
	return New(ps)
}

// TestIGExamplesPass: every example of the IG package that claims one of
// the profiles passes the validator.
func TestIGExamplesPass(t *testing.T) {
	v := load(t)
	files, _ := filepath.Glob(filepath.Join(igExamples, "*.json"))
	total := 0
	var all []*Target
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		es, err := Entries(raw)
		if err != nil {
			t.Fatal(err)
		}
		probs, targets, n := v.CheckSet(es)
		total += n
		all = append(all, targets...)
		for _, p := range probs {
			t.Errorf("%s: %s", filepath.Base(f), p)
		}
	}
	errs, _, err := Invariants("testdata", all)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range errs {
		t.Error(p)
	}
	if total < 20 {
		t.Errorf("%d example resources checked against a profile, want at least 20", total)
	}
	t.Logf("%d example resources checked; required bindings not checkable: %s", total, strings.Join(v.UncheckedList(), "; "))
}

// TestBrokenExamplesFail: hand-broken copies of IG examples fail, each
// naming the rule kind and element (one case per rule kind).
func TestBrokenExamplesFail(t *testing.T) {
	v := load(t)
	read := func(name string) map[string]any {
		raw, err := os.ReadFile(filepath.Join(igExamples, name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	cases := []struct {
		name       string
		file       string
		break_     func(m map[string]any)
		rule, path string
	}{
		{"genotype without its value", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) { delete(m, "valueCodeableConcept") }, "cardinality", "Observation.value[x]"},
		{"genotype coded as a haplotype (code pattern)", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) {
				m["code"] = map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "84414-2"}}}
			}, "pattern", "Observation.code"},
		{"Task status other than the fixed pattern", "Task-MedicationRecommendationExample1.json",
			func(m map[string]any) { m["status"] = "draft" }, "pattern", "Task.status"},
		{"genotype status outside the required value set", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) { m["status"] = "done" }, "binding", "Observation.status"},
		{"genotype without the GE category (slice geCategory)", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) {
				m["category"] = []any{m["category"].([]any)[0], map[string]any{"text": "other"}}
			}, "cardinality", "Observation.category:geCategory"},
		{"implication without derivedFrom", "Observation-TxImp01.json",
			func(m map[string]any) { delete(m, "derivedFrom") }, "cardinality", "Observation.derivedFrom"},
		{"genotype with a value and a dataAbsentReason (obs-6)", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) { m["dataAbsentReason"] = map[string]any{"text": "unknown"} }, "obs-6", "Observation"},
		{"genotype with an empty element (ele-1)", "Observation-Pgx-geno-1001.json",
			func(m map[string]any) {
				m["component"] = append(m["component"].([]any), map[string]any{"id": "only-an-id"})
			}, "ele-1", "Observation.component"},
		{"report with contained resources and a text on them (dom-2)", "DiagnosticReport-PGxGenomicReportEMERGE.json",
			func(m map[string]any) {
				m["contained"] = []any{map[string]any{"resourceType": "Observation", "id": "c1", "status": "final", "code": map[string]any{"text": "x"},
					"contained": []any{map[string]any{"resourceType": "Patient", "id": "p"}}}}
			}, "dom-2", "DiagnosticReport"},
		{"genotype report code not the genetic analysis report", "DiagnosticReport-PGxGenomicReportEMERGE.json",
			func(m map[string]any) { m["code"] = map[string]any{"text": "report"} }, "pattern", "DiagnosticReport.code"},
	}
	type run struct {
		i       int
		probs   []Problem
		targets []*Target
	}
	var runs []run
	var all []*Target
	for i, tc := range cases {
		m := read(tc.file)
		tc.break_(m)
		raw, _ := json.Marshal(m)
		es, err := Entries(raw)
		if err != nil {
			t.Fatal(err)
		}
		probs, targets, _ := v.CheckSet(es)
		for _, tg := range targets {
			tg.Name = fmt.Sprintf("case %d %s", i, tg.Name)
		}
		runs = append(runs, run{i, probs, targets})
		all = append(all, targets...)
	}
	errs, _, err := Invariants("testdata", all) // one node run for every case
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		tc := cases[r.i]
		t.Run(tc.name, func(t *testing.T) {
			probs := r.probs
			for _, p := range errs {
				if strings.HasPrefix(p.Resource, fmt.Sprintf("case %d ", r.i)) {
					probs = append(probs, p)
				}
			}
			found := false
			for _, p := range probs {
				if p.Rule == tc.rule && p.Path == tc.path {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s problem at %s; got %v", tc.rule, tc.path, probs)
			}
		})
	}
}
