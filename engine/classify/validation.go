package classify

import (
	"fmt"
	"sort"
)

// Validation measures how well the scores separate the missense changes
// that alone define a CPIC No/Decreased-function allele (positives) from
// those that alone define a Normal-function allele (negatives), among the
// missense changes of the knowledge's protein-change table: the
// position-aware conservation_score, the previous residue-only score and
// BLOSUM62 alone, per gene and pooled. It also reports the calibration of
// DamagingLogOdds on the same set.
type Validation struct {
	Description string `json:"description"`
	// All is the residue-only measure over every gene (the score needs only
	// the two residues); Substrate the same over the substrate proteins.
	// Both are kept as they were before profiles, for comparison.
	All       AUCSet `json:"all_genes"`
	Substrate AUCSet `json:"substrate_proteins"`
	// Profiled is the measure over the genes with a homolog profile, and
	// PerGene the same gene by gene.
	Profiled    AUCSet      `json:"profiled_genes"`
	PerGene     []AUCSet    `json:"per_gene"`
	Calibration Calibration `json:"calibration"`
}

// AUCSet is one measurement.
type AUCSet struct {
	// Gene is set on per-gene sets.
	Gene      string `json:"gene,omitempty"`
	Positives int    `json:"positives"`
	Negatives int    `json:"negatives"`
	// AUCConservation is the probability that a random positive scores
	// higher than a random negative (ties count one half) for the residue-
	// only score (the conservation_score of engine 2.x); AUCProfile the same
	// for the position-aware conservation_score (absent on sets with a gene
	// without a profile); AUCBLOSUM62 for −BLOSUM62. Every AUC is absent
	// when the set lacks positives or negatives.
	AUCConservation *float64 `json:"auc_residue_only_score"`
	AUCProfile      *float64 `json:"auc_conservation_score,omitempty"`
	AUCBLOSUM62     *float64 `json:"auc_blosum62"`
	// VsAll (per-gene sets only) ranks the positives against every
	// possible substitution of the protein (19 × length), most of which
	// are not known to be damaging: the same three AUCs with all
	// substitutions as the negatives. It is defined for genes without a
	// Normal-function allele too.
	VsAll *VsAllAUC        `json:"vs_all_substitutions,omitempty"`
	Items []ValidationItem `json:"items,omitempty"`
}

// VsAllAUC is the AUC of the positives against all substitutions.
type VsAllAUC struct {
	Substitutions int     `json:"substitutions"`
	AUCProfile    float64 `json:"auc_conservation_score"`
	AUCResidue    float64 `json:"auc_residue_only_score"`
	AUCBLOSUM62   float64 `json:"auc_blosum62"`
}

// ValidationItem is one labelled change.
type ValidationItem struct {
	Gene     string `json:"gene"`
	RsID     string `json:"rsid"`
	Change   string `json:"change"`
	Function string `json:"cpic_function"`
	Positive bool   `json:"positive"`
	BLOSUM62 int    `json:"blosum62"`
	// ResidueOnlyScore is the previous, residue-only score.
	ResidueOnlyScore float64 `json:"residue_only_score"`
	// Profiled is true when the gene has a homolog profile; the next fields
	// are set only then.
	Profiled          bool    `json:"profiled"`
	ConservationScore float64 `json:"conservation_score,omitempty"`
	LogOdds           float64 `json:"site_log_odds,omitempty"`
	Confidence        string  `json:"confidence,omitempty"`
	// TierWithoutFunction is the tier the rules give when the curated CPIC
	// function is withheld: what a substitution the knowledge does not know
	// would get from its conservation and population evidence.
	TierWithoutFunction int `json:"tier_without_function,omitempty"`
}

// Calibration reports how DamagingLogOdds was chosen: among the candidate
// thresholds, the one with the highest Youden index (sensitivity +
// specificity − 1) on the profiled labelled changes scored with adequate
// confidence; ties go to the lower (stricter) threshold.
type Calibration struct {
	Rule       string           `json:"rule"`
	Positives  int              `json:"positives"`
	Negatives  int              `json:"negatives"`
	Candidates []CalibrationRow `json:"candidates"`
	Selected   float64          `json:"selected"`
}

// CalibrationRow is one candidate threshold.
type CalibrationRow struct {
	Threshold   float64 `json:"site_log_odds_at_most"`
	Sensitivity float64 `json:"sensitivity"`
	Specificity float64 `json:"specificity"`
	Youden      float64 `json:"youden"`
}

// CalibrationCandidates are the thresholds on site_log_odds (nats) the
// calibration chooses among: whole and half nats from −1 (the alternate
// residue e ≈ 2.7 times rarer than the reference at the position) to −5
// (~150 times rarer).
var CalibrationCandidates = []float64{-1, -1.5, -2, -2.5, -3, -3.5, -4, -4.5, -5}

// Validate computes the Validation from the knowledge.
func (c *Classifier) Validate() Validation {
	var all, sub, prof []ValidationItem
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
		old, err := c.model.ResidueConservation(s.Ref, s.Alt)
		if err != nil {
			continue
		}
		it := ValidationItem{Gene: ch.Gene, RsID: ch.RsID, Change: ch.Change, Function: af.Function,
			Positive: nonNormal(af.Function), BLOSUM62: old.BLOSUM62, ResidueOnlyScore: old.Score}
		if _, ok := c.profiles[ch.Gene]; ok {
			cons, err := c.conservation(ch.Gene, s.Pos, s.Ref, s.Alt)
			if err == nil {
				it.Profiled, it.ConservationScore, it.LogOdds, it.Confidence = true, cons.Score, cons.LogOdds, cons.Confidence
				rec := c.v.population(ch)
				syn := synthesise(synthesisInput{gene: ch.Gene, levelA: c.v.hasLevelA(ch.Gene), cons: cons, pop: summarise([]PopulationRecord{rec})})
				it.TierWithoutFunction = syn.Tier
				prof = append(prof, it)
			}
		}
		all = append(all, it)
		if _, ok := c.proteins[ch.Gene]; ok {
			sub = append(sub, it)
		}
	}
	v := Validation{
		Description: "CPIC No/Decreased-function missense alleles (positives) vs Normal-function ones (negatives) among the " +
			"missense changes of the knowledge's protein-change table, each alone defining the allele; AUC of the position-aware " +
			"conservation_score, of the residue-only score of engine 2.x and of BLOSUM62 alone (lower = more damaging), " +
			"pooled and per gene; only DamagingLogOdds was chosen on this set (calibration)",
		All:       aucSet(all, false),
		Substrate: aucSet(sub, false),
		Profiled:  aucSet(prof, true),
	}
	byGene := map[string][]ValidationItem{}
	var genes []string
	for _, it := range prof {
		if byGene[it.Gene] == nil {
			genes = append(genes, it.Gene)
		}
		byGene[it.Gene] = append(byGene[it.Gene], it)
	}
	sort.Strings(genes)
	v.PerGene = []AUCSet{}
	for _, g := range genes {
		s := aucSet(byGene[g], true)
		s.Gene, s.Items = g, nil
		s.VsAll = c.vsAll(g, byGene[g])
		v.PerGene = append(v.PerGene, s)
	}
	v.Calibration = calibrate(prof)
	return v
}

func calibrate(items []ValidationItem) Calibration {
	cal := Calibration{Rule: "among the candidate thresholds on site_log_odds, the highest Youden index (sensitivity + specificity − 1) " +
		"on the profiled labelled changes scored with adequate confidence; ties go to the lower (stricter) threshold"}
	var pos, neg []float64
	for _, it := range items {
		if it.Confidence != ConfidenceAdequate {
			continue
		}
		if it.Positive {
			pos = append(pos, it.LogOdds)
		} else {
			neg = append(neg, it.LogOdds)
		}
	}
	cal.Positives, cal.Negatives = len(pos), len(neg)
	best := -2.0
	for _, t := range CalibrationCandidates {
		r := CalibrationRow{Threshold: t}
		for _, x := range pos {
			if x <= t {
				r.Sensitivity++
			}
		}
		for _, x := range neg {
			if x > t {
				r.Specificity++
			}
		}
		if len(pos) > 0 {
			r.Sensitivity /= float64(len(pos))
		}
		if len(neg) > 0 {
			r.Specificity /= float64(len(neg))
		}
		r.Youden = round(r.Sensitivity+r.Specificity-1, 4)
		r.Sensitivity, r.Specificity = round(r.Sensitivity, 4), round(r.Specificity, 4)
		cal.Candidates = append(cal.Candidates, r)
		if r.Youden > best || (r.Youden == best && t < cal.Selected) {
			best, cal.Selected = r.Youden, t
		}
	}
	return cal
}

func aucSet(items []ValidationItem, profiled bool) AUCSet {
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
	auc := func(score func(ValidationItem) float64) *float64 {
		if len(pos) == 0 || len(neg) == 0 {
			return nil
		}
		a := round(AUC(pos, neg, score), 4)
		return &a
	}
	out.AUCConservation = auc(func(it ValidationItem) float64 { return it.ResidueOnlyScore })
	out.AUCBLOSUM62 = auc(func(it ValidationItem) float64 { return -float64(it.BLOSUM62) })
	if profiled {
		out.AUCProfile = auc(func(it ValidationItem) float64 { return -it.LogOdds })
	}
	return out
}

// FormatAUC formats an optional AUC for tables ("—" when absent).
func FormatAUC(a *float64) string {
	if a == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f", *a)
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

// vsAll ranks the positives of items against every substitution of gene.
func (c *Classifier) vsAll(gene string, items []ValidationItem) *VsAllAUC {
	pr, ok := c.profiles[gene]
	if !ok {
		return nil
	}
	type scored struct{ lo, residue, b62 float64 }
	var pos, all []scored
	for _, it := range items {
		if it.Positive {
			pos = append(pos, scored{-it.LogOdds, it.ResidueOnlyScore, -float64(it.BLOSUM62)})
		}
	}
	if len(pos) == 0 {
		return nil
	}
	for i, col := range pr.cols {
		for _, alt := range []byte(StandardResidues) {
			if alt == col.ref {
				continue
			}
			cons, err := c.conservation(gene, i+1, col.ref, alt)
			if err != nil {
				continue
			}
			all = append(all, scored{-cons.LogOdds, cons.ResidueOnly.Score, -float64(cons.BLOSUM62)})
		}
	}
	return &VsAllAUC{
		Substitutions: len(all),
		AUCProfile:    round(AUC(pos, all, func(s scored) float64 { return s.lo }), 4),
		AUCResidue:    round(AUC(pos, all, func(s scored) float64 { return s.residue }), 4),
		AUCBLOSUM62:   round(AUC(pos, all, func(s scored) float64 { return s.b62 }), 4),
	}
}
