package classify

// This file defines the knowledge of the variant-classification pipeline:
// the substitution matrix, the reference protein
// sequences, the rsID → protein-change table, the curated substrate (cohort,
// demonstration cases, knowledge graph) and the publication citations. The
// knowledge package loads them from the classifier_*.json files under
// knowledge/data, generated from data/classifier of the data pack; the
// JSON tags are that file format. New takes it beside the engine's
// Knowledge, which it cross-references (the engine does not hold it).

// Knowledge is the substrate of the classification pipeline.
type Knowledge struct {
	// Matrix is the BLOSUM62 substitution matrix (classifier_blosum62.json).
	Matrix SubstitutionMatrix `json:"matrix"`
	// Proteins are the substrate protein sequences, in gene order
	// (classifier_proteins.json).
	Proteins []ProteinSequence `json:"proteins"`
	// Changes are the protein changes of the PGx variants, one row per
	// (rsID, alternate allele) (classifier_variants.json).
	Changes []ProteinChange `json:"changes"`
	// Substrate is the curated substrate (classifier_substrate.json).
	Substrate Substrate `json:"substrate"`
	// Citations are the publication citations (classifier_citations.json).
	Citations []PublicationCitation `json:"citations"`
	// Profiles are the per-position conservation profiles
	// (classifier_profiles.json, profiles.go).
	Profiles *ConservationProfiles `json:"profiles,omitempty"`
}

// SubstitutionMatrix is an amino-acid substitution matrix as distributed in
// the NCBI text format.
type SubstitutionMatrix struct {
	// Name is the matrix name ("BLOSUM62").
	Name string `json:"name"`
	// Alphabet lists the row and column symbols in order, one character
	// each ("ARNDCQEGHILKMFPSTWYVBZX*").
	Alphabet string `json:"alphabet"`
	// Scores[i][j] is the score of Alphabet[i] → Alphabet[j].
	Scores [][]int `json:"scores"`
	// Header holds the comment lines of the matrix file as distributed
	// (without the leading "#"), which state its units and statistics.
	Header    []string `json:"header"`
	SourceIDs []string `json:"source_ids"`
}

// ProteinSequence is a human reference protein sequence with its
// provenance.
type ProteinSequence struct {
	Gene    string `json:"gene"`
	UniProt string `json:"uniprot"`
	Entry   string `json:"entry"`
	Length  int    `json:"length"`
	// MD5 is the upper-case hex MD5 of Sequence.
	MD5      string `json:"md5"`
	Sequence string `json:"sequence"`
	// Provenance says where the sequence was copied from and how it was
	// verified, as the data pack states it.
	Provenance string   `json:"provenance"`
	SourceIDs  []string `json:"source_ids"`
}

// Consequence classes of a protein change that the classifier
// distinguishes; the data pack's other classes (splice, promoter, …) are
// kept verbatim.
const (
	ConsequenceMissense = "missense"
)

// ProteinChange is the protein-level consequence of one PGx variant
// allele.
type ProteinChange struct {
	RsID        string `json:"rsid"`
	Gene        string `json:"gene"`
	AlleleLabel string `json:"allele_label"`
	// GRCh38 is "chrom-pos-ref-alt"; Ref and Alt are its alleles.
	GRCh38 string `json:"grch38"`
	Ref    string `json:"ref"`
	Alt    string `json:"alt"`
	HGVSc  string `json:"hgvs_c,omitempty"`
	// Change is the protein change as the source writes it ("R139C",
	// "Splice Defect"); HGVSp its three-letter HGVS form where one exists.
	Change string `json:"change,omitempty"`
	HGVSp  string `json:"hgvs_p,omitempty"`
	// Consequence is the consequence class ("missense", "stop-gain
	// (nonsense)", "splice", …) as the data pack states it.
	Consequence  string   `json:"consequence"`
	UniProt      string   `json:"uniprot,omitempty"`
	ResidueCheck string   `json:"residue_check,omitempty"`
	SourceIDs    []string `json:"source_ids"`
}

// Substrate is the curated substrate: which proteins, which
// variants, which demonstration cases and which knowledge-graph rows, each
// chosen by the rule stated with it.
type Substrate struct {
	ProteinRule      string             `json:"protein_rule"`
	ProteinSelection []ProteinSelection `json:"protein_selection"`
	CohortRule       string             `json:"cohort_rule"`
	Cohort           []CohortVariant    `json:"cohort"`
	DemoRule         string             `json:"demo_rule"`
	DemoCases        []DemoCase         `json:"demo_cases"`
	GraphRule        string             `json:"graph_rule"`
	Graph            KnowledgeGraph     `json:"graph"`
	CitationRule     string             `json:"citation_rule"`
}

// ProteinSelection records how the protein rule scored one candidate
// sequence of the data pack.
type ProteinSelection struct {
	Gene    string `json:"gene"`
	UniProt string `json:"uniprot"`
	// MissenseChanges counts the missense rows of the protein-change table
	// on this protein.
	MissenseChanges int `json:"missense_changes"`
	// ClinicalMissense lists the missense changes that alone define a CPIC
	// allele of No or Decreased function.
	ClinicalMissense []string `json:"clinical_missense"`
	Selected         bool     `json:"selected"`
}

// CohortVariant is one variant of the curated cohort.
type CohortVariant struct {
	// ID is "<gene>-<change>" in lower case ("nudt15-r139c").
	ID       string `json:"id"`
	RsID     string `json:"rsid"`
	Ref      string `json:"ref"`
	Alt      string `json:"alt"`
	Gene     string `json:"gene"`
	Change   string `json:"change"`
	HGVSp    string `json:"hgvs_p"`
	Allele   string `json:"allele"`
	Function string `json:"function"`
	// AFIndia is the knowledge's Indian allele frequency of this allele,
	// absent when the knowledge has none for this alternate allele.
	AFIndia   *float64 `json:"af_india,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// DemoCase is a demonstration case: a cohort variant to classify.
type DemoCase struct {
	ID        string `json:"id"`
	Gene      string `json:"gene"`
	HGVSp     string `json:"hgvs_p"`
	RsID      string `json:"rsid"`
	Allele    string `json:"allele"`
	Function  string `json:"function"`
	Rationale string `json:"rationale"`
}

// Node types of the knowledge graph.
const (
	NodeVariant        = "variant"
	NodeAlleleFunction = "allele_function"
	NodeGene           = "gene"
	NodeGeneDrugPair   = "gene_drug_pair"
	NodeHerb           = "herb"
)

// Layers (kinds of source) of the knowledge-graph edges.
const (
	LayerPharmacogenomic = "pharmacogenomic"
	LayerGuideline       = "guideline"
	LayerNaturalProduct  = "natural-product"
)

// KnowledgeGraph is a set of typed nodes and sourced edges.
type KnowledgeGraph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is one entity of the knowledge graph.
type GraphNode struct {
	// ID is "<type>:<key>" ("gene:TPMT", "variant:rs1800460:C>T").
	ID    string `json:"id"`
	Type  string `json:"type"`
	Label string `json:"label"`
}

// GraphEdge is one sourced row of the knowledge graph.
type GraphEdge struct {
	From     string `json:"from"`
	Relation string `json:"relation"`
	To       string `json:"to"`
	Layer    string `json:"layer"`
	// Attributes are the facts the row states (allele, CPIC level, …).
	Attributes map[string]string `json:"attributes,omitempty"`
	SourceIDs  []string          `json:"source_ids"`
}

// PublicationCitation is one publication the classifier cites.
type PublicationCitation struct {
	ID       string `json:"id"`
	Citation string `json:"citation"`
	PMID     string `json:"pmid,omitempty"`
	DOI      string `json:"doi,omitempty"`
	URL      string `json:"url"`
	// Role says what the publication supports (the conservation method,
	// a guideline of the graph, a population frequency of the cohort).
	Role      string   `json:"role"`
	SourceIDs []string `json:"source_ids"`
}
