package classify

// Citation supports one part of a classification: Target names the part
// (the REST wire mapping turns it into the JSON path of the field).
type Citation struct {
	Target        CitationTarget
	Source        string
	EvidenceLevel string
	URL           string
}

// CitationTarget names the part of a Result a citation supports: its
// kind and, for the kinds that point into a list, the position in it.
type CitationTarget struct {
	Kind  CitationKind
	Index int
}

// CitationKind is what a citation supports.
type CitationKind int

// The parts of a Result a citation can support.
const (
	// CitesMatrix: the BLOSUM62 score of the conservation section.
	CitesMatrix CitationKind = iota + 1
	// CitesResidueEntropy: the residue-only reference entropy.
	CitesResidueEntropy
	// CitesSiteLogOdds: the homolog profile's site log-odds.
	CitesSiteLogOdds
	// CitesReferenceVerified: the reference residue's check against the
	// substrate sequence.
	CitesReferenceVerified
	// CitesKnownVariant: Variant.KnownVariants[Index].
	CitesKnownVariant
	// CitesFrequencyIndia: Population.Records[Index].AFIndia.
	CitesFrequencyIndia
	// CitesFrequencyGlobal: Population.Records[Index].AFGlobal.
	CitesFrequencyGlobal
	// CitesClinVar: Population.Records[Index].ClinVarSignificance.
	CitesClinVar
	// CitesGraphRow: Graph.Rows[Index].
	CitesGraphRow
)
