package httpx

import "testing"

// BenchmarkCaseMismatch checks a /pgx/check-like body (the README
// clopidogrel request) against a request type of the same shape.
func BenchmarkCaseMismatch(b *testing.B) {
	type patient struct {
		Sex string `json:"sex,omitempty"`
		Age int    `json:"age,omitempty"`
	}
	type request struct {
		Drug        string            `json:"drug"`
		Variants    []string          `json:"variants,omitempty"`
		Zygosity    map[string]string `json:"zygosity,omitempty"`
		Diplotypes  map[string]string `json:"diplotypes,omitempty"`
		GenesTested []string          `json:"genes_tested,omitempty"`
		State       string            `json:"state,omitempty"`
		Ethnicity   string            `json:"ethnicity,omitempty"`
		Indication  string            `json:"indication,omitempty"`
		Patient     *patient          `json:"patient,omitempty"`
	}
	body := []byte(`{"drug":"clopidogrel","variants":["rs4244285","rs4986893"],"state":"Tamil Nadu",` +
		`"indication":"acute coronary syndrome, PCI","patient":{"sex":"female","age":54}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, found := CaseMismatch(body, &request{}); found {
			b.Fatal("mismatch reported")
		}
	}
}
