package classify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Constants of the position-aware conservation score (docs/classifier.md
// §2). They are conventions of the methods cited there, not fitted here,
// except DamagingLogOdds (calibrated, see Calibrate).
const (
	// PseudocountWeight is β of the PSI-BLAST pseudocount mixture
	// (Altschul et al. 1997): p = (α·f + β·g)/(α + β), α = Neff − 1,
	// g = the BLOSUM62 conditional distribution averaged over f.
	PseudocountWeight = 10.0
	// LowConfidenceNeff is the column Neff below which the BLOSUM62 prior
	// weighs more than the homologs (α < β ⇔ Neff < β + 1): the score is
	// then mostly the matrix's and is reported with low confidence.
	LowConfidenceNeff = PseudocountWeight + 1
	// ConservedColumn is the column conservation (1 − H/log2 20) from which
	// a column is called conserved: H ≤ log2 20 / 2 ≈ 2.16 bits, i.e. the
	// column behaves as if it drew from at most ~4.5 equally likely residues.
	ConservedColumn = 0.5
)

// DamagingLogOdds is the site log-odds ln(p_alt/p_ref) at or below which a
// substitution is called damaging. It is calibrated on the CPIC allele
// functions of the knowledge (Calibrate; TestCalibration checks that the
// constant is what the calibration selects).
const DamagingLogOdds = -2.5

// Confidence levels of a conservation score.
const (
	ConfidenceAdequate = "adequate"
	ConfidenceLow      = "low"
)

// column is one position of a protein profile, with the pseudocounts
// applied.
type column struct {
	ref     byte
	aligned bool
	neff    float64
	p       [20]float64 // in Model residue order
	entropy float64     // bits
	prior   float64     // β/(α+β)
}

// profile is a protein's profile, ready to score.
type profile struct {
	meta *ProteinProfile
	cols []column
}

// buildProfiles regularises every protein profile of ps with the model's
// BLOSUM62 conditional distributions.
func buildProfiles(md *Model, ps *ConservationProfiles) (map[string]*profile, error) {
	out := map[string]*profile{}
	if ps == nil {
		return out, nil
	}
	if ps.Alphabet != ProfileAlphabet || ps.FrequencyScale <= 0 {
		return nil, fmt.Errorf("profiles: alphabet %q, scale %d", ps.Alphabet, ps.FrequencyScale)
	}
	// Map profile alphabet positions to model residue indices.
	var toModel [20]int
	for i := 0; i < 20; i++ {
		a := md.idx[ps.Alphabet[i]]
		if a < 0 {
			return nil, fmt.Errorf("profiles: residue %c not in the matrix", ps.Alphabet[i])
		}
		toModel[i] = int(a)
	}
	var cond [20][20]float64 // cond[b][a] = P(a | b)
	for b := 0; b < 20; b++ {
		cond[b] = md.substitutionDistribution(b)
	}
	for i := range ps.Proteins {
		pp := &ps.Proteins[i]
		if len(pp.Columns) != pp.Length {
			return nil, fmt.Errorf("profiles: %s has %d columns for length %d", pp.Gene, len(pp.Columns), pp.Length)
		}
		pr := &profile{meta: pp, cols: make([]column, len(pp.Columns))}
		for j, c := range pp.Columns {
			if len(c.Freq) != 20 || len(c.Ref) != 1 || md.idx[c.Ref[0]] < 0 || c.Neff <= 0 {
				return nil, fmt.Errorf("profiles: %s position %d is malformed", pp.Gene, j+1)
			}
			var f [20]float64
			sum := 0.0
			for k, v := range c.Freq {
				if v < 0 {
					return nil, fmt.Errorf("profiles: %s position %d has a negative frequency", pp.Gene, j+1)
				}
				f[toModel[k]] = float64(v)
				sum += float64(v)
			}
			if sum == 0 {
				return nil, fmt.Errorf("profiles: %s position %d has no residue", pp.Gene, j+1)
			}
			for k := range f {
				f[k] /= sum
			}
			pr.cols[j] = regularise(cond, f, c.Neff)
			pr.cols[j].ref, pr.cols[j].aligned = c.Ref[0], c.Aligned
		}
		out[pp.Gene] = pr
	}
	return out, nil
}

// regularise mixes the observed frequencies f (weight α = Neff − 1) with
// the pseudocount distribution g_a = Σ_b f_b P(a|b) (weight β).
func regularise(cond [20][20]float64, f [20]float64, neff float64) column {
	var g [20]float64
	for b := 0; b < 20; b++ {
		if f[b] == 0 {
			continue
		}
		for a := 0; a < 20; a++ {
			g[a] += f[b] * cond[b][a]
		}
	}
	alpha := max(neff-1, 0)
	c := column{neff: neff, prior: PseudocountWeight / (alpha + PseudocountWeight)}
	for a := 0; a < 20; a++ {
		c.p[a] = (alpha*f[a] + PseudocountWeight*g[a]) / (alpha + PseudocountWeight)
		if c.p[a] > 0 {
			c.entropy -= c.p[a] * math.Log2(c.p[a])
		}
	}
	return c
}

// priorColumn is the column used where a protein has no profile: the
// reference residue alone, so that the score is the BLOSUM62 prior's.
func priorColumn(md *Model, ref byte) column {
	var cond [20][20]float64
	for b := 0; b < 20; b++ {
		cond[b] = md.substitutionDistribution(b)
	}
	var f [20]float64
	f[md.idx[ref]] = 1
	c := regularise(cond, f, 1)
	c.ref = ref
	return c
}

// Conservation is the esm method's result for one substitution at one
// position: the column's profile, with the BLOSUM62 prior where the column
// is thin.
type Conservation struct {
	Ref      string
	Alt      string
	Position int
	// BLOSUM62 is the matrix score of ref → alt.
	BLOSUM62 int
	// Profile is true when the protein has a profile; false means the
	// score is the BLOSUM62 prior alone.
	Profile bool
	// ColumnAligned is false when the position lies in an insert state of
	// the profile HMM (only the query's residue is there).
	ColumnAligned bool
	// ColumnNeff is the effective number of sequences with a residue at
	// the position.
	ColumnNeff float64
	// PriorWeight is the share of the BLOSUM62 prior in the column
	// distribution: β/(Neff − 1 + β).
	PriorWeight float64
	// PRef and PAlt are the column probabilities of the two residues.
	PRef float64
	PAlt float64
	// LogOdds is the site-independent log-odds ln(p_alt/p_ref) (nats):
	// below 0 the alternate residue is rarer than the reference at this
	// position among homologs.
	LogOdds float64
	// ColumnEntropyBits is the Shannon entropy of the column distribution;
	// ColumnConservation is 1 − H/log2 20 (1: one residue only).
	ColumnEntropyBits  float64
	ColumnConservation float64
	// Score is conservation_score = 1/(1 + exp(LogOdds)) = p_ref/(p_ref +
	// p_alt), in (0,1), higher = more likely damaging.
	Score float64
	// Damaging: LogOdds ≤ DamagingLogOdds.
	Damaging bool
	// Conserved: ColumnConservation ≥ ConservedColumn.
	Conserved bool
	// Confidence is "low" when the BLOSUM62 prior outweighs the homologs
	// at this position (Neff < LowConfidenceNeff, an unaligned position,
	// or no profile), else "adequate"; ConfidenceReason says why.
	Confidence       string
	ConfidenceReason string
	// ResidueOnly is the previous, residue-only score (BLOSUM62 and the
	// entropy of the reference residue's BLOSUM62 row), kept for
	// comparison; it does not take part in the tier.
	ResidueOnly ResidueConservation
}

// conservation scores ref → alt at pos (1-based) of gene.
func (c *Classifier) conservation(gene string, pos int, ref, alt byte) (Conservation, error) {
	old, err := c.model.ResidueConservation(ref, alt)
	if err != nil {
		return Conservation{}, err
	}
	out := Conservation{Ref: string(ref), Alt: string(alt), Position: pos, BLOSUM62: old.BLOSUM62, ResidueOnly: old}
	var col column
	pr, ok := c.profiles[gene]
	switch {
	case ok && pos >= 1 && pos <= len(pr.cols) && pr.cols[pos-1].ref == ref:
		col = pr.cols[pos-1]
		out.Profile = true
	case ok:
		return Conservation{}, fmt.Errorf("%s %c%d: the profile's residue differs", gene, ref, pos)
	default:
		col = priorColumn(c.model, ref)
	}
	a, b := c.model.idx[ref], c.model.idx[alt]
	out.ColumnAligned = col.aligned
	out.ColumnNeff = round(col.neff, 2)
	out.PriorWeight = round(col.prior, 4)
	out.PRef, out.PAlt = round(col.p[a], 6), round(col.p[b], 6)
	lo := math.Log(col.p[b] / col.p[a])
	out.LogOdds = round(lo, 4)
	out.ColumnEntropyBits = round(col.entropy, 4)
	out.ColumnConservation = round(1-col.entropy/math.Log2(20), 4)
	out.Score = round(1/(1+math.Exp(lo)), 4)
	out.Damaging = lo <= DamagingLogOdds
	out.Conserved = 1-col.entropy/math.Log2(20) >= ConservedColumn
	out.Confidence = ConfidenceAdequate
	switch {
	case !out.Profile:
		out.Confidence = ConfidenceLow
		out.ConfidenceReason = "no homolog profile for " + gene + ": the score is the BLOSUM62 prior alone"
	case !col.aligned:
		out.Confidence = ConfidenceLow
		out.ConfidenceReason = fmt.Sprintf("position %d lies in an insert state of the %s profile: no homolog is aligned to it, the score is the BLOSUM62 prior alone", pos, gene)
	case col.neff < LowConfidenceNeff:
		out.Confidence = ConfidenceLow
		out.ConfidenceReason = fmt.Sprintf("few homologs at position %d of %s (Neff %.2f < %g): the BLOSUM62 prior weighs %.0f%% of the column", pos, gene, col.neff, LowConfidenceNeff, col.prior*100)
	default:
		out.ConfidenceReason = fmt.Sprintf("Neff %.2f ≥ %g at position %d of %s: the homologs weigh %.0f%% of the column", col.neff, LowConfidenceNeff, pos, gene, (1-col.prior)*100)
	}
	return out, nil
}

// ProfileSummary describes one protein profile (for the substrate
// document and docs/classifier.md).
type ProfileSummary struct {
	Gene               string  `json:"gene"`
	UniProt            string  `json:"uniprot"`
	Length             int     `json:"length"`
	ReleaseEntry       string  `json:"release_entry"`
	Hits               int     `json:"hits"`
	Sequences          int     `json:"sequences"`
	EffectiveSequences float64 `json:"effective_sequences"`
	AlignedPositions   int     `json:"aligned_positions"`
	// LowConfidencePositions counts the positions scored with low
	// confidence (unaligned, or Neff < LowConfidenceNeff).
	LowConfidencePositions int     `json:"low_confidence_positions"`
	MedianColumnNeff       float64 `json:"median_column_neff"`
	// Substrate is true for the curated substrate proteins.
	Substrate bool `json:"substrate"`
}

// ProfileSummaries describes every profile, in gene order.
func (c *Classifier) ProfileSummaries() []ProfileSummary {
	out := []ProfileSummary{}
	if c.ck.Profiles == nil {
		return out
	}
	for i := range c.ck.Profiles.Proteins {
		pp := &c.ck.Profiles.Proteins[i]
		pr := c.profiles[pp.Gene]
		s := ProfileSummary{Gene: pp.Gene, UniProt: pp.UniProt, Length: pp.Length, ReleaseEntry: pp.ReleaseEntry,
			Hits: pp.Hits, Sequences: pp.Sequences, EffectiveSequences: pp.EffectiveSequences,
			AlignedPositions: pp.AlignedPositions, Substrate: c.proteins[pp.Gene] != nil}
		neffs := make([]float64, 0, len(pr.cols))
		for _, col := range pr.cols {
			if !col.aligned || col.neff < LowConfidenceNeff {
				s.LowConfidencePositions++
			}
			neffs = append(neffs, col.neff)
		}
		s.MedianColumnNeff = round(median(neffs), 2)
		out = append(out, s)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// profiledProteins returns the proteins that have a profile but are not
// substrate proteins, with the profile's residues as their sequence. They
// can be classified (from their profile, population and graph evidence)
// although no curated cohort variant is on them.
func profiledProteins(ck *Knowledge, substrate map[string]*ProteinSequence) map[string]*ProteinSequence {
	out := map[string]*ProteinSequence{}
	if ck.Profiles == nil {
		return out
	}
	for i := range ck.Profiles.Proteins {
		pp := &ck.Profiles.Proteins[i]
		if substrate[pp.Gene] != nil {
			continue
		}
		var seq strings.Builder
		for _, col := range pp.Columns {
			seq.WriteString(col.Ref)
		}
		out[pp.Gene] = &ProteinSequence{
			Gene: pp.Gene, UniProt: pp.UniProt, Length: pp.Length, MD5: pp.MD5, Sequence: seq.String(),
			Provenance: "the query sequence of the " + pp.Gene + " profile (classifier_profiles.json): " + pp.ReleaseEntry,
			SourceIDs:  ck.Profiles.Provenance.SourceIDs,
		}
	}
	return out
}

// profiledOnlyText lists the profiled proteins that are not substrate
// proteins, for error messages.
func (c *Classifier) profiledOnlyText() string {
	if len(c.profiled) == 0 {
		return ""
	}
	genes := make([]string, 0, len(c.profiled))
	for g := range c.profiled {
		genes = append(genes, g)
	}
	sort.Strings(genes)
	return "; also classified from their homolog profile alone (not curated substrate): " + strings.Join(genes, ", ")
}

// ProfiledGenes returns the genes that can be classified although they are
// not substrate proteins, sorted.
func (c *Classifier) ProfiledGenes() []string {
	genes := make([]string, 0, len(c.profiled))
	for g := range c.profiled {
		genes = append(genes, g)
	}
	sort.Strings(genes)
	return genes
}

// ProfileDigest is the SHA-256 (hex) of the regularised profiles the
// classifier scores with: for each protein in gene order and each position,
// the gene, the position, the column Neff and the 20 column probabilities
// (model residue order), printed with 6 decimals. A test pins it, so that a
// change of the profiles file or of the pseudocount arithmetic is seen.
func (c *Classifier) ProfileDigest() string {
	genes := make([]string, 0, len(c.profiles))
	for g := range c.profiles {
		genes = append(genes, g)
	}
	sort.Strings(genes)
	h := sha256.New()
	for _, g := range genes {
		for i, col := range c.profiles[g].cols {
			fmt.Fprintf(h, "%s %d %.6f", g, i+1, col.neff)
			for _, p := range col.p {
				fmt.Fprintf(h, " %.6f", p)
			}
			h.Write([]byte{'\n'})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ProfilesDocument describes the conservation profiles for the curated
// substrate document (GET /classifier_v2/curated_substrate).
type ProfilesDocument struct {
	Description string            `json:"description"`
	Formula     string            `json:"formula"`
	Constants   ESMConstants      `json:"constants"`
	Provenance  ProfileProvenance `json:"provenance"`
	Proteins    []ProfileSummary  `json:"proteins"`
	// ProfiledOnlyGenes can be classified although they are not substrate
	// proteins.
	ProfiledOnlyGenes []string `json:"profiled_only_genes"`
	// Digest is ProfileDigest.
	Digest string `json:"digest"`
}

// ProfilesDocument returns the description of the profiles.
func (c *Classifier) ProfilesDocument() ProfilesDocument {
	d := ProfilesDocument{
		Formula:           Formula,
		Constants:         c.esmConstants(),
		Proteins:          c.ProfileSummaries(),
		ProfiledOnlyGenes: c.ProfiledGenes(),
		Digest:            c.ProfileDigest(),
	}
	if c.ck.Profiles != nil {
		d.Description, d.Provenance = c.ck.Profiles.Description, c.ck.Profiles.Provenance
	}
	return d
}

func (c *Classifier) esmConstants() ESMConstants {
	mc := c.model.Constants()
	return ESMConstants{
		PseudocountWeight: PseudocountWeight, LowConfidenceNeff: LowConfidenceNeff,
		ConservedColumnAtLeast: ConservedColumn, DamagingLogOddsAtMost: DamagingLogOdds,
		ImpliedLambda: mc.ImpliedLambda, NominalLambda: mc.NominalLambda,
	}
}

// ProfiledProtein returns a protein that is classified from its profile
// alone (not a substrate protein), with the profile's residues as its
// sequence.
func (c *Classifier) ProfiledProtein(gene string) (ProteinSequence, bool) {
	p, ok := c.profiled[gene]
	if !ok {
		return ProteinSequence{}, false
	}
	return *p, true
}
