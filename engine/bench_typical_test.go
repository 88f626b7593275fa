package engine_test

import (
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// BenchmarkCheckTypical is the request of `pgxsafety bench`
// (cmd/pgxsafety/bench.go benchCheckBody): clopidogrel, CYP2C19 *2/*2,
// a state, an indication and the patient's sex and age.
func BenchmarkCheckTypical(b *testing.B) {
	age := 55.0
	benchmarkCheck(b, engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"},
		GenesTested: []string{"CYP2C19"}, State: "Tamil Nadu", Indication: "Acute coronary syndrome with PCI",
		Patient: &engine.Patient{Sex: "male", AgeYears: &age}})
}
