package knowledge

// This file declares the rows of the knowledge files (knowledge/data/*.json,
// written by knowledge/internal/gen): their JSON tags are the file format.
// Loading decodes the files into these rows and converts them into the
// engine's domain types (rows.go: engineKnowledge); the engine knows
// nothing of the files. Each row type has the fields of the engine type of
// the same name.

// Source is one cited source of knowledge rows.
type Source struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Publisher string `json:"publisher,omitempty"`
	Year      string `json:"year,omitempty"`
	URL       string `json:"url,omitempty"`
	PMID      string `json:"pmid,omitempty"`
	Licence   string `json:"licence"`
}

// Drug is a drug covered by the safety layer.
type Drug struct {
	Name           string   `json:"name"`
	RxNormCUIs     []string `json:"rxnorm_cuis,omitempty"`
	ATCCodes       []string `json:"atc_codes,omitempty"`
	ATCClass       string   `json:"atc_class,omitempty"`
	GuidelineGroup string   `json:"guideline_group,omitempty"`
	Synonyms       []string `json:"synonyms,omitempty"`
	BestCPICLevel  string   `json:"best_cpic_level,omitempty"`
	// Guidance is "CPIC" when CPIC recommendations exist, "DPWG" when only
	// DPWG guidance exists, "none" when neither has structured rows.
	Guidance string `json:"guidance"`
	// Sensitivity is the tier: "high", "moderate" or "none" (DESIGN.md §3).
	Sensitivity string     `json:"sensitivity"`
	Pairs       []DrugPair `json:"pairs"`
	SourceIDs   []string   `json:"source_ids"`
}

// DrugPair is one CPIC gene–drug pair of a drug.
type DrugPair struct {
	Gene          string   `json:"gene"`
	CPICLevel     string   `json:"cpic_level"`
	LevelStatus   string   `json:"level_status,omitempty"`
	EvidenceLevel string   `json:"evidence_level,omitempty"` // ClinPGx level: 1A, 1B, 2A, 2B, 3, 4
	GuidelineName string   `json:"guideline_name,omitempty"`
	GuidelineURL  string   `json:"guideline_url,omitempty"`
	PMIDs         []string `json:"pmids,omitempty"`
	SourceIDs     []string `json:"source_ids"`
}

// Gene is a pharmacogene with its alleles and CPIC phenotype rules.
type Gene struct {
	Symbol string `json:"symbol"`
	// Method is engine.MethodActivityScore, MethodFunctionPair or
	// MethodAlleleStatus.
	Method string `json:"method"`
	// DefaultAllele is the allele assumed where no variant is found (*1,
	// "Reference", "B (reference)"); ReferenceAllele is the allele that
	// matches GRCh38 (CYP2C19: *38), which may differ.
	DefaultAllele   string          `json:"default_allele"`
	ReferenceAllele string          `json:"reference_allele"`
	Chromosome      string          `json:"chromosome,omitempty"`
	Alleles         []Allele        `json:"alleles"`
	Rules           []PhenotypeRule `json:"rules"`
	DataVersion     string          `json:"data_version"`
	SourceIDs       []string        `json:"source_ids"`
}

// Allele is a named allele of a gene.
type Allele struct {
	Name     string `json:"name"`
	Function string `json:"function,omitempty"`
	// Activity is the CPIC activity value as written ("1.0", "0.5", "n/a",
	// "≥3.0"); empty for genes without activity values.
	Activity   string `json:"activity,omitempty"`
	Structural bool   `json:"structural,omitempty"`
	// Key lists the variants that distinguish this allele from the gene's
	// default allele, as rsid:base (bases in VCF orientation).
	Key []AlleleVariant `json:"key,omitempty"`
	// Defining lists every defining rsID of the allele (including positions
	// shared with the default allele).
	Defining  []string `json:"defining,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// AlleleVariant is one position of an allele definition.
type AlleleVariant struct {
	RsID string `json:"rsid"`
	Base string `json:"base"`
	// Ambiguous is true when the CPIC cell is an IUPAC code ("either base").
	Ambiguous bool `json:"ambiguous,omitempty"`
}

// PhenotypeRule maps an activity score, a pair of functions or a single
// hemizygous function to a CPIC phenotype.
type PhenotypeRule struct {
	Type      string `json:"type"` // activity_score | function_pair | hemizygous_function
	Key       string `json:"key"`
	Phenotype string `json:"phenotype"`
}

// RsID is one (rsID, alternate base) of the CPIC allele definitions.
type RsID struct {
	RsID    string   `json:"rsid"`
	Gene    string   `json:"gene"`
	Ref     string   `json:"ref"`
	Alt     string   `json:"alt"`
	Alleles []string `json:"alleles"`
	// Sole lists the alleles defined by this variant alone.
	Sole      []string `json:"sole,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// Recommendation is one guideline recommendation for a drug, keyed by the
// lookup values of one or more genes and a population.
type Recommendation struct {
	ID     string   `json:"id"`
	Source string   `json:"source"` // CPIC or DPWG
	Drug   string   `json:"drug"`
	Genes  []string `json:"genes"`
	// Lookup maps gene → lookup value (phenotype, activity score such as
	// "1.0", allele status such as "*15:02 positive", or "No Result").
	Lookup              map[string]string `json:"lookup"`
	LookupType          map[string]string `json:"lookup_type"`
	Phenotypes          map[string]string `json:"phenotypes,omitempty"`
	Population          string            `json:"population,omitempty"`
	Implications        map[string]string `json:"implications,omitempty"`
	Text                string            `json:"text"`
	OtherConsiderations string            `json:"other_considerations,omitempty"`
	Classification      string            `json:"classification,omitempty"`
	// Actionability is "yes", "none" or "conditional" (derived in the data
	// pack; see knowledge/data/LICENCE.md).
	Actionability string   `json:"actionability"`
	Basis         []string `json:"basis,omitempty"`
	// AlternateDrug and Dosing are the ClinPGx flags.
	AlternateDrug bool     `json:"alternate_drug,omitempty"`
	Dosing        bool     `json:"dosing,omitempty"`
	Alternatives  []string `json:"alternatives,omitempty"`
	GuidelineName string   `json:"guideline_name"`
	GuidelineURL  string   `json:"guideline_url,omitempty"`
	PMIDs         []string `json:"pmids,omitempty"`
	// Partial marks rows that hold only part of a newer guideline.
	Partial   bool     `json:"partial,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// TrackedVariant is one variant of the curated panel with Indian frequencies.
type TrackedVariant struct {
	RsID        string   `json:"rsid"`
	Gene        string   `json:"gene"`
	AlleleLabel string   `json:"allele_label"`
	StarAlleles []string `json:"star_alleles,omitempty"`
	Function    string   `json:"function,omitempty"`
	Ref         string   `json:"ref,omitempty"`
	Alt         string   `json:"alt,omitempty"`
	// AFIndia is the best Indian or South-Asian figure (nil when unknown);
	// AFIndiaBasis says what it measures and which population.
	AFIndia      *float64 `json:"af_india,omitempty"`
	AFIndiaBasis string   `json:"af_india_basis,omitempty"`
	AFIndiaKind  string   `json:"af_india_kind,omitempty"` // allele | carrier
	// AFIndiaSourceIDs and AFGlobalSourceIDs name the sources of exactly
	// those figures (a subset of SourceIDs).
	AFIndiaSourceIDs  []string `json:"af_india_source_ids,omitempty"`
	AFGlobalSourceIDs []string `json:"af_global_source_ids,omitempty"`
	AFSouthAsian      *float64 `json:"af_south_asian,omitempty"`
	AFGlobal          *float64 `json:"af_global,omitempty"`
	AFGlobalBasis     string   `json:"af_global_basis,omitempty"`
	ClinVar           string   `json:"clinvar,omitempty"`
	Notes             string   `json:"notes,omitempty"`
	SourceIDs         []string `json:"source_ids"`
}

// HLAAllele is an HLA allele the knowledge has frequencies or rules for.
type HLAAllele struct {
	Gene                string   `json:"gene"`   // HLA-A, HLA-B
	Allele              string   `json:"allele"` // *15:02
	AFCentralSouthAsian *float64 `json:"af_central_south_asian,omitempty"`
	SourceIDs           []string `json:"source_ids"`
}

// State is an Indian state or union territory with its drug-safety context.
type State struct {
	Name    string      `json:"name"`
	Type    string      `json:"type"` // state | union territory
	Aliases []string    `json:"aliases,omitempty"`
	Risks   []StateRisk `json:"risks"`
}

// StateRisk is one endemic risk of a state that can change advice.
type StateRisk struct {
	Risk string `json:"risk"`
	// Disease is the condition named before the colon of Risk (malaria, …).
	Disease string `json:"disease"`
	// Drugs are the drug names the risk affects (lower case).
	Drugs        []string `json:"drugs,omitempty"`
	AffectedText string   `json:"affected_text,omitempty"`
	Note         string   `json:"note,omitempty"`
	SourceIDs    []string `json:"source_ids"`
}

// Community is a community-specific pharmacogenomic fact.
type Community struct {
	Name      string   `json:"name"`
	Aliases   []string `json:"aliases,omitempty"`
	Region    string   `json:"region,omitempty"`
	Trait     string   `json:"trait"`
	Genes     []string `json:"genes,omitempty"`
	Finding   string   `json:"finding"`
	Drugs     []string `json:"drugs,omitempty"`
	DrugsText string   `json:"drugs_text,omitempty"`
	Metric    string   `json:"metric,omitempty"`
	N         string   `json:"n,omitempty"`
	Notes     string   `json:"notes,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// HerbInteraction is a traditional-medicine herb–drug interaction.
type HerbInteraction struct {
	Herb             string   `json:"herb"`
	Botanical        string   `json:"botanical"`
	TraditionalNames string   `json:"traditional_names,omitempty"`
	DrugsText        string   `json:"drugs_text"`
	Drugs            []string `json:"drugs,omitempty"`
	Mechanism        string   `json:"mechanism,omitempty"`
	Effect           string   `json:"effect,omitempty"`
	Severity         string   `json:"severity,omitempty"`
	Evidence         string   `json:"evidence,omitempty"`
	Notes            string   `json:"notes,omitempty"`
	SourceIDs        []string `json:"source_ids"`
}

// FlowChart is special guidance that is not a lookup table (warfarin).
type FlowChart struct {
	Drug      string          `json:"drug"`
	Genes     []string        `json:"genes"`
	Note      string          `json:"note"`
	Nodes     []FlowChartNode `json:"nodes"`
	URL       string          `json:"url,omitempty"`
	SourceIDs []string        `json:"source_ids"`
}

// FlowChartNode is one box of a flow chart.
type FlowChartNode struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Strength string `json:"strength,omitempty"`
}

// GeneDefinition is PharmCAT's allele definition of one gene in VCF space
// (GRCh38), with the gene's matcher exemptions. It is generated from the
// PharmCAT definition files (definition/<GENE>_translation.json and
// exemptions.json).
type GeneDefinition struct {
	Gene        string `json:"gene"`
	Chromosome  string `json:"chromosome"` // "chr10"
	RefSeq      string `json:"refseq"`     // "NC_000010.11"
	DataVersion string `json:"data_version"`
	// Positions are the defining positions in ascending order.
	Positions []DefinedPosition `json:"positions"`
	// IgnoredPositions are defined upstream but never used for matching
	// (exemptions); observations there are ignored.
	IgnoredPositions []DefinedPosition `json:"ignored_positions,omitempty"`
	// Alleles are the named alleles; the first is the reference allele
	// (the one matching GRCh38 at every position).
	Alleles []DefinedAllele `json:"alleles"`
	// RequiredPositions must be called for the gene to be called (NAT2).
	RequiredPositions []int `json:"required_positions,omitempty"`
	// ExtraPositions are reported only, never matched (CYP2C9 rs12777823).
	ExtraPositions []DefinedPosition `json:"extra_positions,omitempty"`
	// IgnoredAlleles are defined upstream but never called (exemptions).
	IgnoredAlleles []string `json:"ignored_alleles,omitempty"`
	// UnphasedPriorities pick one diplotype among equally scored unphased
	// candidates (NAT2).
	UnphasedPriorities []PriorityRule `json:"unphased_priorities,omitempty"`
	// Tier1Alleles and Tier1Positions are the AMP tier-1 alleles a
	// clinical assay must test and their defining positions
	// (exemptions.json amp1Alleles, amp1Positions).
	Tier1Alleles   []string `json:"tier1_alleles,omitempty"`
	Tier1Positions []int    `json:"tier1_positions,omitempty"`
	// UndocumentedAsReference is true for toxicity genes, where a base no
	// definition uses is read as reference (with a warning).
	UndocumentedAsReference bool `json:"undocumented_as_reference,omitempty"`
	// VariantList is true for genes reported as a list of variants when
	// unphased data has several heterozygous sites (DPYD, RYR1, CACNA1S).
	VariantList bool     `json:"variant_list,omitempty"`
	SourceIDs   []string `json:"source_ids"`
}

// PriorityRule says: when every diplotype of List is among the top
// candidates, report Pick.
type PriorityRule struct {
	List []string `json:"list"`
	Pick string   `json:"pick"`
}

// DefinedPosition is one defining position of a gene.
type DefinedPosition struct {
	Pos  int    `json:"pos"`
	RsID string `json:"rsid,omitempty"`
	Ref  string `json:"ref"`
	// Alts are the VCF alternate alleles the definitions use.
	Alts []string `json:"alts"`
	// HGVS is the genomic name on the RefSeq chromosome ("g.94761900C>T").
	HGVS string `json:"hgvs,omitempty"`
	// CPICToVCF maps each CPIC allele notation ("TA(8)", "delA") to its VCF
	// allele ("CATAT").
	CPICToVCF map[string]string `json:"cpic_to_vcf,omitempty"`
	// Ignored positions are never used for matching (exemptions).
	Ignored bool `json:"ignored,omitempty"`
}

// DefinedAllele is one named allele: its VCF allele at each position it
// defines. A position it does not list carries the reference allele's
// base (PharmCAT's blank cell).
type DefinedAllele struct {
	Name       string       `json:"name"`
	Structural bool         `json:"structural,omitempty"`
	Cells      []AlleleCell `json:"cells"`
}

// AlleleCell is the allele of a named allele at one position: a VCF
// allele, or an IUPAC code for SNVs meaning "either base".
type AlleleCell struct {
	Pos    int    `json:"pos"`
	Allele string `json:"allele"`
}

// DrugName is one name under which a covered drug is prescribed or sold:
// a brand, a salt form, a generic synonym, an abbreviation, a
// combination product, or a regimen abbreviation (engine.NameKindRegimen).
type DrugName struct {
	// Name is the name as the source writes it.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Drugs are the covered drugs the name stands for (knowledge names):
	// one, or for a combination product or regimen every covered
	// ingredient (a regimen may cover none: an empty list).
	Drugs []string `json:"drugs"`
	// Markets are where the sources place the name: US, IN, intl, unknown.
	Markets []string `json:"markets"`
	// Stem is the product name cut before its strength or dose form
	// ("Clopilet 150 Tablet" → "Clopilet"), when the source gives one.
	Stem string `json:"stem,omitempty"`
	// Ingredients are a combination's or a regimen's ingredients as the
	// source lists them (covered or not).
	Ingredients []string `json:"ingredients,omitempty"`
	// Flags are engine.NameFlag* values.
	Flags     []string `json:"flags,omitempty"`
	SourceIDs []string `json:"source_ids"`
}

// IndicationCode assigns a diagnosis or procedure code to a guideline
// population (the CPIC clopidogrel populations).
type IndicationCode struct {
	Population string `json:"population"`
	System     string `json:"system"`
	Code       string `json:"code"`
	Display    string `json:"display"`
	// Match is "exact", or "prefix" for a category header that covers every
	// code starting with it.
	Match string `json:"match"`
	// Basis is "named" (CPIC's population text names the condition),
	// "related" (assigned by the data extraction; needs clinical review) or
	// "not-named" (atrial fibrillation/flutter, which CPIC does not name).
	Basis string `json:"cpic_basis"`
	// Recheck says why the row's population differs from the data pack's
	// (the code title re-checked: knowledge/internal/gen/names.go); empty
	// when the row is as the data pack has it.
	Recheck   string   `json:"recheck,omitempty"`
	SourceIDs []string `json:"source_ids"`
}
