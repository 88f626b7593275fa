package engine

import "strconv"

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
	// Calls are position-level genotype calls (engine/calling).
	Calls      []PositionCall `json:"calls,omitempty"`
	State      string         `json:"state,omitempty"`
	Ethnicity  string         `json:"ethnicity,omitempty"`
	Indication string         `json:"indication,omitempty"`
	// IndicationCodes are coded indications, conditions and procedures
	// (ICD-10, ICD-10-CM, ICD-10-PCS, SNOMED CT); they choose the guideline
	// population, the free-text indication deciding when no code does;
	// codes and text that disagree are both evaluated (engine/population).
	IndicationCodes []Coding `json:"indication_codes,omitempty"`
	Patient         *Patient `json:"patient,omitempty"`
	// OutsideCalls are the outputs of dedicated callers (a PharmCAT
	// outside-call TSV, Cyrius, Aldy, StellarPGx, OptiType, HLA*LA,
	// arcasHLA), each as the tool wrote it (engine/outside); a call of a
	// gene is read as that gene's diplotype (engine/calling/outside.go).
	OutsideCalls []string `json:"outside_calls,omitempty"`
	// DiplotypeCaveats are what the lab's result says beside a diplotype
	// of Diplotypes (a Genomics Reporting Genotype read back, fhir): why
	// the gene needs review, and the definition positions its call left
	// uncalled. The keys are genes of Diplotypes.
	DiplotypeCaveats map[string]DiplotypeCaveat `json:"diplotype_caveats,omitempty"`
}

// DiplotypeCaveat is what a result says beside a gene's diplotype. A
// review keeps the diplotype only when it is actionable (none of its
// readings could read as normal), with a review alert naming the reasons;
// positions not called make the reading partial (the alleles defined
// there are untested), as a call from a VCF with those positions missing.
type DiplotypeCaveat struct {
	// Review names why the result needs review.
	Review []string `json:"review,omitempty"`
	// PositionsNotCalled are definition positions without a called
	// genotype ("chr10:94842866 rs3758581").
	PositionsNotCalled []string `json:"positions_not_called,omitempty"`
	// UntestedAlleles are the alleles defined at those positions.
	UntestedAlleles []string `json:"untested_alleles,omitempty"`
}

// Severity of an alert, ordered: a higher value is more severe. Its
// number is the spec's severity_score; its wire name belongs to the
// surfaces (pgxapi/wire.go, cdshooks/cards.go).
type Severity int

// Severity levels (DESIGN.md §3).
const (
	SeverityNone     Severity = 0
	SeverityInfo     Severity = 1
	SeverityModerate Severity = 2
	SeverityHigh     Severity = 3
)

// String returns the constant's Go name ("SeverityHigh"), for logs and
// test messages; the wire name is the surfaces'.
func (s Severity) String() string {
	switch s {
	case SeverityNone:
		return "SeverityNone"
	case SeverityInfo:
		return "SeverityInfo"
	case SeverityModerate:
		return "SeverityModerate"
	case SeverityHigh:
		return "SeverityHigh"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// Category of an alert: what the finding rests on. Its wire name belongs
// to the surfaces (pgxapi/wire.go, cdshooks/cards.go).
type Category int

// Alert categories.
const (
	// CategoryConfirmed: the patient's own genotype matched a rule.
	CategoryConfirmed Category = iota + 1
	// CategoryUnknown: no genotype for a gene that matters (a pre-test
	// alert).
	CategoryUnknown
	// CategoryPopulationRisk: an India-specific risk of the drug from the
	// state or community context.
	CategoryPopulationRisk
	// CategoryNotInterpreted marks an input the engine could not read (a
	// drug name it does not recognise): nothing was checked for it, which
	// is not a statement that it is safe.
	CategoryNotInterpreted
)

// String returns the constant's Go name ("CategoryConfirmed"), for logs
// and test messages; the wire name is the surfaces'.
func (c Category) String() string {
	switch c {
	case CategoryConfirmed:
		return "CategoryConfirmed"
	case CategoryUnknown:
		return "CategoryUnknown"
	case CategoryPopulationRisk:
		return "CategoryPopulationRisk"
	case CategoryNotInterpreted:
		return "CategoryNotInterpreted"
	}
	return "Category(" + strconv.Itoa(int(c)) + ")"
}

// GenotypeCall is the engine's interpretation of one gene.
type GenotypeCall struct {
	Gene          string
	Diplotype     string
	Phenotype     string
	ActivityScore string
	// UntestedAlleles are the alleles the call could not assess (defined
	// at positions that were not called; the gene's AMP tier-1 positions
	// were all called).
	UntestedAlleles []string
}

// Guideline names a guideline and where to read it.
type Guideline struct {
	Name string
	URL  string
}

// Alert is one finding (spec §2.5 plus extensions).
type Alert struct {
	// ID identifies the alert within its Result; citations name it.
	ID string
	// Drug names the covered drug the alert is about; set only in the
	// answer for a combination product or ingredient list.
	Drug     string
	Severity Severity
	Variant  string
	// Gene is the pharmacogene the alert is about; empty when it concerns
	// none (a state's endemic risk that names no gene of the drug, a drug
	// name that was not recognised).
	Gene            string
	StarAllele      string
	AFIndia         *float64
	AFGlobal        *float64
	Category        Category
	Message         string
	Action          string
	Alternatives    []string
	TestRecommended bool
	Genotype        []GenotypeCall
	Recommendation  string
	Implications    []string
	Classification  string
	EvidenceLevel   string
	Population      string
	Guideline       *Guideline
	GuidanceSource  string
	Assumptions     []string
}

// Alternative is a safer alternative drug.
type Alternative struct {
	Name      string
	Rationale string
}

// EndemicRisk is a state risk relevant to the drug.
type EndemicRisk struct {
	Risk    string
	Disease string
	Drugs   []string
	Note    string
}

// PopulationFrequency compares the Indian and global frequency of an allele
// that matters for the drug.
type PopulationFrequency struct {
	Variant      string
	Gene         string
	Allele       string
	AFIndia      *float64
	AFIndiaBasis string
	AFGlobal     *float64
}

// CommunityNote is a community-specific fact.
type CommunityNote struct {
	Community string
	Trait     string
	Finding   string
}

// HerbNote is a herb–drug interaction relevant to the drug.
type HerbNote struct {
	Herb      string
	Botanical string
	Mechanism string
	Effect    string
	Evidence  string
}

// IndianContext is the India-specific part of a result.
type IndianContext struct {
	State string
	// StateRecognised and EthnicityRecognised are set only when a state
	// or an ethnicity was sent.
	StateRecognised       *bool
	StateNormalised       string
	EndemicRisks          []EndemicRisk
	PopulationFrequencies []PopulationFrequency
	Ethnicity             string
	EthnicityRecognised   *bool
	CommunityNotes        []CommunityNote
	TraditionalMedicine   []HerbNote
}

// DataCompleteness is exactly the spec's six fields (§2.3).
type DataCompleteness struct {
	GenotypeProvided   bool
	StateProvided      bool
	EthnicityProvided  bool
	IndicationProvided bool
	FieldsPopulated    int
	FieldsTotal        int
}

// Citation supports one part of a Result (spec §2.4).
type Citation struct {
	// Target is what the citation supports.
	Target        CitationTarget
	Source        string
	EvidenceLevel string
	// URL is a link or a "PMID:" identifier.
	URL string
}

// CitationKind says which part of a Result a citation supports.
type CitationKind int

// Citation kinds.
const (
	// CitesAlert: the alert named by CitationTarget.Alert.
	CitesAlert CitationKind = iota + 1
	// CitesAlertFrequencyIndia: that alert's Indian allele frequency.
	CitesAlertFrequencyIndia
	// CitesAlertFrequencyGlobal: that alert's global allele frequency.
	CitesAlertFrequencyGlobal
	// CitesAlternative: SaferAlternatives[Index].
	CitesAlternative
	// CitesEndemicRisk: IndianContext.EndemicRisks[Index].
	CitesEndemicRisk
	// CitesPopulationFrequency: IndianContext.PopulationFrequencies[Index].
	CitesPopulationFrequency
	// CitesCommunityNote: IndianContext.CommunityNotes[Index].
	CitesCommunityNote
	// CitesTraditionalMedicine: IndianContext.TraditionalMedicine[Index].
	CitesTraditionalMedicine
)

// CitationTarget names the part of a Result a citation supports.
type CitationTarget struct {
	Kind CitationKind
	// Alert is the alert's ID, for the alert kinds.
	Alert string
	// Index is the position in the Result's list, for the list kinds.
	Index int
}

// AlertCitations returns the citations of the alert with the given ID:
// of the alert itself and of its allele frequencies, in order.
func (r *Result) AlertCitations(id string) []Citation {
	var out []Citation
	for _, c := range r.SourceCitations {
		switch c.Target.Kind {
		case CitesAlert, CitesAlertFrequencyIndia, CitesAlertFrequencyGlobal:
			if c.Target.Alert == id {
				out = append(out, c)
			}
		}
	}
	return out
}

// GroundingContract is the constant text every response states.
const GroundingContract = "no entity outside graph result rows"

// Result is the clinical answer to one Request: the spec §2.2 facts
// without the transport envelope (request id, audit id, timing). Its
// wire form (field names, JSON paths of citations) belongs to the REST
// surface (pgxapi).
type Result struct {
	Confidence       string
	DataCompleteness DataCompleteness
	SourceCitations  []Citation
	Drug             string
	DrugNormalised   string
	DrugRecognised   bool
	DidYouMean       []string
	// DrugReading says how the drug input was read (engine/drugnames).
	DrugReading          *DrugReading
	Sensitivity          string
	OverallSeverity      Severity
	Alerts               []Alert
	SaferAlternatives    []Alternative
	IndianContext        IndianContext
	Genotype             []GenotypeCall
	UnrecognisedVariants []string
	Warnings             []string
	// Evidence is the evidence ledger: the state of every genotype input
	// item of the request (DESIGN.md §3, "Evidence ledger").
	Evidence          []EvidenceItem
	GroundingContract string
	KnowledgeVersion  string
}

// EvidenceState is what became of one genotype input item. A refused
// item (wrong build, a notation with two meanings, an impossible
// genotype) has no state: the request is answered 422.
type EvidenceState int

// Evidence states (DESIGN.md §3, "Evidence ledger").
const (
	// EvidenceUsed: the item was placed and read by the gene's call.
	EvidenceUsed EvidenceState = iota + 1
	// EvidenceConflicting: another item of the request states a
	// different genotype; the gene goes to review naming both.
	EvidenceConflicting
	// EvidenceNotPlaceable: no allele definition position takes the
	// item; a gene reported as tested that may carry it goes to review.
	EvidenceNotPlaceable
	// EvidenceNotPassing: a dedicated caller reports the call as not
	// passing (ambiguous, low quality) or it cannot be read; its gene goes
	// to review naming the caller's words.
	EvidenceNotPassing
)

// String returns the constant's Go name, for logs and test messages; the
// wire name is the surfaces'.
func (s EvidenceState) String() string {
	switch s {
	case EvidenceUsed:
		return "EvidenceUsed"
	case EvidenceConflicting:
		return "EvidenceConflicting"
	case EvidenceNotPlaceable:
		return "EvidenceNotPlaceable"
	case EvidenceNotPassing:
		return "EvidenceNotPassing"
	}
	return "EvidenceState(" + strconv.Itoa(int(s)) + ")"
}

// EvidenceItem is one genotype input item and what became of it.
type EvidenceItem struct {
	// Field is the item's place in the request ("variants[2]",
	// "calls[0]", "diplotypes.CYP2C19", "hla.HLA-B*15:02").
	Field string
	// Item is the item as written (trimmed).
	Item  string
	State EvidenceState
	// Genes are the genes the item was placed on, or the tested genes
	// its not being placeable sent to review.
	Genes []string
	// Reason says why the item was not used; empty when used.
	Reason string
}

// Input size limits: no drug name is near 200 bytes, and free-text
// context beyond 1,000 bytes is not clinical context. A caveat list holds
// at most 1,000 items of at most 1,000 bytes, above the definition
// positions and alleles of any gene of the knowledge.
const (
	MaxDrugNameBytes = 200
	MaxContextBytes  = 1000
	MaxCaveatItems   = 1000
)
