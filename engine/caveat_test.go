package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

// alertKey is what TestDiplotypeCaveats compares of an alert.
type alertKey struct {
	Severity        engine.Severity
	Gene            string
	Category        engine.Category
	TestRecommended bool
}

// TestDiplotypeCaveats: a diplotype given with what its result says beside
// it (engine.DiplotypeCaveat, a FHIR Genotype read back) is answered as the
// same facts of a VCF call are: a review keeps an actionable reading with a
// review alert naming the reason, and withholds one that could read as
// normal; positions not called give the "may be incomplete" caution naming
// them and the untested alleles. Each case is also run without the caveat,
// which must answer differently (the caveat is what makes the difference).
func TestDiplotypeCaveats(t *testing.T) {
	k := kb(t)
	const tier1 = "CYP2C19 AMP tier-1 position(s) without a called genotype: chr10:94842866 rs3758581"
	cases := []struct {
		name       string
		drug, dip  string
		caveat     engine.DiplotypeCaveat
		with       []alertKey
		without    []alertKey
		says       []string // in some alert message with the caveat
		phenotype  string   // CYP2C19 phenotype in the answer's genotype with the caveat
		untestedOf []string
	}{
		{
			name: "review beside an actionable reading", drug: "clopidogrel", dip: "*2/*2",
			caveat:    engine.DiplotypeCaveat{Review: []string{tier1}},
			with:      []alertKey{{engine.SeverityHigh, "CYP2C19", engine.CategoryConfirmed, false}, {engine.SeverityModerate, "CYP2C19", engine.CategoryUnknown, false}},
			without:   []alertKey{{engine.SeverityHigh, "CYP2C19", engine.CategoryConfirmed, false}},
			says:      []string{tier1, "only the actionable CYP2C19 reading *2/*2 (Poor Metabolizer) is used"},
			phenotype: "Poor Metabolizer",
		},
		{
			name: "review of a reading that could read as normal", drug: "clopidogrel", dip: "*1/*1",
			caveat:    engine.DiplotypeCaveat{Review: []string{tier1}},
			with:      []alertKey{{engine.SeverityModerate, "CYP2C19", engine.CategoryUnknown, false}},
			says:      []string{tier1, "so no CYP2C19 phenotype was assumed"},
			phenotype: "Could not interpret — review",
		},
		{
			name: "positions not called", drug: "clopidogrel", dip: "*1/*1",
			caveat: engine.DiplotypeCaveat{PositionsNotCalled: []string{"chr10:94775423 rs17885179", "chr10:94780544 rs57700608"},
				UntestedAlleles: []string{"*15", "*18"}},
			with:       []alertKey{{engine.SeverityInfo, "CYP2C19", engine.CategoryUnknown, true}},
			says:       []string{"2 definition position(s) not called (chr10:94775423 rs17885179, chr10:94780544 rs57700608)", "alleles defined there untested (*15, *18)", "may be incomplete"},
			phenotype:  "Normal Metabolizer",
			untestedOf: []string{"*15", "*18"},
		},
		{
			// A HIGH finding already says more than "may be incomplete"
			// (as for a VCF call with positions missing).
			name: "positions not called beside a HIGH finding", drug: "clopidogrel", dip: "*2/*2",
			caveat:    engine.DiplotypeCaveat{PositionsNotCalled: []string{"chr10:94775423 rs17885179"}},
			with:      []alertKey{{engine.SeverityHigh, "CYP2C19", engine.CategoryConfirmed, false}},
			without:   []alertKey{{engine.SeverityHigh, "CYP2C19", engine.CategoryConfirmed, false}},
			phenotype: "Poor Metabolizer",
		},
	}
	keys := func(res engine.Result) []alertKey {
		var out []alertKey
		for _, a := range res.Alerts {
			if a.Gene == "CYP2C19" {
				out = append(out, alertKey{a.Severity, a.Gene, a.Category, a.TestRecommended})
			}
		}
		return out
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := engine.Request{Drug: tc.drug, Diplotypes: map[string]string{"CYP2C19": tc.dip},
				DiplotypeCaveats: map[string]engine.DiplotypeCaveat{"CYP2C19": tc.caveat}}
			res, err := k.Evaluate(req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.with, keys(res)); d != "" {
				t.Errorf("alerts with the caveat (-want +got):\n%s", d)
			}
			var msgs []string
			for _, a := range res.Alerts {
				msgs = append(msgs, a.Message)
			}
			for _, s := range tc.says {
				if !strings.Contains(strings.Join(msgs, "\n"), s) {
					t.Errorf("no alert says %q:\n%s", s, strings.Join(msgs, "\n"))
				}
			}
			var phenotype string
			var untested []string
			for _, g := range res.Genotype {
				if g.Gene == "CYP2C19" {
					phenotype, untested = g.Phenotype, g.UntestedAlleles
				}
			}
			if phenotype != tc.phenotype {
				t.Errorf("CYP2C19 phenotype %q, want %q", phenotype, tc.phenotype)
			}
			if d := cmp.Diff(tc.untestedOf, untested); d != "" {
				t.Errorf("untested alleles (-want +got):\n%s", d)
			}

			req.DiplotypeCaveats = nil
			res, err = k.Evaluate(req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.without, keys(res)); d != "" {
				t.Errorf("alerts without the caveat (-want +got):\n%s", d)
			}
		})
	}
}

// TestDiplotypeCaveatsValidate: a caveat qualifies a given diplotype and
// its lists are bounded; anything else is refused naming the field.
func TestDiplotypeCaveatsValidate(t *testing.T) {
	k := kb(t)
	long := make([]string, engine.MaxCaveatItems+1)
	for i := range long {
		long[i] = "chr10:1"
	}
	cases := []struct {
		name  string
		req   engine.Request
		field string
	}{
		{"caveat without its diplotype", engine.Request{Drug: "clopidogrel", DiplotypeCaveats: map[string]engine.DiplotypeCaveat{"CYP2C19": {Review: []string{"x"}}}},
			"diplotype_caveats.CYP2C19"},
		{"empty reason", engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*2"},
			DiplotypeCaveats: map[string]engine.DiplotypeCaveat{"CYP2C19": {Review: []string{" "}}}}, "diplotype_caveats.CYP2C19.review[0]"},
		{"too many positions", engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*2"},
			DiplotypeCaveats: map[string]engine.DiplotypeCaveat{"CYP2C19": {PositionsNotCalled: long}}}, "diplotype_caveats.CYP2C19.positions_not_called"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.Evaluate(tc.req)
			var ve *engine.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a validation error", err)
			}
			var fields []string
			for _, f := range ve.Fields {
				fields = append(fields, f.Field)
			}
			if len(fields) != 1 || fields[0] != tc.field {
				t.Errorf("fields %v, want [%s]", fields, tc.field)
			}
		})
	}
}
