package classify

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestRegularise checks the pseudocount mixture: a column holding only the
// reference residue once (Neff 1, α = 0) is the BLOSUM62 prior exactly; a
// column of many sequences is dominated by its frequencies.
func TestRegularise(t *testing.T) {
	md := testModel(t)
	var cond [20][20]float64
	for b := 0; b < 20; b++ {
		cond[b] = md.substitutionDistribution(b)
	}
	ref, alt := int(md.idx['W']), int(md.idx['G'])
	var f [20]float64
	f[ref] = 1
	thin := regularise(cond, f, 1)
	if math.Abs(thin.p[alt]-cond[ref][alt]) > 1e-12 || thin.prior != 1 {
		t.Errorf("thin column: p(G) = %v, prior P(G|W) = %v, prior weight %v", thin.p[alt], cond[ref][alt], thin.prior)
	}
	f[ref], f[alt] = 0.5, 0.5
	thick := regularise(cond, f, 1001)
	if math.Abs(thick.p[alt]-0.5) > 0.01 || thick.prior > 0.01 {
		t.Errorf("thick column: p(G) = %v, prior weight %v", thick.p[alt], thick.prior)
	}
	sum := 0.0
	for _, p := range thick.p {
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("column probabilities sum to %v", sum)
	}
}

func testModel(t *testing.T) *Model {
	t.Helper()
	// The knowledge package imports this one, so an internal test reads the
	// committed matrix file itself.
	data, err := os.ReadFile("../../knowledge/data/classifier_blosum62.json")
	if err != nil {
		t.Fatal(err)
	}
	var m SubstitutionMatrix
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	md, err := NewModel(m)
	if err != nil {
		t.Fatal(err)
	}
	return md
}
