package pgxapi

import (
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// This file is the REST wire form of the classifier's answer (spec §2.7):
// the field names and the JSON paths of source_citations live here, not
// in engine/classify. ClassificationOf maps a classify.Result.

// Classification is the wire form of one classification, without the
// envelope: the four method sections, then the tier and its support.
type Classification struct {
	Variant           ClassifiedVariant    `json:"variant"`
	ESM               ESMSection           `json:"esm"`
	Population        PopulationSection    `json:"population"`
	Graph             GraphSection         `json:"graph"`
	Synthesis         SynthesisSection     `json:"synthesis"`
	Tier              int                  `json:"tier"`
	TierLabel         string               `json:"tier_label"`
	RulesFired        []string             `json:"rules_fired"`
	SourceCitations   []ClassifierCitation `json:"source_citations"`
	GroundingContract string               `json:"grounding_contract"`
	EngineVersion     string               `json:"engine_version"`
	KnowledgeVersion  string               `json:"knowledge_version"`
	Warnings          []string             `json:"warnings"`
}

// ClassifiedVariant is the wire form of the classified substitution.
type ClassifiedVariant struct {
	Gene              string         `json:"gene"`
	UniProt           string         `json:"uniprot"`
	ProteinLength     int            `json:"protein_length"`
	Position          int            `json:"position"`
	Ref               string         `json:"ref"`
	Alt               string         `json:"alt"`
	HGVSp             string         `json:"hgvs_p"`
	Short             string         `json:"short"`
	ReferenceVerified bool           `json:"reference_verified"`
	KnownVariants     []KnownVariant `json:"known_variants"`
}

// KnownVariant is a variant allele whose protein change was classified.
type KnownVariant struct {
	RsID        string   `json:"rsid"`
	Ref         string   `json:"ref"`
	Alt         string   `json:"alt"`
	GRCh38      string   `json:"grch38"`
	HGVSc       string   `json:"hgvs_c,omitempty"`
	AlleleLabel string   `json:"allele_label"`
	Alleles     []string `json:"cpic_alleles"`
	Function    string   `json:"cpic_function,omitempty"`
	InCohort    bool     `json:"in_cohort"`
}

// ESMSection is the wire form of the conservation method's section: the
// method, the conservation figures inline, then how they were made.
type ESMSection struct {
	Method string `json:"method"`
	Conservation
	Alignment     AlignmentStatus `json:"alignment"`
	EntropySource string          `json:"entropy_source"`
	Formula       string          `json:"formula"`
	Constants     ESMConstants    `json:"constants"`
	Notes         []string        `json:"notes,omitempty"`
}

// Conservation is the wire form of the position-aware conservation score.
type Conservation struct {
	Ref                string              `json:"ref"`
	Alt                string              `json:"alt"`
	Position           int                 `json:"position"`
	BLOSUM62           int                 `json:"blosum62"`
	Profile            bool                `json:"profile"`
	ColumnAligned      bool                `json:"column_aligned"`
	ColumnNeff         float64             `json:"column_neff"`
	PriorWeight        float64             `json:"prior_weight"`
	PRef               float64             `json:"p_ref"`
	PAlt               float64             `json:"p_alt"`
	LogOdds            float64             `json:"site_log_odds"`
	ColumnEntropyBits  float64             `json:"column_entropy_bits"`
	ColumnConservation float64             `json:"column_conservation"`
	Score              float64             `json:"conservation_score"`
	Damaging           bool                `json:"damaging"`
	Conserved          bool                `json:"conserved"`
	Confidence         string              `json:"confidence"`
	ConfidenceReason   string              `json:"confidence_reason"`
	ResidueOnly        ResidueConservation `json:"residue_only"`
}

// ResidueConservation is the wire form of the residue-only score.
type ResidueConservation struct {
	Ref              string  `json:"ref"`
	Alt              string  `json:"alt"`
	BLOSUM62         int     `json:"blosum62"`
	SubstitutionTerm float64 `json:"substitution_term"`
	RefEntropyBits   float64 `json:"ref_entropy_bits"`
	EntropyTerm      float64 `json:"entropy_term"`
	Score            float64 `json:"score"`
	Damaging         bool    `json:"damaging"`
	Conserved        bool    `json:"conserved"`
}

// AlignmentStatus is the wire form of the homolog profile's status.
type AlignmentStatus struct {
	Available          bool    `json:"available"`
	Reason             string  `json:"reason"`
	Source             string  `json:"source,omitempty"`
	Hits               int     `json:"hits,omitempty"`
	Sequences          int     `json:"sequences,omitempty"`
	EffectiveSequences float64 `json:"effective_sequences,omitempty"`
}

// ESMConstants is the wire form of the conservation formula's constants.
type ESMConstants struct {
	PseudocountWeight      float64 `json:"pseudocount_weight"`
	LowConfidenceNeff      float64 `json:"low_confidence_neff_below"`
	ConservedColumnAtLeast float64 `json:"conserved_column_at_least"`
	DamagingLogOddsAtMost  float64 `json:"damaging_log_odds_at_most"`
	ImpliedLambda          float64 `json:"implied_lambda"`
	NominalLambda          float64 `json:"nominal_lambda"`
}

// PopulationSection is the wire form of the population method's section.
type PopulationSection struct {
	Records       []PopulationRecord `json:"records"`
	Rarity        string             `json:"rarity"`
	RareBelow     float64            `json:"rare_below"`
	CommonAtLeast float64            `json:"common_at_least"`
	Note          string             `json:"note,omitempty"`
}

// PopulationRecord is the wire form of one variant allele's frequencies
// and ClinVar significance.
type PopulationRecord struct {
	RsID                string   `json:"rsid"`
	Ref                 string   `json:"ref"`
	Alt                 string   `json:"alt"`
	AFIndia             *float64 `json:"af_india,omitempty"`
	AFIndiaBasis        string   `json:"af_india_basis,omitempty"`
	AFIndiaKind         string   `json:"af_india_kind,omitempty"`
	AFIndiaSourceIDs    []string `json:"af_india_source_ids,omitempty"`
	AFGlobal            *float64 `json:"af_global,omitempty"`
	AFGlobalBasis       string   `json:"af_global_basis,omitempty"`
	AFGlobalSourceIDs   []string `json:"af_global_source_ids,omitempty"`
	ClinVarSignificance string   `json:"clinvar_significance,omitempty"`
	ClinVarRelease      string   `json:"clinvar_release,omitempty"`
	ClinVarSourceIDs    []string `json:"clinvar_source_ids,omitempty"`
	Rarity              string   `json:"rarity"`
	Notes               []string `json:"notes,omitempty"`
}

// GraphSection is the wire form of the graph method's section. Its rows
// and nodes are the knowledge graph's own rows, whose JSON form is that of
// the classifier's knowledge file.
type GraphSection struct {
	Rows              []classify.GraphEdge `json:"rows"`
	Nodes             []classify.GraphNode `json:"nodes"`
	NodeCount         int                  `json:"node_count"`
	EdgeCount         int                  `json:"edge_count"`
	GroundingContract string               `json:"grounding_contract"`
	Note              string               `json:"note"`
}

// SynthesisSection is the wire form of the synthesis method's section.
type SynthesisSection struct {
	Tier             int          `json:"tier"`
	TierLabel        string       `json:"tier_label"`
	DecidedBy        string       `json:"decided_by"`
	DecidingEvidence []string     `json:"deciding_evidence"`
	Rules            []RuleResult `json:"rules"`
	Precedence       string       `json:"precedence"`
}

// ClassifierRule is the wire form of one row of the rule table.
type ClassifierRule struct {
	ID        string   `json:"id"`
	Tier      int      `json:"tier"`
	Condition string   `json:"condition"`
	Threshold string   `json:"threshold"`
	Evidence  []string `json:"evidence_kinds"`
}

// RuleResult is the wire form of one evaluated rule.
type RuleResult struct {
	ClassifierRule
	Fired  bool   `json:"fired"`
	Values string `json:"evidence"`
}

// ClassifierCitation supports one field of a classification: Field is its
// JSON path ("population.records[0].af_india", "graph.rows[3]").
type ClassifierCitation struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
	URL           string `json:"url"`
}

// ClassificationOf maps the classifier's result to its wire form. Slices
// keep their nil or empty state (arrays on the wire stay as they were).
func ClassificationOf(r classify.Result) Classification {
	return Classification{
		Variant: ClassifiedVariant{
			Gene: r.Variant.Gene, UniProt: r.Variant.UniProt, ProteinLength: r.Variant.ProteinLength,
			Position: r.Variant.Position, Ref: r.Variant.Ref, Alt: r.Variant.Alt, HGVSp: r.Variant.HGVSp,
			Short: r.Variant.Short, ReferenceVerified: r.Variant.ReferenceVerified,
			KnownVariants: mapSlice(r.Variant.KnownVariants, func(k classify.KnownVariant) KnownVariant { return KnownVariant(k) }),
		},
		ESM: ESMSection{
			Method:        r.ESM.Method,
			Conservation:  conservationOf(r.ESM.Conservation),
			Alignment:     AlignmentStatus(r.ESM.Alignment),
			EntropySource: r.ESM.EntropySource,
			Formula:       r.ESM.Formula,
			Constants:     ESMConstants(r.ESM.Constants),
			Notes:         r.ESM.Notes,
		},
		Population: PopulationSection{
			Records: mapSlice(r.Population.Records, func(p classify.PopulationRecord) PopulationRecord { return PopulationRecord(p) }),
			Rarity:  r.Population.Rarity, RareBelow: r.Population.RareBelow, CommonAtLeast: r.Population.CommonAtLeast,
			Note: r.Population.Note,
		},
		Graph: GraphSection{
			Rows: r.Graph.Rows, Nodes: r.Graph.Nodes, NodeCount: r.Graph.NodeCount, EdgeCount: r.Graph.EdgeCount,
			GroundingContract: r.Graph.GroundingContract, Note: r.Graph.Note,
		},
		Synthesis: SynthesisSection{
			Tier: r.Synthesis.Tier, TierLabel: r.Synthesis.TierLabel, DecidedBy: r.Synthesis.DecidedBy,
			DecidingEvidence: r.Synthesis.DecidingEvidence,
			Rules: mapSlice(r.Synthesis.Rules, func(x classify.RuleResult) RuleResult {
				return RuleResult{ClassifierRule: ClassifierRule(x.RuleSpec), Fired: x.Fired, Values: x.Values}
			}),
			Precedence: r.Synthesis.Precedence,
		},
		Tier:       r.Tier,
		TierLabel:  r.TierLabel,
		RulesFired: r.RulesFired,
		SourceCitations: mapSlice(r.SourceCitations, func(c classify.Citation) ClassifierCitation {
			return ClassifierCitation{Field: ClassifierFieldPath(c.Target), Source: c.Source, EvidenceLevel: c.EvidenceLevel, URL: c.URL}
		}),
		GroundingContract: r.GroundingContract,
		EngineVersion:     r.EngineVersion,
		KnowledgeVersion:  r.KnowledgeVersion,
		Warnings:          r.Warnings,
	}
}

func conservationOf(c classify.Conservation) Conservation {
	return Conservation{
		Ref: c.Ref, Alt: c.Alt, Position: c.Position, BLOSUM62: c.BLOSUM62, Profile: c.Profile,
		ColumnAligned: c.ColumnAligned, ColumnNeff: c.ColumnNeff, PriorWeight: c.PriorWeight, PRef: c.PRef, PAlt: c.PAlt,
		LogOdds: c.LogOdds, ColumnEntropyBits: c.ColumnEntropyBits, ColumnConservation: c.ColumnConservation,
		Score: c.Score, Damaging: c.Damaging, Conserved: c.Conserved, Confidence: c.Confidence,
		ConfidenceReason: c.ConfidenceReason, ResidueOnly: ResidueConservation(c.ResidueOnly),
	}
}

// ClassifierFieldPath is the JSON path, in the wire form of a
// classification, of the part a citation target names.
func ClassifierFieldPath(t classify.CitationTarget) string {
	switch t.Kind {
	case classify.CitesMatrix:
		return "esm.blosum62"
	case classify.CitesResidueEntropy:
		return "esm.residue_only.ref_entropy_bits"
	case classify.CitesSiteLogOdds:
		return "esm.site_log_odds"
	case classify.CitesReferenceVerified:
		return "variant.reference_verified"
	case classify.CitesKnownVariant:
		return fmt.Sprintf("variant.known_variants[%d]", t.Index)
	case classify.CitesFrequencyIndia:
		return fmt.Sprintf("population.records[%d].af_india", t.Index)
	case classify.CitesFrequencyGlobal:
		return fmt.Sprintf("population.records[%d].af_global", t.Index)
	case classify.CitesClinVar:
		return fmt.Sprintf("population.records[%d].clinvar_significance", t.Index)
	case classify.CitesGraphRow:
		return fmt.Sprintf("graph.rows[%d]", t.Index)
	}
	return fmt.Sprintf("unknown[%d]", int(t.Kind))
}

// DemoAnswer is the audited and released answer of a demonstration case
// (without the envelope): the case, then its classification.
type DemoAnswer struct {
	DemoCase classify.DemoCase `json:"demo_case"`
	Classification
}

// DemoAnswerOf maps a demonstration case and its classification.
func DemoAnswerOf(d classify.DemoCase, r classify.Result) DemoAnswer {
	return DemoAnswer{DemoCase: d, Classification: ClassificationOf(r)}
}
