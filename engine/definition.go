package engine

// GeneDefinition is PharmCAT's allele definition of one gene in VCF space
// (GRCh38), with the gene's matcher exemptions. It is generated from the
// PharmCAT definition files (definition/<GENE>_translation.json and
// exemptions.json).
type GeneDefinition struct {
	Gene        string
	Chromosome  string // "chr10"
	RefSeq      string // "NC_000010.11"
	DataVersion string
	// Positions are the defining positions in ascending order.
	Positions []DefinedPosition
	// IgnoredPositions are defined upstream but never used for matching
	// (exemptions); observations there are ignored.
	IgnoredPositions []DefinedPosition
	// Alleles are the named alleles; the first is the reference allele
	// (the one matching GRCh38 at every position).
	Alleles []DefinedAllele
	// RequiredPositions must be called for the gene to be called (NAT2).
	RequiredPositions []int
	// ExtraPositions are reported only, never matched (CYP2C9 rs12777823).
	ExtraPositions []DefinedPosition
	// IgnoredAlleles are defined upstream but never called (exemptions).
	IgnoredAlleles []string
	// UnphasedPriorities pick one diplotype among equally scored unphased
	// candidates (NAT2).
	UnphasedPriorities []PriorityRule
	// Tier1Alleles and Tier1Positions are the AMP tier-1 alleles (the ones
	// a clinical assay must test) and their defining positions, from
	// PharmCAT's exemptions.json (amp1Alleles, amp1Positions). A gene
	// whose tier-1 positions all have evidence is called with the alleles
	// at uncalled positions named as untested; a gene without the lists
	// reads as review when it is reference-like with positions missing.
	Tier1Alleles   []string
	Tier1Positions []int
	// UndocumentedAsReference is true for toxicity genes, where a base no
	// definition uses is read as reference (with a warning).
	UndocumentedAsReference bool
	// VariantList is true for genes reported as a list of variants when
	// unphased data has several heterozygous sites (DPYD, RYR1, CACNA1S).
	VariantList bool
	SourceIDs   []string
}

// PriorityRule says: when every diplotype of List is among the top
// candidates, report Pick.
type PriorityRule struct {
	List []string
	Pick string
}

// DefinedPosition is one defining position of a gene.
type DefinedPosition struct {
	Pos  int
	RsID string
	Ref  string
	// Alts are the VCF alternate alleles the definitions use.
	Alts []string
	// HGVS is the genomic name on the RefSeq chromosome ("g.94761900C>T").
	HGVS string
	// CPICToVCF maps each CPIC allele notation ("TA(8)", "delA") to its VCF
	// allele ("CATAT").
	CPICToVCF map[string]string
	// Ignored positions are never used for matching (exemptions).
	Ignored bool
}

// DefinedAllele is one named allele: its VCF allele at each position it
// defines. A position it does not list carries the reference allele's
// base (PharmCAT's blank cell).
type DefinedAllele struct {
	Name       string
	Structural bool
	Cells      []AlleleCell
}

// AlleleCell is the allele of a named allele at one position: a VCF
// allele, or an IUPAC code for SNVs meaning "either base".
type AlleleCell struct {
	Pos    int
	Allele string
}
