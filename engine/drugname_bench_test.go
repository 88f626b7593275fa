package engine_test

import "testing"

// BenchmarkReadDrug measures the drug-name reader on the notations it
// meets in practice.
func BenchmarkReadDrug(b *testing.B) {
	k := kb(b)
	inputs := []string{"clopidogrel", "Clopidogrel 75 MG Oral Tablet", "Plavix", "Clopilet 75", "Astin CV 10 capsule", "clopidogrel + asprin", "Plavixx"}
	for _, in := range inputs {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				k.Names().ReadDrug(in)
			}
		})
	}
}
