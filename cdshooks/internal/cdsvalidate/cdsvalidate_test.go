package cdsvalidate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/cdshooks/internal/cdsvalidate"
)

const specDir = "../../../testdata/cds/spec"

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(specDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSpecExamples: the specification's own examples pass the spec rules,
// except two defects of the examples themselves: the autolaunchable
// example's card has no indicator (required) and the systemActions
// example's action has no description (required).
func TestSpecExamples(t *testing.T) {
	want := map[string][]string{
		"spec-2.0.1_response-cards.json":       nil,
		"spec-2.0.1_response-empty-cards.json": nil,
		"spec-2.0.1_response-systemActions.json": {
			"systemActions[0].description: is required (a non-empty string)"},
		"spec-2.0.1_response-autolaunchable.json": {
			`cards[0].indicator: must be info, warning or critical, got ""`},
	}
	for f, w := range want {
		if diff := cmp.Diff(w, cdsvalidate.Response(read(t, f), cdsvalidate.Options{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f, diff)
		}
	}
	for _, f := range []string{"spec-2.0.1_discovery-response.json", "spec-2.0.1_discovery-with-extension.json"} {
		if p := cdsvalidate.Discovery(read(t, f), cdsvalidate.Options{}); len(p) > 0 {
			t.Errorf("%s: %v", f, p)
		}
	}
}

// TestStrictRules: pgxsafety's rules catch what the spec example allows.
func TestStrictRules(t *testing.T) {
	got := cdsvalidate.Response(read(t, "spec-2.0.1_response-cards.json"), cdsvalidate.Options{Strict: true})
	if !contains(got, "cards[1].uuid: is required (pgxsafety: every card has a uuid)") {
		t.Errorf("strict mode missed the card without uuid: %v", got)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestResponseProblems(t *testing.T) {
	card := func(extra string) string {
		return `{"cards":[{"uuid":"4e0a3a1e-3283-4575-ab82-028d55fe2719","summary":"s","indicator":"info","source":{"label":"x"}` + extra + `}]}`
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"valid", card(""), nil},
		{"no cards", `{}`, []string{"cards: is required and must be an array", "response: is an empty object"}},
		{"bad indicator", strings.Replace(card(""), `"info"`, `"hard-stop"`, 1), []string{`cards[0].indicator: must be info, warning or critical, got "hard-stop"`}},
		{"long summary", strings.Replace(card(""), `"s"`, `"`+strings.Repeat("é", 140)+`"`, 1), []string{"cards[0].summary: must be shorter than 140 characters, has 140"}},
		{"no source label", strings.Replace(card(""), `{"label":"x"}`, `{}`, 1), []string{"cards[0].source.label: is required (a non-empty string)", "response.cards[0].source: is an empty object"}},
		{"suggestions without selectionBehavior", card(`,"suggestions":[{"label":"l","uuid":"4e0a3a1e-3283-4575-ab82-028d55fe2710"}]`),
			[]string{`cards[0].selectionBehavior: is required with suggestions: at-most-one or any, got ""`}},
		{"delete without resourceId", card(`,"selectionBehavior":"at-most-one","suggestions":[{"label":"l","uuid":"4e0a3a1e-3283-4575-ab82-028d55fe2710","actions":[{"type":"delete","description":"d"}]}]`),
			[]string{"cards[0].suggestions[0].actions[0].resourceId: is required for delete: a relative reference such as MedicationRequest/123"}},
		{"override reason without display", card(`,"overrideReasons":[{"code":"c","system":"s"}]`),
			[]string{"cards[0].overrideReasons[0].display: is required (a non-empty string)"}},
		{"relative link", card(`,"links":[{"label":"l","url":"/x","type":"absolute"}]`), []string{"cards[0].links[0].url: must be an absolute URL"}},
		{"null field", card(`,"detail":null`), []string{"cards[0].detail: must be a string", "response.cards[0].detail: is null"}},
		{"empty array", card(`,"links":[]`), []string{"response.cards[0].links: is an empty array"}},
		{"two recommended with at-most-one", card(`,"selectionBehavior":"at-most-one","suggestions":[{"label":"a","uuid":"4e0a3a1e-3283-4575-ab82-028d55fe2711","isRecommended":true},{"label":"b","uuid":"4e0a3a1e-3283-4575-ab82-028d55fe2712","isRecommended":true}]`),
			[]string{"cards[0].suggestions: with at-most-one, at most one suggestion may be recommended"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cdsvalidate.Response([]byte(tc.in), cdsvalidate.Options{Strict: true})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTemplate(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"Patient/{{context.patientId}}", 0},
		{"Observation?patient={{context.patientId}}&code=http://loinc.org|84413-4,http://loinc.org|69548-6", 0},
		{"MedicationRequest?patient={{context.patientId}}&status=active", 0},
		{"Observation?patient={{context.patientId}}&code:text=abc", 1},
		{"Observation?patient={{patient.name}}", 1},
		{"Observation?patient={{context.patientId}}&date=sa2020", 1},
		{"Observation/{{context.patientId}}/_history", 1},
	}
	for _, tc := range tests {
		if got := cdsvalidate.Template(tc.in); len(got) != tc.want {
			t.Errorf("%s: %v", tc.in, got)
		}
	}
}
