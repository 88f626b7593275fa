package pgxapi_test

import (
	"reflect"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// TestWireCoversEngineResult: every exported field of the engine's result
// types has a field of the same name in its wire form, so a fact the
// engine adds cannot silently stay off the wire. Fields that are not
// facts of the answer (ids and typed targets the wire expresses as JSON
// paths) are listed.
func TestWireCoversEngineResult(t *testing.T) {
	notOnWire := map[string]bool{"Alert.ID": true, "Citation.Target": true}
	pairs := []struct{ engine, wire any }{
		{engine.Result{}, pgxapi.Result{}},
		{engine.Alert{}, pgxapi.Alert{}},
		{engine.GenotypeCall{}, pgxapi.GenotypeCall{}},
		{engine.Guideline{}, pgxapi.Guideline{}},
		{engine.Alternative{}, pgxapi.Alternative{}},
		{engine.EndemicRisk{}, pgxapi.EndemicRisk{}},
		{engine.PopulationFrequency{}, pgxapi.PopulationFrequency{}},
		{engine.CommunityNote{}, pgxapi.CommunityNote{}},
		{engine.HerbNote{}, pgxapi.HerbNote{}},
		{engine.IndianContext{}, pgxapi.IndianContext{}},
		{engine.DataCompleteness{}, pgxapi.DataCompleteness{}},
		{engine.Citation{}, pgxapi.Citation{}},
	}
	for _, p := range pairs {
		et, wt := reflect.TypeOf(p.engine), reflect.TypeOf(p.wire)
		for i := 0; i < et.NumField(); i++ {
			f := et.Field(i)
			if !f.IsExported() || notOnWire[et.Name()+"."+f.Name] {
				continue
			}
			if _, ok := wt.FieldByName(f.Name); !ok {
				t.Errorf("engine.%s.%s has no wire field in pgxapi.%s: map it in wire.go", et.Name(), f.Name, wt.Name())
			}
		}
	}
}

// TestCitationPaths: each typed citation target becomes the spec's JSON
// path, alerts by their position in the answer.
func TestCitationPaths(t *testing.T) {
	res := engine.Result{Alerts: []engine.Alert{{ID: "alert-2"}, {ID: "alert-1"}}}
	cases := []struct {
		target engine.CitationTarget
		want   string
	}{
		{engine.CitationTarget{Kind: engine.CitesAlert, Alert: "alert-1"}, "alerts[1]"},
		{engine.CitationTarget{Kind: engine.CitesAlertFrequencyIndia, Alert: "alert-2"}, "alerts[0].af_india"},
		{engine.CitationTarget{Kind: engine.CitesAlertFrequencyGlobal, Alert: "alert-1"}, "alerts[1].af_global"},
		{engine.CitationTarget{Kind: engine.CitesAlternative, Index: 1}, "safer_alternatives[1]"},
		{engine.CitationTarget{Kind: engine.CitesEndemicRisk, Index: 0}, "indian_context.endemic_risks[0]"},
		{engine.CitationTarget{Kind: engine.CitesPopulationFrequency, Index: 2}, "indian_context.population_frequencies[2]"},
		{engine.CitationTarget{Kind: engine.CitesCommunityNote, Index: 0}, "indian_context.community_notes[0]"},
		{engine.CitationTarget{Kind: engine.CitesTraditionalMedicine, Index: 3}, "indian_context.traditional_medicine[3]"},
	}
	for _, c := range cases {
		if got := pgxapi.FieldPath(res, c.target); got != c.want {
			t.Errorf("FieldPath(%+v) = %q, want %q", c.target, got, c.want)
		}
	}
}
