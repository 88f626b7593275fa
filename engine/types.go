package engine

// Zygosity of a reported variant.
type Zygosity string

// Zygosity values accepted on input.
const (
	Het  Zygosity = "het"
	Hom  Zygosity = "hom"
	Hemi Zygosity = "hemi"
)

// Patient holds the patient facts that change which guideline row applies.
type Patient struct {
	Sex          string   `json:"sex,omitempty"` // male | female
	AgeYears     *float64 `json:"age_years,omitempty"`
	MonthsOnDrug *float64 `json:"months_on_drug,omitempty"`
}

// Request is one drug-safety question: a drug, what is known of the
// patient's genotype, and the clinical context.
type Request struct {
	Drug        string              `json:"drug"`
	Variants    []string            `json:"variants,omitempty"`
	Zygosity    map[string]Zygosity `json:"zygosity,omitempty"`
	Diplotypes  map[string]string   `json:"diplotypes,omitempty"`
	HLA         map[string]string   `json:"hla,omitempty"`
	GenesTested []string            `json:"genes_tested,omitempty"`
	State       string              `json:"state,omitempty"`
	Ethnicity   string              `json:"ethnicity,omitempty"`
	Indication  string              `json:"indication,omitempty"`
	Patient     *Patient            `json:"patient,omitempty"`
}

// Severity of an alert.
type Severity int

// Severity levels (DESIGN.md §3).
const (
	SeverityNone     Severity = 0
	SeverityInfo     Severity = 1
	SeverityModerate Severity = 2
	SeverityHigh     Severity = 3
)

// String returns the wire name of s.
func (s Severity) String() string {
	switch s {
	case SeverityHigh:
		return "HIGH"
	case SeverityModerate:
		return "MODERATE"
	case SeverityInfo:
		return "INFO"
	}
	return "NONE"
}

// Alert categories.
const (
	CategoryConfirmed      = "genotype-confirmed"
	CategoryUnknown        = "genotype-unknown"
	CategoryPopulationRisk = "population-risk"
)

// GenotypeCall is the engine's interpretation of one gene.
type GenotypeCall struct {
	Gene          string `json:"gene"`
	Diplotype     string `json:"diplotype,omitempty"`
	Phenotype     string `json:"phenotype,omitempty"`
	ActivityScore string `json:"activity_score,omitempty"`
}

// Guideline names a guideline and where to read it.
type Guideline struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Alert is one finding (spec §2.5 plus extensions).
type Alert struct {
	Severity        string         `json:"severity"`
	SeverityScore   int            `json:"severity_score"`
	Variant         string         `json:"variant,omitempty"`
	Gene            string         `json:"gene"`
	StarAllele      string         `json:"star_allele,omitempty"`
	AFIndia         *float64       `json:"af_india,omitempty"`
	AFGlobal        *float64       `json:"af_global,omitempty"`
	Category        string         `json:"category"`
	Message         string         `json:"message"`
	Action          string         `json:"action"`
	Alternatives    []string       `json:"alternatives"`
	TestRecommended bool           `json:"test_recommended"`
	Genotype        []GenotypeCall `json:"genotype,omitempty"`
	Recommendation  string         `json:"recommendation,omitempty"`
	Implications    []string       `json:"implications,omitempty"`
	Classification  string         `json:"classification,omitempty"`
	EvidenceLevel   string         `json:"evidence_level,omitempty"`
	Population      string         `json:"population,omitempty"`
	Guideline       *Guideline     `json:"guideline,omitempty"`
	GuidanceSource  string         `json:"guidance_source,omitempty"`
	Assumptions     []string       `json:"assumptions"`

	severity  Severity
	sourceIDs []string // knowledge rows behind a population-risk alert
}

// Alternative is a safer alternative drug.
type Alternative struct {
	Name      string `json:"name"`
	Rationale string `json:"rationale"`
}

// EndemicRisk is a state risk relevant to the drug.
type EndemicRisk struct {
	Risk    string   `json:"risk"`
	Disease string   `json:"disease"`
	Drugs   []string `json:"drugs,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// PopulationFrequency compares the Indian and global frequency of an allele
// that matters for the drug.
type PopulationFrequency struct {
	Variant      string   `json:"variant"`
	Gene         string   `json:"gene"`
	Allele       string   `json:"allele"`
	AFIndia      *float64 `json:"af_india,omitempty"`
	AFIndiaBasis string   `json:"af_india_basis,omitempty"`
	AFGlobal     *float64 `json:"af_global,omitempty"`
}

// CommunityNote is a community-specific fact.
type CommunityNote struct {
	Community string `json:"community"`
	Trait     string `json:"trait"`
	Finding   string `json:"finding"`
}

// HerbNote is a herb–drug interaction relevant to the drug.
type HerbNote struct {
	Herb      string `json:"herb"`
	Botanical string `json:"botanical"`
	Mechanism string `json:"mechanism,omitempty"`
	Effect    string `json:"effect,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
}

// IndianContext is the India-specific part of a result.
type IndianContext struct {
	State                 string                `json:"state,omitempty"`
	StateRecognised       bool                  `json:"state_recognised"`
	StateNormalised       string                `json:"state_normalised,omitempty"`
	EndemicRisks          []EndemicRisk         `json:"endemic_risks"`
	PopulationFrequencies []PopulationFrequency `json:"population_frequencies"`
	Ethnicity             string                `json:"ethnicity,omitempty"`
	EthnicityRecognised   bool                  `json:"ethnicity_recognised"`
	CommunityNotes        []CommunityNote       `json:"community_notes"`
	TraditionalMedicine   []HerbNote            `json:"traditional_medicine"`
}

// DataCompleteness is exactly the spec's six fields (§2.3).
type DataCompleteness struct {
	GenotypeProvided   bool `json:"genotype_provided"`
	StateProvided      bool `json:"state_provided"`
	EthnicityProvided  bool `json:"ethnicity_provided"`
	IndicationProvided bool `json:"indication_provided"`
	FieldsPopulated    int  `json:"fields_populated"`
	FieldsTotal        int  `json:"fields_total"`
}

// Citation supports one response field (spec §2.4).
type Citation struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
	URL           string `json:"url"`
}

// GroundingContract is the constant text every response states.
const GroundingContract = "no entity outside graph result rows"

// Result is the clinical answer to one Request: the spec §2.2 fields
// without the transport envelope (request id, audit id, timing).
type Result struct {
	Confidence           string           `json:"confidence"`
	DataCompleteness     DataCompleteness `json:"data_completeness"`
	SourceCitations      []Citation       `json:"source_citations"`
	Drug                 string           `json:"drug"`
	DrugNormalised       string           `json:"drug_normalised"`
	DrugRecognised       bool             `json:"drug_recognised"`
	DidYouMean           []string         `json:"did_you_mean,omitempty"`
	Sensitivity          string           `json:"sensitivity"`
	OverallSeverity      string           `json:"overall_severity"`
	Alerts               []Alert          `json:"alerts"`
	SaferAlternatives    []Alternative    `json:"safer_alternatives"`
	IndianContext        IndianContext    `json:"indian_context"`
	Genotype             []GenotypeCall   `json:"genotype"`
	UnrecognisedVariants []string         `json:"unrecognised_variants"`
	Warnings             []string         `json:"warnings"`
	GroundingContract    string           `json:"grounding_contract"`
	KnowledgeVersion     string           `json:"knowledge_version"`
}
