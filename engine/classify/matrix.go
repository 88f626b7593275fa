package classify

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Model is the conservation model derived from a log-odds substitution
// matrix: the matrix restricted to the 20 standard amino acids, the
// background frequencies the matrix implies, and for each residue the
// Shannon entropy of its substitution distribution. It is built once by
// NewModel and read-only afterwards.
//
// Derivation (docs/classifier.md §2). A log-odds matrix has scores
// s_ab = round(log(q_ab / (p_a p_b)) / λ) for target frequencies q and
// background frequencies p (Henikoff & Henikoff 1992). The data pack has
// the matrix but not the frequencies it was built from, so the model
// recovers the background the matrix implies: the frequencies p and the
// scale λ for which every row of p_b·exp(λ·s_ab) is a probability
// distribution, i.e. Σ_b p_b exp(λ s_ab) = 1 for every a and Σ_a p_a = 1.
// For a given λ the first condition is the linear system E(λ)·p = 1 with
// E_ab = exp(λ s_ab); λ is then found by bisection so that Σ p = 1.
// The file header's nominal scale ("1/2 Bit Units": λ = ln2/2) does not
// satisfy the second condition exactly because the scores are rounded;
// the implied λ is reported next to it.
type Model struct {
	name string
	// residues lists the 20 standard residues in matrix order.
	residues string
	idx      [256]int8
	score    [20][20]int
	// NominalLambda is the scale the header states (nats per score unit).
	nominalLambda float64
	// lambda is the implied scale.
	lambda     float64
	background [20]float64
	entropy    [20]float64 // bits
	// meanEntropy is Σ_a p_a H_a: the expected entropy of a residue drawn
	// from the background.
	meanEntropy            float64
	minEntropy, maxEntropy float64
	minScore, maxScore     int // over the 380 off-diagonal standard pairs
	// Header statistics as printed in the matrix file, and the same
	// statistics recomputed from the implied frequencies.
	headerEntropy, headerExpected   *float64
	derivedEntropy, derivedExpected float64
	sourceIDs                       []string
}

var (
	reUnits    = regexp.MustCompile(`(?i)in\s+1/(\d+)\s+bit\s+units`)
	reEntropy  = regexp.MustCompile(`Entropy\s*=\s*(-?[0-9.]+)`)
	reExpected = regexp.MustCompile(`Expected\s*=\s*(-?[0-9.]+)`)
)

// NewModel derives the model from m. It fails when m does not hold a
// symmetric score for every pair of standard residues, when the header
// does not state the score units, or when no positive background solves
// the equations.
func NewModel(m SubstitutionMatrix) (*Model, error) {
	md := &Model{name: m.Name, sourceIDs: m.SourceIDs}
	for i := range md.idx {
		md.idx[i] = -1
	}
	if len(m.Scores) != len(m.Alphabet) {
		return nil, fmt.Errorf("matrix %s: %d rows for %d symbols", m.Name, len(m.Scores), len(m.Alphabet))
	}
	pos := map[byte]int{}
	for i := 0; i < len(m.Alphabet); i++ {
		c := m.Alphabet[i]
		if len(m.Scores[i]) != len(m.Alphabet) {
			return nil, fmt.Errorf("matrix %s: row %c has %d scores for %d symbols", m.Name, c, len(m.Scores[i]), len(m.Alphabet))
		}
		if isStandard(c) {
			if _, dup := pos[c]; dup {
				return nil, fmt.Errorf("matrix %s: residue %c listed twice", m.Name, c)
			}
			pos[c] = i
			md.idx[c] = int8(len(md.residues))
			md.residues += string(c)
		}
	}
	if len(md.residues) != 20 {
		return nil, fmt.Errorf("matrix %s: has %d of the 20 standard residues", m.Name, len(md.residues))
	}
	md.minScore, md.maxScore = math.MaxInt, math.MinInt
	for a := 0; a < 20; a++ {
		for b := 0; b < 20; b++ {
			s := m.Scores[pos[md.residues[a]]][pos[md.residues[b]]]
			if t := m.Scores[pos[md.residues[b]]][pos[md.residues[a]]]; t != s {
				return nil, fmt.Errorf("matrix %s: not symmetric at %c/%c", m.Name, md.residues[a], md.residues[b])
			}
			md.score[a][b] = s
			if a != b {
				md.minScore, md.maxScore = min(md.minScore, s), max(md.maxScore, s)
			}
		}
	}
	header := strings.Join(m.Header, "\n")
	u := reUnits.FindStringSubmatch(header)
	if u == nil {
		return nil, fmt.Errorf("matrix %s: the header does not state the score units (\"in 1/N Bit Units\")", m.Name)
	}
	n, err := strconv.Atoi(u[1])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("matrix %s: bad score units %q", m.Name, u[0])
	}
	md.nominalLambda = math.Ln2 / float64(n)
	md.headerEntropy = headerFloat(reEntropy, header)
	md.headerExpected = headerFloat(reExpected, header)
	if err := md.deriveBackground(); err != nil {
		return nil, fmt.Errorf("matrix %s: %w", m.Name, err)
	}
	md.deriveEntropies(float64(n))
	return md, nil
}

func headerFloat(re *regexp.Regexp, s string) *float64 {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return nil
	}
	return &f
}

// backgroundFor solves E(λ)·p = 1. ok is false when the system is singular.
func (md *Model) backgroundFor(lambda float64) (p [20]float64, sum float64, ok bool) {
	var a [20][21]float64
	for i := 0; i < 20; i++ {
		for j := 0; j < 20; j++ {
			a[i][j] = math.Exp(lambda * float64(md.score[i][j]))
		}
		a[i][20] = 1
	}
	// Gaussian elimination with partial pivoting.
	for c := 0; c < 20; c++ {
		piv := c
		for r := c + 1; r < 20; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if math.Abs(a[piv][c]) < 1e-300 {
			return p, 0, false
		}
		a[c], a[piv] = a[piv], a[c]
		for r := 0; r < 20; r++ {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= 20; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	for i := 0; i < 20; i++ {
		p[i] = a[i][20] / a[i][i]
		sum += p[i]
	}
	return p, sum, true
}

// deriveBackground finds the implied λ and background (see Model).
func (md *Model) deriveBackground() error {
	f := func(l float64) (float64, bool) {
		_, s, ok := md.backgroundFor(l)
		return s - 1, ok
	}
	// Scan (0.2·λ0, 2·λ0] for the sign change nearest the nominal scale.
	const steps = 360
	lo, hi := 0.0, 0.0
	found := false
	best := math.Inf(1)
	for k := 1; k <= steps; k++ {
		a := md.nominalLambda * (0.2 + 1.8*float64(k-1)/steps)
		b := md.nominalLambda * (0.2 + 1.8*float64(k)/steps)
		fa, oka := f(a)
		fb, okb := f(b)
		if !oka || !okb || fa*fb > 0 {
			continue
		}
		if d := math.Abs((a+b)/2 - md.nominalLambda); d < best {
			lo, hi, best, found = a, b, d, true
		}
	}
	if !found {
		return errors.New("no scale λ gives background frequencies that sum to 1")
	}
	flo, _ := f(lo)
	for range 200 {
		mid := (lo + hi) / 2
		fm, _ := f(mid)
		if fm*flo <= 0 {
			hi = mid
		} else {
			lo, flo = mid, fm
		}
	}
	md.lambda = (lo + hi) / 2
	p, sum, ok := md.backgroundFor(md.lambda)
	if !ok {
		return errors.New("singular system at the implied scale")
	}
	for i := range p {
		if p[i] <= 0 {
			return fmt.Errorf("implied background frequency of %c is not positive (%g)", md.residues[i], p[i])
		}
		md.background[i] = p[i] / sum
	}
	return nil
}

// deriveEntropies computes each residue's substitution-distribution
// entropy and the header statistics; unitsPerBit is N of "1/N bit units".
func (md *Model) deriveEntropies(unitsPerBit float64) {
	md.minEntropy, md.maxEntropy = math.Inf(1), math.Inf(-1)
	md.meanEntropy = 0
	md.derivedEntropy, md.derivedExpected = 0, 0
	for a := 0; a < 20; a++ {
		dist := md.substitutionDistribution(a)
		h := 0.0
		for b := 0; b < 20; b++ {
			if dist[b] > 0 {
				h -= dist[b] * math.Log2(dist[b])
			}
			q := md.background[a] * dist[b]
			md.derivedEntropy += q * float64(md.score[a][b]) / unitsPerBit
			md.derivedExpected += md.background[a] * md.background[b] * float64(md.score[a][b]) / unitsPerBit
		}
		md.entropy[a] = h
		md.meanEntropy += md.background[a] * h
		md.minEntropy = min(md.minEntropy, h)
		md.maxEntropy = max(md.maxEntropy, h)
	}
}

// substitutionDistribution returns P(b | a) = p_b·exp(λ s_ab), normalised
// (the implied λ makes the sum 1 up to rounding).
func (md *Model) substitutionDistribution(a int) [20]float64 {
	var d [20]float64
	sum := 0.0
	for b := 0; b < 20; b++ {
		d[b] = md.background[b] * math.Exp(md.lambda*float64(md.score[a][b]))
		sum += d[b]
	}
	for b := range d {
		d[b] /= sum
	}
	return d
}

// Name returns the matrix name.
func (md *Model) Name() string { return md.name }

// Score returns the matrix score of ref → alt (one-letter standard
// residues); ok is false for any other symbol.
func (md *Model) Score(ref, alt byte) (int, bool) {
	a, b := md.idx[ref], md.idx[alt]
	if a < 0 || b < 0 {
		return 0, false
	}
	return md.score[a][b], true
}

// Entropy returns the Shannon entropy in bits of the substitution
// distribution of residue r.
func (md *Model) Entropy(r byte) (float64, bool) {
	a := md.idx[r]
	if a < 0 {
		return 0, false
	}
	return md.entropy[a], true
}

// Background returns the implied background frequency of residue r.
func (md *Model) Background(r byte) (float64, bool) {
	a := md.idx[r]
	if a < 0 {
		return 0, false
	}
	return md.background[a], true
}

// Constants reports the derived constants of the model.
func (md *Model) Constants() ModelConstants {
	bg := make(map[string]float64, 20)
	ent := make(map[string]float64, 20)
	for i := 0; i < 20; i++ {
		bg[string(md.residues[i])] = round(md.background[i], 4)
		ent[string(md.residues[i])] = round(md.entropy[i], 4)
	}
	c := ModelConstants{
		Matrix:                    md.name,
		NominalLambda:             round(md.nominalLambda, 6),
		ImpliedLambda:             round(md.lambda, 6),
		Background:                bg,
		EntropyBits:               ent,
		MeanEntropyBits:           round(md.meanEntropy, 4),
		MinEntropyBits:            round(md.minEntropy, 4),
		MaxEntropyBits:            round(md.maxEntropy, 4),
		MinOffDiagonalScore:       md.minScore,
		MaxOffDiagonalScore:       md.maxScore,
		DerivedRelativeEntropy:    round(md.derivedEntropy, 4),
		DerivedExpectedScore:      round(md.derivedExpected, 4),
		HeaderRelativeEntropy:     md.headerEntropy,
		HeaderExpectedScore:       md.headerExpected,
		BackgroundDerivation:      "implied by the matrix: p and λ such that Σ_b p_b·exp(λ·s_ab) = 1 for every residue a and Σ_a p_a = 1 (the published background frequencies are not in the data pack)",
		EntropyDistributionSource: "P(b|a) = p_b·exp(λ·s_ab) over the 20 standard residues",
	}
	return c
}

// ModelConstants are the constants a Model derives from its matrix,
// reported by the esm section and documented in docs/classifier.md.
type ModelConstants struct {
	Matrix        string  `json:"matrix"`
	NominalLambda float64 `json:"nominal_lambda"`
	ImpliedLambda float64 `json:"implied_lambda"`
	// Background and EntropyBits are keyed by one-letter residue code.
	Background                map[string]float64 `json:"background_frequencies"`
	EntropyBits               map[string]float64 `json:"substitution_entropy_bits"`
	MeanEntropyBits           float64            `json:"mean_entropy_bits"`
	MinEntropyBits            float64            `json:"min_entropy_bits"`
	MaxEntropyBits            float64            `json:"max_entropy_bits"`
	MinOffDiagonalScore       int                `json:"min_off_diagonal_score"`
	MaxOffDiagonalScore       int                `json:"max_off_diagonal_score"`
	DerivedRelativeEntropy    float64            `json:"derived_relative_entropy_bits"`
	DerivedExpectedScore      float64            `json:"derived_expected_score_bits"`
	HeaderRelativeEntropy     *float64           `json:"header_relative_entropy_bits,omitempty"`
	HeaderExpectedScore       *float64           `json:"header_expected_score_bits,omitempty"`
	BackgroundDerivation      string             `json:"background_derivation"`
	EntropyDistributionSource string             `json:"entropy_distribution"`
}

// round rounds x to n decimals (half away from zero) so that JSON output
// does not depend on the last bits of floating-point arithmetic.
func round(x float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(x*p) / p
}
