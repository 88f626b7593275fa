package fhir

import (
	"testing"
)

// BenchmarkParseResource compares google/fhir with the fast path on the
// resource types of the CDS order-sign benchmark.
//
//	go test ./fhir -run '^$' -bench BenchmarkParseResource -benchmem
func BenchmarkParseResource(b *testing.B) {
	p, err := NewParser()
	if err != nil {
		b.Fatal(err)
	}
	corpus := corpusResources(b)
	for _, c := range []struct{ name, key string }{
		{"Observation-variant", "Observation-variant-1-pgx-example.json"},
		{"Observation-genotype", "Observation-Pgx-geno-1001.json"},
		{"Observation-implication", "Observation-TxImp01.json"},
		{"Patient", "order-sign-clopidogrel-cyp2c19-pm.json.prefetch.patient"},
		{"MedicationRequest", "order-sign-clopidogrel-cyp2c19-pm.json.context.draftOrders.entry[0].resource"},
	} {
		raw := corpus[c.key]
		if _, _, ok := p.fastParse(raw); !ok {
			b.Fatalf("%s: not on the fast path", c.name)
		}
		b.Run(c.name+"/google-fhir", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.u.UnmarshalR4(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := p.fastParse(raw); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}
