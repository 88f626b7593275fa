package fhir_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// TestReadGenotypeCaveats: the caveat components of a Genotype
// (fhir.SystemCaveat) are read with its diplotype and reach the engine
// request (Genomics.Apply); without them the diplotype is read alone. A
// review beside a value that is not a diplotype makes the result present
// but not interpreted for the reasons given; a caveat without its text is
// not guessed at (not interpreted). Agreeing results pool their caveats,
// so a review is never dropped.
func TestReadGenotypeCaveats(t *testing.T) {
	geno := fixture(t, "Observation-Pgx-geno-1001.json")
	const reason = "CYP2C19 AMP tier-1 position(s) without a called genotype: chr10:94842866 rs3758581"
	caveat := func(code, text string) any {
		return map[string]any{"code": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemCaveat, "code": code}}}, "valueString": text}
	}
	genotype := func(id, value string, comps ...any) json.RawMessage {
		return edit(t, geno, func(m map[string]any) {
			m["id"] = id
			m["valueCodeableConcept"] = map[string]any{"text": value}
			m["component"] = append([]any{map[string]any{
				"code":                 map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": fhir.LOINCGene}}},
				"valueCodeableConcept": map[string]any{"text": "CYP2C19"}}}, comps...)
			delete(m, "derivedFrom")
		})
	}
	tests := []struct {
		name       string
		in         []json.RawMessage
		diplotypes map[string]string
		caveats    map[string]engine.DiplotypeCaveat
		reason     string // of the result present but not interpreted; "" none
	}{
		{"review beside a diplotype", []json.RawMessage{genotype("g1", "*2/*2", caveat(fhir.CaveatReview, reason))},
			map[string]string{"CYP2C19": "*2/*2"}, map[string]engine.DiplotypeCaveat{"CYP2C19": {Review: []string{reason}}}, ""},
		{"positions not called", []json.RawMessage{genotype("g1", "*1/*1", caveat(fhir.CaveatPositionNotCalled, "chr10:94775423 rs17885179"),
			caveat(fhir.CaveatUntestedAllele, "*15"))},
			map[string]string{"CYP2C19": "*1/*1"}, map[string]engine.DiplotypeCaveat{"CYP2C19": {PositionsNotCalled: []string{"chr10:94775423 rs17885179"}, UntestedAlleles: []string{"*15"}}}, ""},
		{"no caveat", []json.RawMessage{genotype("g1", "*2/*2")}, map[string]string{"CYP2C19": "*2/*2"}, nil, ""},
		{"review of a value that is no diplotype", []json.RawMessage{genotype("g1", fhir.ReviewValue, caveat(fhir.CaveatReview, reason))},
			nil, nil, "CYP2C19 result reported as needing review: " + reason},
		{"caveat without its text", []json.RawMessage{genotype("g1", "*1/*1", caveat(fhir.CaveatReview, " "))},
			nil, nil, "has no valueString"},
		{"agreeing results pool their caveats", []json.RawMessage{genotype("g1", "*2/*2"), genotype("g2", "*2/*2", caveat(fhir.CaveatReview, reason))},
			map[string]string{"CYP2C19": "*2/*2"}, map[string]engine.DiplotypeCaveat{"CYP2C19": {Review: []string{reason}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mapper.ReadGenomics(tc.in, "CGPatientExample01", "test")
			if d := cmp.Diff(tc.diplotypes, g.Diplotypes); d != "" {
				t.Errorf("diplotypes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.caveats, g.Caveats); d != "" {
				t.Errorf("caveats (-want +got):\n%s", d)
			}
			var req engine.Request
			g.Apply(&req)
			if d := cmp.Diff(tc.caveats, req.DiplotypeCaveats); d != "" {
				t.Errorf("request caveats (-want +got):\n%s", d)
			}
			us := g.UninterpretedFor("CYP2C19")
			switch {
			case tc.reason == "" && len(us) > 0:
				t.Errorf("not interpreted: %+v", us)
			case tc.reason != "" && (len(us) != 1 || !strings.Contains(us[0].Reason, tc.reason)):
				t.Errorf("not interpreted %+v, want one for %q", us, tc.reason)
			}
		})
	}
}
