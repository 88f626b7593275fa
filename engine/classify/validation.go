package classify

import "sort"

// Validation measures how well conservation_score separates the missense
// changes that alone define a CPIC No/Decreased-function allele from those
// that define a Normal-function allele, among every missense change of the
// knowledge's protein-change table (any gene: the score needs only the two
// residues), and compares it with the BLOSUM62 score alone. Nothing was
// fitted to this set: the formula's constants are fixed a priori
// (docs/classifier.md §2.3).
type Validation struct {
	Description string `json:"description"`
	// All is the measure over every gene; Substrate over the substrate
	// proteins only.
	All       AUCSet `json:"all_genes"`
	Substrate AUCSet `json:"substrate_proteins"`
}

// AUCSet is one measurement.
type AUCSet struct {
	Positives int `json:"positives"`
	Negatives int `json:"negatives"`
	// AUCConservation is the probability that a random positive scores
	// higher than a random negative (ties count one half).
	AUCConservation float64 `json:"auc_conservation_score"`
	// AUCBLOSUM62 is the same for −BLOSUM62 (a lower score = more damaging).
	AUCBLOSUM62 float64          `json:"auc_blosum62"`
	Items       []ValidationItem `json:"items"`
}

// ValidationItem is one labelled change.
type ValidationItem struct {
	Gene              string  `json:"gene"`
	RsID              string  `json:"rsid"`
	Change            string  `json:"change"`
	Function          string  `json:"cpic_function"`
	Positive          bool    `json:"positive"`
	BLOSUM62          int     `json:"blosum62"`
	ConservationScore float64 `json:"conservation_score"`
}

// Validate computes the Validation from the knowledge.
func (c *Classifier) Validate() Validation {
	var all, sub []ValidationItem
	seen := map[string]bool{}
	for _, ch := range c.ck.Changes {
		if !isMissense(ch) {
			continue
		}
		key := ch.RsID + ":" + ch.Ref + ">" + ch.Alt
		if seen[key] {
			continue
		}
		seen[key] = true
		af := c.v.soleFunction(ch.Gene, ch.RsID, ch.Ref, ch.Alt)
		if !nonNormal(af.Function) && af.Function != FunctionNormal {
			continue
		}
		s, _ := ParseProteinChange(ch.HGVSp)
		cons, err := c.model.Conservation(s.Ref, s.Alt)
		if err != nil {
			continue
		}
		it := ValidationItem{Gene: ch.Gene, RsID: ch.RsID, Change: ch.Change, Function: af.Function,
			Positive: nonNormal(af.Function), BLOSUM62: cons.BLOSUM62, ConservationScore: cons.Score}
		all = append(all, it)
		if _, ok := c.proteins[ch.Gene]; ok {
			sub = append(sub, it)
		}
	}
	return Validation{
		Description: "CPIC No/Decreased-function missense alleles (positives) vs Normal-function ones (negatives) among the " +
			"missense changes of the knowledge's protein-change table; AUC of conservation_score and of BLOSUM62 alone " +
			"(lower BLOSUM62 = more damaging); nothing was fitted to this set",
		All:       aucSet(all),
		Substrate: aucSet(sub),
	}
}

func aucSet(items []ValidationItem) AUCSet {
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Gene != items[j].Gene {
			return items[i].Gene < items[j].Gene
		}
		return items[i].RsID+items[i].Change < items[j].RsID+items[j].Change
	})
	out := AUCSet{Items: items}
	if out.Items == nil {
		out.Items = []ValidationItem{}
	}
	var pos, neg []ValidationItem
	for _, it := range items {
		if it.Positive {
			pos = append(pos, it)
		} else {
			neg = append(neg, it)
		}
	}
	out.Positives, out.Negatives = len(pos), len(neg)
	out.AUCConservation = round(AUC(pos, neg, func(it ValidationItem) float64 { return it.ConservationScore }), 4)
	out.AUCBLOSUM62 = round(AUC(pos, neg, func(it ValidationItem) float64 { return -float64(it.BLOSUM62) }), 4)
	return out
}

// AUC is the Mann–Whitney estimate of the area under the ROC curve: the
// share of (positive, negative) pairs in which the positive scores higher,
// ties counting one half. It is 0 when either set is empty.
func AUC[T any](pos, neg []T, score func(T) float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return 0
	}
	var wins float64
	for _, p := range pos {
		for _, n := range neg {
			switch sp, sn := score(p), score(n); {
			case sp > sn:
				wins++
			case sp == sn:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(pos)*len(neg))
}
