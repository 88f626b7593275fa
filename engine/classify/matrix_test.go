package classify_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

func model(t testing.TB) *classify.Model {
	t.Helper()
	m, err := classify.NewModel(classifierData(t).Matrix)
	if err != nil {
		t.Fatalf("NewModel: %v", err)
	}
	return m
}

// TestModelDerivation checks the derived background and entropies against
// the properties that define them and against the statistics the matrix
// file's header states.
func TestModelDerivation(t *testing.T) {
	m := model(t)
	c := m.Constants()
	sum := 0.0
	for _, r := range classify.StandardResidues {
		p, ok := m.Background(byte(r))
		if !ok || p <= 0 || p >= 1 {
			t.Errorf("background(%c) = %v, %v", r, p, ok)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("background sums to %v, want 1", sum)
	}
	// Every residue's substitution distribution p_b·exp(λ s_ab) sums to 1
	// at the implied λ (that is how λ and p were found).
	for _, a := range classify.StandardResidues {
		row := 0.0
		for _, b := range classify.StandardResidues {
			p, _ := m.Background(byte(b))
			s, _ := m.Score(byte(a), byte(b))
			row += p * math.Exp(c.ImpliedLambda*float64(s))
		}
		if math.Abs(row-1) > 1e-4 { // λ is reported rounded to 6 decimals
			t.Errorf("row %c sums to %v at the implied λ", a, row)
		}
		h, _ := m.Entropy(byte(a))
		if h <= 0 || h > math.Log2(20) {
			t.Errorf("entropy(%c) = %v outside (0, log2 20]", a, h)
		}
	}
	// The header says "in 1/2 Bit Units": λ = ln2/2.
	if math.Abs(c.NominalLambda-math.Ln2/2) > 1e-6 {
		t.Errorf("nominal λ = %v, want ln2/2", c.NominalLambda)
	}
	// The implied scale is close to the nominal one (the matrix scores are
	// rounded); so are the header's relative entropy and expected score,
	// which the matrix file computed from the original frequencies.
	if r := c.ImpliedLambda / c.NominalLambda; r < 0.9 || r > 1.1 {
		t.Errorf("implied λ %v is not within 10%% of nominal %v", c.ImpliedLambda, c.NominalLambda)
	}
	if c.HeaderRelativeEntropy == nil || c.HeaderExpectedScore == nil {
		t.Fatal("header statistics not parsed")
	}
	if d := math.Abs(c.DerivedRelativeEntropy-*c.HeaderRelativeEntropy) / *c.HeaderRelativeEntropy; d > 0.05 {
		t.Errorf("derived relative entropy %v differs from the header's %v by %.1f%%", c.DerivedRelativeEntropy, *c.HeaderRelativeEntropy, 100*d)
	}
	if d := math.Abs(c.DerivedExpectedScore-*c.HeaderExpectedScore) / math.Abs(*c.HeaderExpectedScore); d > 0.05 {
		t.Errorf("derived expected score %v differs from the header's %v by %.1f%%", c.DerivedExpectedScore, *c.HeaderExpectedScore, 100*d)
	}
	// The off-diagonal extremes of BLOSUM62 over the standard residues.
	if c.MinOffDiagonalScore != -4 || c.MaxOffDiagonalScore != 3 {
		t.Errorf("off-diagonal range [%d, %d], want [-4, 3]", c.MinOffDiagonalScore, c.MaxOffDiagonalScore)
	}
	if !(c.MinEntropyBits < c.MeanEntropyBits && c.MeanEntropyBits < c.MaxEntropyBits) {
		t.Errorf("entropy min %v, mean %v, max %v out of order", c.MinEntropyBits, c.MeanEntropyBits, c.MaxEntropyBits)
	}
	t.Logf("implied λ %.6f (nominal %.6f); relative entropy %.4f (header %.4f); expected %.4f (header %.4f)",
		c.ImpliedLambda, c.NominalLambda, c.DerivedRelativeEntropy, *c.HeaderRelativeEntropy, c.DerivedExpectedScore, *c.HeaderExpectedScore)
}

func TestNewModelRejects(t *testing.T) {
	good := classifierData(t).Matrix
	clone := func() classify.SubstitutionMatrix {
		m := good
		m.Scores = make([][]int, len(good.Scores))
		for i := range good.Scores {
			m.Scores[i] = append([]int{}, good.Scores[i]...)
		}
		m.Header = append([]string{}, good.Header...)
		return m
	}
	asym := clone()
	asym.Scores[0][1]++
	noUnits := clone()
	for i, h := range noUnits.Header {
		noUnits.Header[i] = strings.ReplaceAll(h, "Bit Units", "units")
	}
	short := clone()
	short.Scores = short.Scores[:5]
	noW := clone()
	noW.Alphabet = strings.Replace(noW.Alphabet, "W", "J", 1)
	for name, tc := range map[string]struct {
		m    classify.SubstitutionMatrix
		want string
	}{
		"asymmetric": {asym, "not symmetric"},
		"no units":   {noUnits, "score units"},
		"short":      {short, "rows"},
		"no W":       {noW, "19 of the 20"},
	} {
		if _, err := classify.NewModel(tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewModel error = %v, want %q", name, err, tc.want)
		}
	}
}

func TestConservation(t *testing.T) {
	m := model(t)
	c := m.Constants()
	term := func(s int) float64 {
		return float64(c.MaxOffDiagonalScore-s) / float64(c.MaxOffDiagonalScore-c.MinOffDiagonalScore)
	}
	tests := []struct {
		ref, alt  byte
		blosum    int
		damaging  bool
		conserved bool
	}{
		{'R', 'C', -3, true, true},  // NUDT15 p.Arg139Cys
		{'I', 'L', 2, false, true},  // CYP2C9 p.Ile359Leu
		{'C', 'R', -3, true, true},  // DPYD p.Cys29Arg
		{'M', 'V', 1, false, false}, // DPYD p.Met166Val
		{'S', 'T', 1, false, false},
		{'W', 'C', -2, true, true},
		{'G', 'W', -2, true, true},
		{'Y', 'F', 3, false, false},
	}
	for _, tc := range tests {
		got, err := m.ResidueConservation(tc.ref, tc.alt)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := m.Entropy(tc.ref)
		entTerm := (c.MaxEntropyBits - h) / (c.MaxEntropyBits - c.MinEntropyBits)
		want := classify.ResidueConservation{
			Ref: string(tc.ref), Alt: string(tc.alt), BLOSUM62: tc.blosum,
			Damaging: tc.damaging, Conserved: tc.conserved,
		}
		if diff := cmp.Diff(want, got, cmpIgnoreFloats()); diff != "" {
			t.Errorf("%c→%c (-want +got):\n%s", tc.ref, tc.alt, diff)
		}
		if math.Abs(got.SubstitutionTerm-term(tc.blosum)) > 1e-4 ||
			math.Abs(got.EntropyTerm-entTerm) > 1e-3 ||
			math.Abs(got.Score-(0.5*term(tc.blosum)+0.5*entTerm)) > 1e-3 {
			t.Errorf("%c→%c terms %+v do not follow the formula", tc.ref, tc.alt, got)
		}
	}
	if _, err := m.ResidueConservation('B', 'A'); err == nil {
		t.Error("a non-standard residue was scored")
	}
	// Extremes: the most constrained residue has entropy term 1, the least 0.
	lo, hi := 2.0, -1.0
	for _, r := range classify.StandardResidues {
		cv, _ := m.ResidueConservation(byte(r), 'A')
		lo, hi = math.Min(lo, cv.EntropyTerm), math.Max(hi, cv.EntropyTerm)
	}
	if lo != 0 || hi != 1 {
		t.Errorf("entropy term range [%v, %v], want [0, 1]", lo, hi)
	}
}
