package classify

import "fmt"

// Weights of the two terms of the residue-only score. With no labelled data
// the classifier was not allowed to fit to, the two terms are weighted
// equally; both are scaled to [0,1] over the 20 standard residues first,
// so equal weights mean equal influence (docs/classifier.md §2.3).
const (
	WeightSubstitution = 0.5
	WeightEntropy      = 0.5
)

// ResidueConservation is the previous, residue-only conservation score:
// it reads only the two residue letters, so every position holding the
// same residue gets the same score. It is kept for comparison with the
// position-aware Conservation (Validate reports both).
type ResidueConservation struct {
	Ref string
	Alt string
	// BLOSUM62 is the matrix score of ref → alt.
	BLOSUM62 int
	// SubstitutionTerm is (max − s)/(max − min) over the off-diagonal
	// scores of the 20 standard residues: 1 for the least likely
	// substitution, 0 for the most likely.
	SubstitutionTerm float64
	// RefEntropyBits is the Shannon entropy (bits) of the reference
	// residue's BLOSUM62 substitution distribution.
	RefEntropyBits float64
	// EntropyTerm is (H_max − H_ref)/(H_max − H_min): 1 for the residue
	// whose substitutions are most constrained, 0 for the least.
	EntropyTerm float64
	// Score is 0.5·SubstitutionTerm + 0.5·EntropyTerm, in [0,1], higher =
	// more likely damaging (the conservation_score before profiles).
	Score float64
	// Damaging: the score is below zero, i.e. the substitution is seen less
	// often than chance in the alignments the matrix was built from.
	Damaging bool
	// Conserved: the reference residue's entropy is below the
	// background-weighted mean entropy of the 20 residues.
	Conserved bool
}

// ResidueConservation scores the substitution ref → alt from the two
// residues alone (one-letter standard residues, ref ≠ alt is not
// required).
func (md *Model) ResidueConservation(ref, alt byte) (ResidueConservation, error) {
	s, ok := md.Score(ref, alt)
	if !ok {
		return ResidueConservation{}, fmt.Errorf("%c→%c: not a pair of standard residues", ref, alt)
	}
	h, _ := md.Entropy(ref)
	subTerm := float64(md.maxScore-s) / float64(md.maxScore-md.minScore)
	// A diagonal score lies above the off-diagonal maximum; clamp so that
	// the term stays in [0,1] for any input.
	subTerm = clamp01(subTerm)
	entTerm := clamp01((md.maxEntropy - h) / (md.maxEntropy - md.minEntropy))
	return ResidueConservation{
		Ref:              string(ref),
		Alt:              string(alt),
		BLOSUM62:         s,
		SubstitutionTerm: round(subTerm, 4),
		RefEntropyBits:   round(h, 4),
		EntropyTerm:      round(entTerm, 4),
		Score:            round(clamp01(WeightSubstitution*subTerm+WeightEntropy*entTerm), 4),
		Damaging:         s < 0,
		Conserved:        h < md.meanEntropy,
	}, nil
}

func clamp01(x float64) float64 {
	switch {
	case x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}
