package pgxapi

import (
	"strconv"

	"github.com/pgxsafety/pgxsafety/engine"
)

// This file is the REST wire form of the engine's result (spec §2.2–§2.5):
// the spec's field names and the JSON paths of source_citations live here
// and nowhere else. The engine's Result is typed; ResultOf maps it.

// Result is the wire form of one check's answer, without the envelope.
type Result struct {
	Confidence           string           `json:"confidence"`
	DataCompleteness     DataCompleteness `json:"data_completeness"`
	SourceCitations      []Citation       `json:"source_citations"`
	Drug                 string           `json:"drug"`
	DrugNormalised       string           `json:"drug_normalised"`
	DrugRecognised       bool             `json:"drug_recognised"`
	DidYouMean           []string         `json:"did_you_mean,omitempty"`
	DrugReading          *DrugReading     `json:"drug_reading,omitempty"`
	Sensitivity          string           `json:"sensitivity"`
	OverallSeverity      string           `json:"overall_severity"`
	Alerts               []Alert          `json:"alerts"`
	SaferAlternatives    []Alternative    `json:"safer_alternatives"`
	IndianContext        IndianContext    `json:"indian_context"`
	Genotype             []GenotypeCall   `json:"genotype"`
	UnrecognisedVariants []string         `json:"unrecognised_variants"`
	Warnings             []string         `json:"warnings"`
	// Evidence is the evidence ledger: what became of every genotype
	// input item (DESIGN.md §3).
	Evidence          []EvidenceItem `json:"evidence,omitempty"`
	GroundingContract string         `json:"grounding_contract"`
	KnowledgeVersion  string         `json:"knowledge_version"`
}

// EvidenceItem is the wire form of one genotype input item and its state:
// "used", "conflicting", "not_placeable" or "not_passing".
type EvidenceItem struct {
	Field  string   `json:"field"`
	Item   string   `json:"item"`
	State  string   `json:"state"`
	Genes  []string `json:"genes,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// evidenceStateName is the wire name of an evidence state.
func evidenceStateName(s engine.EvidenceState) string {
	switch s {
	case engine.EvidenceUsed:
		return "used"
	case engine.EvidenceConflicting:
		return "conflicting"
	case engine.EvidenceNotPlaceable:
		return "not_placeable"
	case engine.EvidenceNotPassing:
		return "not_passing"
	}
	panic("pgxapi: evidence state without a wire name: " + s.String())
}

func evidenceItemOf(e engine.EvidenceItem) EvidenceItem {
	return EvidenceItem{Field: e.Field, Item: e.Item, State: evidenceStateName(e.State), Genes: e.Genes, Reason: e.Reason}
}

// GenotypeCall is the wire form of the interpretation of one gene.
type GenotypeCall struct {
	Gene          string `json:"gene"`
	Diplotype     string `json:"diplotype,omitempty"`
	Phenotype     string `json:"phenotype,omitempty"`
	ActivityScore string `json:"activity_score,omitempty"`
	// UntestedAlleles are the alleles the call could not assess (defined
	// at positions that were not called; the gene's AMP tier-1 positions
	// were all called).
	UntestedAlleles []string `json:"untested_alleles,omitempty"`
}

// Guideline names a guideline and where to read it.
type Guideline struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Alert is the wire form of one finding (spec §2.5 plus extensions).
type Alert struct {
	// Drug is the covered drug the alert is about; only in answers for a
	// combination product or an ingredient list.
	Drug          string `json:"drug,omitempty"`
	Severity      string `json:"severity"`
	SeverityScore int    `json:"severity_score"`
	Variant       string `json:"variant,omitempty"`
	// Gene is absent when the alert concerns no gene.
	Gene            string         `json:"gene,omitempty"`
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

// PopulationFrequency compares the Indian and global frequency of an
// allele that matters for the drug.
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
	StateRecognised       *bool                 `json:"state_recognised,omitempty"` // only when a state was sent
	StateNormalised       string                `json:"state_normalised,omitempty"`
	EndemicRisks          []EndemicRisk         `json:"endemic_risks"`
	PopulationFrequencies []PopulationFrequency `json:"population_frequencies"`
	Ethnicity             string                `json:"ethnicity,omitempty"`
	EthnicityRecognised   *bool                 `json:"ethnicity_recognised,omitempty"` // only when an ethnicity was sent
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

// DrugReading is the wire form of how the drug input was read
// (docs/engine.md §1a).
type DrugReading struct {
	Input        string   `json:"input"`
	Status       string   `json:"status"`
	Via          string   `json:"via,omitempty"`
	Matched      string   `json:"matched,omitempty"`
	Drugs        []string `json:"drugs"`
	Ingredients  []string `json:"ingredients,omitempty"`
	Unrecognised []string `json:"unrecognised,omitempty"`
	Ignored      []string `json:"ignored,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	DidYouMean   []string `json:"did_you_mean,omitempty"`
}

func drugReadingOf(r *engine.DrugReading) *DrugReading {
	if r == nil {
		return nil
	}
	out := DrugReading(*r)
	if out.Drugs == nil {
		out.Drugs = []string{}
	}
	return &out
}

// Citation supports one response field (spec §2.4): Field is its JSON
// path ("alerts[0].af_india", "safer_alternatives[1]").
type Citation struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
	URL           string `json:"url"`
}

// ResultOf maps the engine's result to its wire form. Slices the engine
// gives as empty stay empty (they are arrays on the wire, never null).
func ResultOf(r engine.Result) Result {
	out := Result{
		Confidence:           r.Confidence,
		DataCompleteness:     DataCompleteness(r.DataCompleteness),
		SourceCitations:      mapSlice(r.SourceCitations, func(c engine.Citation) Citation { return citationOf(&r, c) }),
		Drug:                 r.Drug,
		DrugNormalised:       r.DrugNormalised,
		DrugRecognised:       r.DrugRecognised,
		DidYouMean:           r.DidYouMean,
		DrugReading:          drugReadingOf(r.DrugReading),
		Sensitivity:          r.Sensitivity,
		OverallSeverity:      severityName(r.OverallSeverity),
		Alerts:               mapSlice(r.Alerts, alertOf),
		SaferAlternatives:    mapSlice(r.SaferAlternatives, func(a engine.Alternative) Alternative { return Alternative(a) }),
		IndianContext:        indianContextOf(r.IndianContext),
		Genotype:             mapSlice(r.Genotype, genotypeCallOf),
		UnrecognisedVariants: r.UnrecognisedVariants,
		Warnings:             r.Warnings,
		Evidence:             mapSlice(r.Evidence, evidenceItemOf),
		GroundingContract:    r.GroundingContract,
		KnowledgeVersion:     r.KnowledgeVersion,
	}
	return out
}

// severityName is the spec's name of a severity (§2.5: overall_severity,
// severity); severity_score is its number.
func severityName(s engine.Severity) string {
	switch s {
	case engine.SeverityHigh:
		return "HIGH"
	case engine.SeverityModerate:
		return "MODERATE"
	case engine.SeverityInfo:
		return "INFO"
	}
	return "NONE"
}

// categoryName is the wire name of an alert category.
func categoryName(c engine.Category) string {
	switch c {
	case engine.CategoryConfirmed:
		return "genotype-confirmed"
	case engine.CategoryUnknown:
		return "genotype-unknown"
	case engine.CategoryPopulationRisk:
		return "population-risk"
	case engine.CategoryNotInterpreted:
		return "input-not-interpreted"
	}
	return ""
}

// mapSlice maps a slice, keeping nil as nil and empty as empty.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func genotypeCallOf(g engine.GenotypeCall) GenotypeCall { return GenotypeCall(g) }

func alertOf(a engine.Alert) Alert {
	out := Alert{
		Drug: a.Drug, Severity: severityName(a.Severity), SeverityScore: int(a.Severity), Variant: a.Variant, Gene: a.Gene, StarAllele: a.StarAllele,
		AFIndia: a.AFIndia, AFGlobal: a.AFGlobal, Category: categoryName(a.Category), Message: a.Message, Action: a.Action,
		Alternatives: a.Alternatives, TestRecommended: a.TestRecommended, Genotype: mapSlice(a.Genotype, genotypeCallOf),
		Recommendation: a.Recommendation, Implications: a.Implications, Classification: a.Classification,
		EvidenceLevel: a.EvidenceLevel, Population: a.Population, GuidanceSource: a.GuidanceSource, Assumptions: a.Assumptions,
	}
	if a.Guideline != nil {
		g := Guideline(*a.Guideline)
		out.Guideline = &g
	}
	return out
}

func indianContextOf(c engine.IndianContext) IndianContext {
	return IndianContext{
		State: c.State, StateRecognised: c.StateRecognised, StateNormalised: c.StateNormalised,
		EndemicRisks: mapSlice(c.EndemicRisks, func(e engine.EndemicRisk) EndemicRisk { return EndemicRisk(e) }),
		PopulationFrequencies: mapSlice(c.PopulationFrequencies, func(p engine.PopulationFrequency) PopulationFrequency {
			return PopulationFrequency(p)
		}),
		Ethnicity: c.Ethnicity, EthnicityRecognised: c.EthnicityRecognised,
		CommunityNotes:      mapSlice(c.CommunityNotes, func(n engine.CommunityNote) CommunityNote { return CommunityNote(n) }),
		TraditionalMedicine: mapSlice(c.TraditionalMedicine, func(h engine.HerbNote) HerbNote { return HerbNote(h) }),
	}
}

// citationOf maps a citation: its typed target becomes the JSON path of
// the field it supports.
func citationOf(r *engine.Result, c engine.Citation) Citation {
	return Citation{Field: fieldPath(r, c.Target), Source: c.Source, EvidenceLevel: c.EvidenceLevel, URL: c.URL}
}

// FieldPath is the JSON path, in the wire form of r, of the part of r a
// citation target names.
func FieldPath(r engine.Result, t engine.CitationTarget) string { return fieldPath(&r, t) }

// fieldPath is FieldPath without copying the result.
func fieldPath(r *engine.Result, t engine.CitationTarget) string {
	alert := func() string {
		for i := range r.Alerts {
			if r.Alerts[i].ID == t.Alert {
				return indexed("alerts", i)
			}
		}
		// A target the result does not hold is an engine bug; the path
		// says so rather than pointing at another alert.
		return "alerts[?" + t.Alert + "]"
	}
	switch t.Kind {
	case engine.CitesAlert:
		return alert()
	case engine.CitesAlertFrequencyIndia:
		return alert() + ".af_india"
	case engine.CitesAlertFrequencyGlobal:
		return alert() + ".af_global"
	case engine.CitesAlternative:
		return indexed("safer_alternatives", t.Index)
	case engine.CitesEndemicRisk:
		return indexed("indian_context.endemic_risks", t.Index)
	case engine.CitesPopulationFrequency:
		return indexed("indian_context.population_frequencies", t.Index)
	case engine.CitesCommunityNote:
		return indexed("indian_context.community_notes", t.Index)
	case engine.CitesTraditionalMedicine:
		return indexed("indian_context.traditional_medicine", t.Index)
	}
	return indexed("unknown", int(t.Kind))
}

// indexed is name[i] (fmt.Sprintf("%s[%d]"), without fmt's cost).
func indexed(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// WireResult is ResultOf as labcsv.Options.Wire wants it. It is a
// *Result, so the processor can have it encode itself (AppendJSON);
// encoding/json encodes the pointer as the Result.
func WireResult(r engine.Result) any {
	w := ResultOf(r)
	return &w
}
