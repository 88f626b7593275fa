package engine_test

import (
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

// FuzzReadDrug: the drug-name reader never panics; what it reads as
// recognised names knowledge drugs only, and what it does not recognise
// checks nothing.
func FuzzReadDrug(f *testing.F) {
	for _, s := range []string{"clopidogrel 75 mg", "Clopidogrel 75 MG Oral Tablet [Plavix]", "5-FU", "rxnorm:32968", "B01AC04",
		"clopidogrel + asprin", "Astin CV 10 capsule", "ctx", "", "  ", "0.5 mg/ml", "a/b/c/d", "http://x|1", "Ὀδυσσεύς 10mg"} {
		f.Add(s)
	}
	k := kb(f)
	f.Fuzz(func(t *testing.T, s string) {
		r := k.Names().ReadDrug(s)
		switch r.Status {
		case engine.DrugStatusRecognised, engine.DrugStatusPartial:
			if len(r.Drugs) == 0 {
				t.Fatalf("%q: %s with no drug", s, r.Status)
			}
			for _, d := range r.Drugs {
				if _, ok := k.Drug(d); !ok {
					t.Fatalf("%q: %q is not a knowledge drug", s, d)
				}
			}
		case engine.DrugStatusNeedsConfirmation, engine.DrugStatusNotRecognised:
			if len(r.Drugs) != 0 {
				t.Fatalf("%q: %s but drugs %v", s, r.Status, r.Drugs)
			}
		default:
			t.Fatalf("%q: status %q", s, r.Status)
		}
	})
}

// FuzzSelectPopulation: the free-text reader never panics and always
// answers with populations of the drug.
func FuzzSelectPopulation(f *testing.F) {
	for _, s := range []string{"stable coronary disease, no PCI", "ACS ruled out; stable angina", "non-ACS non-PCI", "stroke and CAD", ",,,;;but", "no"} {
		f.Add(s, "I21.4")
	}
	k := kb(f)
	f.Fuzz(func(t *testing.T, text, code string) {
		ch := k.Populations().SelectPopulation("clopidogrel", population.PopulationContext{Text: text, Codes: []engine.Coding{{System: engine.SystemICD10CMURL, Code: code}}})
		if len(ch.Populations) == 0 || ch.Decided != (len(ch.Populations) == 1) {
			t.Fatalf("%q %q: %+v", text, code, ch)
		}
	})
}
