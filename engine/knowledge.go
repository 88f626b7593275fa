package engine

// This file defines the knowledge the engine evaluates against: domain
// types only. The knowledge package decodes its embedded, generated files
// (knowledge/data) into its own row types, validates them and builds these
// values from them; the engine only reads them and knows no file format.

// Knowledge is the read-only, curated knowledge base. Build must be called
// once after loading and before the first evaluation.
type Knowledge struct {
	Version         Version
	Sources         []Source
	Drugs           []Drug
	Genes           []Gene
	Recommendations []Recommendation
	RsIDs           []RsID
	Variants        []TrackedVariant
	HLAAlleles      []HLAAllele
	States          []State
	Communities     []Community
	Herbs           []HerbInteraction
	Warfarin        *FlowChart
	// Definitions are PharmCAT's allele definitions in VCF space, used by
	// the allele matcher (definition.go; engine/calling).
	Definitions []GeneDefinition
	DrugNames   []DrugName       // names.go
	Indications []IndicationCode // names.go

	idx *index
}

// Version identifies the knowledge content and the upstream data snapshots.
type Version struct {
	// Digest is the SHA-256 of the embedded data files (hex).
	Digest string
	// Label is the knowledge_version string reported to clients.
	Label string
	// DataVersions names each upstream snapshot and its date or release.
	DataVersions map[string]string
}

// Source is one cited source of knowledge rows.
type Source struct {
	ID        string
	Title     string
	Publisher string
	Year      string
	URL       string
	PMID      string
	Licence   string
}

// Drug is a drug covered by the safety layer.
type Drug struct {
	Name           string
	RxNormCUIs     []string
	ATCCodes       []string
	ATCClass       string
	GuidelineGroup string
	Synonyms       []string
	BestCPICLevel  string
	// Guidance is "CPIC" when CPIC recommendations exist, "DPWG" when only
	// DPWG guidance exists, "none" when neither has structured rows.
	Guidance string
	// Sensitivity is the tier: "high", "moderate" or "none" (DESIGN.md §3).
	Sensitivity string
	Pairs       []DrugPair
	SourceIDs   []string
}

// DrugPair is one CPIC gene–drug pair of a drug.
type DrugPair struct {
	Gene          string
	CPICLevel     string
	LevelStatus   string
	EvidenceLevel string // ClinPGx level: 1A, 1B, 2A, 2B, 3, 4
	GuidelineName string
	GuidelineURL  string
	PMIDs         []string
	SourceIDs     []string
}

// Phenotype methods of a gene.
const (
	MethodActivityScore = "activity_score"
	MethodFunctionPair  = "function_pair"
	MethodAlleleStatus  = "allele_status"
)

// Gene is a pharmacogene with its alleles and CPIC phenotype rules.
type Gene struct {
	Symbol string
	// Method is MethodActivityScore, MethodFunctionPair or MethodAlleleStatus.
	Method string
	// DefaultAllele is the allele assumed where no variant is found (*1,
	// "Reference", "B (reference)"); ReferenceAllele is the allele that
	// matches GRCh38 (CYP2C19: *38), which may differ.
	DefaultAllele   string
	ReferenceAllele string
	Chromosome      string
	Alleles         []Allele
	Rules           []PhenotypeRule
	DataVersion     string
	SourceIDs       []string
}

// Allele is a named allele of a gene.
type Allele struct {
	Name     string
	Function string
	// Activity is the CPIC activity value as written ("1.0", "0.5", "n/a",
	// "≥3.0"); empty for genes without activity values.
	Activity   string
	Structural bool
	// Key lists the variants that distinguish this allele from the gene's
	// default allele, as rsid:base (bases in VCF orientation).
	Key []AlleleVariant
	// Defining lists every defining rsID of the allele (including positions
	// shared with the default allele).
	Defining  []string
	SourceIDs []string
}

// AlleleVariant is one position of an allele definition.
type AlleleVariant struct {
	RsID string
	Base string
	// Ambiguous is true when the CPIC cell is an IUPAC code ("either base").
	Ambiguous bool
}

// PhenotypeRule maps an activity score, a pair of functions or a single
// hemizygous function to a CPIC phenotype.
type PhenotypeRule struct {
	Type      string // activity_score | function_pair | hemizygous_function
	Key       string
	Phenotype string
}

// RsID is one (rsID, alternate base) of the CPIC allele definitions.
type RsID struct {
	RsID    string
	Gene    string
	Ref     string
	Alt     string
	Alleles []string
	// Sole lists the alleles defined by this variant alone.
	Sole      []string
	SourceIDs []string
}

// Recommendation is one guideline recommendation for a drug, keyed by the
// lookup values of one or more genes and a population.
type Recommendation struct {
	ID     string
	Source string // CPIC or DPWG
	Drug   string
	Genes  []string
	// Lookup maps gene → lookup value (phenotype, activity score such as
	// "1.0", allele status such as "*15:02 positive", or "No Result").
	Lookup              map[string]string
	LookupType          map[string]string
	Phenotypes          map[string]string
	Population          string
	Implications        map[string]string
	Text                string
	OtherConsiderations string
	Classification      string
	// Actionability is "yes", "none" or "conditional" (derived in the data
	// pack; see knowledge/data/LICENCE.md).
	Actionability string
	Basis         []string
	// AlternateDrug and Dosing are the ClinPGx flags.
	AlternateDrug bool
	Dosing        bool
	Alternatives  []string
	GuidelineName string
	GuidelineURL  string
	PMIDs         []string
	// Partial marks rows that hold only part of a newer guideline.
	Partial   bool
	SourceIDs []string
}

// TrackedVariant is one variant of the curated panel with Indian frequencies.
type TrackedVariant struct {
	RsID        string
	Gene        string
	AlleleLabel string
	StarAlleles []string
	Function    string
	Ref         string
	Alt         string
	// AFIndia is the best Indian or South-Asian figure (nil when unknown);
	// AFIndiaBasis says what it measures and which population.
	AFIndia      *float64
	AFIndiaBasis string
	AFIndiaKind  string // allele | carrier
	// AFIndiaSourceIDs and AFGlobalSourceIDs name the sources of exactly
	// those figures (a subset of SourceIDs).
	AFIndiaSourceIDs  []string
	AFGlobalSourceIDs []string
	AFSouthAsian      *float64
	AFGlobal          *float64
	AFGlobalBasis     string
	ClinVar           string
	Notes             string
	SourceIDs         []string
}

// HLAAllele is an HLA allele the knowledge has frequencies or rules for.
type HLAAllele struct {
	Gene                string // HLA-A, HLA-B
	Allele              string // *15:02
	AFCentralSouthAsian *float64
	SourceIDs           []string
}

// State is an Indian state or union territory with its drug-safety context.
type State struct {
	Name    string
	Type    string // state | union territory
	Aliases []string
	Risks   []StateRisk
}

// StateRisk is one endemic risk of a state that can change advice.
type StateRisk struct {
	Risk string
	// Disease is the condition named before the colon of Risk (malaria, …).
	Disease string
	// Drugs are the drug names the risk affects (lower case).
	Drugs        []string
	AffectedText string
	Note         string
	SourceIDs    []string
}

// Community is a community-specific pharmacogenomic fact.
type Community struct {
	Name      string
	Aliases   []string
	Region    string
	Trait     string
	Genes     []string
	Finding   string
	Drugs     []string
	DrugsText string
	Metric    string
	N         string
	Notes     string
	SourceIDs []string
}

// HerbInteraction is a traditional-medicine herb–drug interaction.
type HerbInteraction struct {
	Herb             string
	Botanical        string
	TraditionalNames string
	DrugsText        string
	Drugs            []string
	Mechanism        string
	Effect           string
	Severity         string
	Evidence         string
	Notes            string
	SourceIDs        []string
}

// FlowChart is special guidance that is not a lookup table (warfarin).
type FlowChart struct {
	Drug      string
	Genes     []string
	Note      string
	Nodes     []FlowChartNode
	URL       string
	SourceIDs []string
}

// FlowChartNode is one box of a flow chart.
type FlowChartNode struct {
	ID       string
	Text     string
	Strength string
}
