package service

import (
	"encoding/json"
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// The audit records: every entry the service appends holds the request
// and response payloads of one record kind below. Each payload is an
// explicit wire type with json tags, built in this file from the domain
// values, so renaming a Go field anywhere else cannot change what the
// immutable log holds. The answers a surface releases (the check's wire
// result, the hook's cards, the classification) are recorded as the
// surface encodes them; the surface's golden files pin those.
// TestRecordFormats pins the JSON of every kind in
// testdata/records/<kind>.v<version>.json.
//
// Versions. recordVersions gives each kind's current version. Version 1
// is the format a kind had when versions were introduced: its payloads
// carry no version field, so the entries already in logs and the new ones
// have the same form. A kind whose format changes gets the next version,
// and its request payload begins with "record_version"; the golden file of
// the old version stays, to document what older entries hold. Entries are
// hashed as stored, so changing a format never affects verifying old
// entries. docs/operations.md describes the formats.

// Where a wire type has exactly the fields of its domain type, the record
// is built by conversion: renaming a domain field then fails to compile
// instead of changing the format.

// recordKind names an audit record type.
type recordKind string

// The record kinds.
const (
	kindCheck           recordKind = "check"
	kindCheckMany       recordKind = "check_many"
	kindClassify        recordKind = "classify"
	kindDemo            recordKind = "demo"
	kindCDSHook         recordKind = "cds_hook"
	kindCDSFeedback     recordKind = "cds_feedback"
	kindSMARTReview     recordKind = "smart_review"
	kindBatchCSVChunk   recordKind = "batch_csv_chunk"
	kindBatchCSVClosing recordKind = "batch_csv_closing"
	kindVCFChunk        recordKind = "vcf_chunk"
	kindVCFClosing      recordKind = "vcf_closing"
)

// recordVersions is the current format version of each record kind.
var recordVersions = map[recordKind]int{
	kindCheck:           1,
	kindCheckMany:       1,
	kindClassify:        1,
	kindDemo:            1,
	kindCDSHook:         1,
	kindCDSFeedback:     1,
	kindSMARTReview:     2, // 2: the results' fields named and typed (1 held Go field names and numeric kinds)
	kindBatchCSVChunk:   1,
	kindBatchCSVClosing: 1,
	kindVCFChunk:        1,
	kindVCFClosing:      1,
}

// record is implemented by the audit record type of each operation: the
// request and the response payloads of its entry, as wire types.
type record interface {
	payloads() (request, response any)
}

// requestResponse is a record whose payloads are a request and a response
// wire value.
type requestResponse[Q, R any] struct {
	request  Q
	response R
}

func (r requestResponse[Q, R]) payloads() (any, any) { return r.request, r.response }

// mapList maps a slice, keeping nil as nil (JSON null) and empty as empty.
func mapList[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// --- requests (check, check-many, CDS hook, SMART review) ---

// requestWire is the audit form of an engine.Request: the REST request's
// field names.
type requestWire struct {
	Drug            string             `json:"drug"`
	Variants        []string           `json:"variants,omitempty"`
	Zygosity        map[string]string  `json:"zygosity,omitempty"`
	Diplotypes      map[string]string  `json:"diplotypes,omitempty"`
	HLA             map[string]string  `json:"hla,omitempty"`
	GenesTested     []string           `json:"genes_tested,omitempty"`
	Calls           []positionCallWire `json:"calls,omitempty"`
	State           string             `json:"state,omitempty"`
	Ethnicity       string             `json:"ethnicity,omitempty"`
	Indication      string             `json:"indication,omitempty"`
	IndicationCodes []codingWire       `json:"indication_codes,omitempty"`
	Patient         *patientWire       `json:"patient,omitempty"`
	OutsideCalls    []string           `json:"outside_calls,omitempty"`
	// DiplotypeCaveats: what a FHIR Genotype said beside its diplotype
	// (review reasons, positions not called); part of what decided the
	// answer, so part of its record.
	DiplotypeCaveats map[string]engine.DiplotypeCaveat `json:"diplotype_caveats,omitempty"`
}

type positionCallWire struct {
	Chrom    string `json:"chrom"`
	Pos      int    `json:"pos"`
	Ref      string `json:"ref"`
	Alt      string `json:"alt,omitempty"`
	Genotype string `json:"genotype"`
}

type codingWire struct {
	System  string `json:"system"`
	Code    string `json:"code"`
	Display string `json:"display,omitempty"`
}

type patientWire struct {
	Sex          string   `json:"sex,omitempty"`
	AgeYears     *float64 `json:"age_years,omitempty"`
	MonthsOnDrug *float64 `json:"months_on_drug,omitempty"`
}

func requestOf(r engine.Request) requestWire {
	out := requestWire{Drug: r.Drug, Variants: r.Variants, Diplotypes: r.Diplotypes, HLA: r.HLA, GenesTested: r.GenesTested,
		State: r.State, Ethnicity: r.Ethnicity, Indication: r.Indication, OutsideCalls: r.OutsideCalls, DiplotypeCaveats: r.DiplotypeCaveats}
	if len(r.Zygosity) > 0 {
		out.Zygosity = make(map[string]string, len(r.Zygosity))
		for k, z := range r.Zygosity {
			out.Zygosity[k] = string(z)
		}
	}
	out.Calls = mapList(r.Calls, func(c engine.PositionCall) positionCallWire {
		return positionCallWire{Chrom: c.Chrom, Pos: c.Pos, Ref: c.Ref, Alt: c.Alt, Genotype: c.Genotype}
	})
	out.IndicationCodes = mapList(r.IndicationCodes, func(c engine.Coding) codingWire {
		return codingWire{System: c.System, Code: c.Code, Display: c.Display}
	})
	if p := r.Patient; p != nil {
		out.Patient = &patientWire{Sex: p.Sex, AgeYears: p.AgeYears, MonthsOnDrug: p.MonthsOnDrug}
	}
	return out
}

// --- check (POST /pgx/check) ---

// checkRecord is the audit record of a check: the request and the answer
// exactly as released (the surface's wire form).
type checkRecord[W any] struct {
	request requestWire
	answer  W
}

func (r checkRecord[W]) payloads() (any, any) { return r.request, r.answer }

func newCheckRecord[W any](req engine.Request, answer W) checkRecord[W] {
	return checkRecord[W]{request: requestOf(req), answer: answer}
}

// --- check-many (POST /pgx/batch) ---

// medicationListWire is the request of a check-many record.
type medicationListWire struct {
	Drugs   []string    `json:"drugs"`
	Patient requestWire `json:"patient"`
}

// checkManyRecord is the audit record of a medication list: the list and
// the answer given for it.
type checkManyRecord[A any] struct {
	list   medicationListWire
	answer A
}

func (r checkManyRecord[A]) payloads() (any, any) { return r.list, r.answer }

func newCheckManyRecord[A any](in MedicationList, answer A) checkManyRecord[A] {
	return checkManyRecord[A]{list: medicationListWire{Drugs: in.Drugs, Patient: requestOf(in.Patient)}, answer: answer}
}

// --- classify and demo (POST /classifier_v2/*) ---

type classifyRequestWire struct {
	Gene          string `json:"gene"`
	ProteinChange string `json:"protein_change,omitempty"`
	Variant       string `json:"variant,omitempty"`
}

func classifyRequestOf(r classify.Request) classifyRequestWire {
	return classifyRequestWire{Gene: r.Gene, ProteinChange: r.ProteinChange, Variant: r.Variant}
}

// classifyRecord is the audit record of a classification: the request
// and the answer in the form the adapter releases.
type classifyRecord[W any] struct {
	request classifyRequestWire
	answer  W
}

func (r classifyRecord[W]) payloads() (any, any) { return r.request, r.answer }

func newClassifyRecord[W any](req classify.Request, answer W) classifyRecord[W] {
	return classifyRecord[W]{request: classifyRequestOf(req), answer: answer}
}

// demoRequestWire is the request of a demonstration case.
type demoRequestWire struct {
	CaseName string              `json:"case_name"`
	Request  classifyRequestWire `json:"request"`
}

// demoRecord is the audit record of a demonstration case: the case's
// request and the answer in the form the adapter releases.
type demoRecord[W any] struct {
	request demoRequestWire
	answer  W
}

func (r demoRecord[W]) payloads() (any, any) { return r.request, r.answer }

func newDemoRecord[W any](caseName string, req classify.Request, answer W) demoRecord[W] {
	return demoRecord[W]{request: demoRequestWire{CaseName: caseName, Request: classifyRequestOf(req)}, answer: answer}
}

// --- CDS hook (POST /cds-services/{id}) ---

type hookRequestWire struct {
	Hook         string                  `json:"hook"`
	HookInstance string                  `json:"hookInstance"`
	Service      string                  `json:"service"`
	FHIRServer   string                  `json:"fhirServer,omitempty"`
	PatientID    string                  `json:"patientId"`
	EncounterID  string                  `json:"encounterId,omitempty"`
	UserID       string                  `json:"userId"`
	Selections   []string                `json:"selections,omitempty"`
	Data         map[string]hookDataWire `json:"data"`
	Evaluations  []hookEvaluationWire    `json:"evaluations"`
	Issues       []inputIssueWire        `json:"issues,omitempty"`
	ShownCards   []string                `json:"shown_cards,omitempty"`
	Suppressed   []string                `json:"suppressed_cards,omitempty"`
}

type hookDataWire struct {
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
}

type hookEvaluationWire struct {
	Order   string      `json:"order"`
	Drug    string      `json:"drug"`
	Via     string      `json:"via"`
	Request requestWire `json:"request"`
	Error   string      `json:"error,omitempty"`
}

type inputIssueWire struct {
	Ref          string `json:"ref"`
	ResourceType string `json:"resource_type,omitempty"`
	Severity     string `json:"severity"`
	Message      string `json:"message"`
	Genomic      bool   `json:"genomic,omitempty"`
}

func inputIssueOf(i InputIssue) inputIssueWire {
	return inputIssueWire(i)
}

// hookRecord is the audit record of a hook call: the request record and
// the response (the cards) exactly as sent.
type hookRecord = requestResponse[hookRequestWire, json.RawMessage]

func newHookRecord(rec HookRecord, cards json.RawMessage) hookRecord {
	req := hookRequestWire{Hook: rec.Hook, HookInstance: rec.HookInstance, Service: rec.Service, FHIRServer: rec.FHIRServer,
		PatientID: rec.PatientID, EncounterID: rec.EncounterID, UserID: rec.UserID, Selections: rec.Selections,
		Issues: mapList(rec.Issues, inputIssueOf), ShownCards: rec.ShownCards, Suppressed: rec.Suppressed}
	if rec.Data != nil {
		req.Data = make(map[string]hookDataWire, len(rec.Data))
		for k, d := range rec.Data {
			req.Data[k] = hookDataWire(d)
		}
	}
	req.Evaluations = make([]hookEvaluationWire, len(rec.Evaluations))
	for i, ev := range rec.Evaluations {
		req.Evaluations[i] = hookEvaluationWire{Order: ev.Order, Drug: ev.Drug, Via: ev.Via, Request: requestOf(ev.Request), Error: ev.Error}
	}
	return hookRecord{request: req, response: cards}
}

// --- CDS feedback (POST /cds-services/{id}/feedback) ---

type feedbackRequestWire struct {
	Service  string            `json:"service"`
	Feedback []json.RawMessage `json:"feedback"`
	Keys     []string          `json:"keys"`
}

type feedbackResponseWire struct {
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
}

// feedbackRecord is the audit record of a feedback post.
type feedbackRecord = requestResponse[feedbackRequestWire, feedbackResponseWire]

func newFeedbackRecord(rec FeedbackRecord, o FeedbackOutcome) feedbackRecord {
	return feedbackRecord{
		request:  feedbackRequestWire(rec),
		response: feedbackResponseWire(o),
	}
}

// --- SMART review (one view of the review page), version 2 ---

type reviewRequestWire struct {
	// RecordVersion is recordVersions[kindSMARTReview].
	RecordVersion int              `json:"record_version"`
	Record        reviewRecordWire `json:"record"`
	Genotype      requestWire      `json:"genotype"`
	Checks        []requestWire    `json:"checks"`
}

type reviewRecordWire struct {
	Launch         string                 `json:"launch"`
	FHIRServer     string                 `json:"fhir_server"`
	Patient        string                 `json:"patient"`
	Encounter      string                 `json:"encounter,omitempty"`
	Scope          string                 `json:"scope,omitempty"`
	AppContext     string                 `json:"app_context,omitempty"`
	CardDrug       string                 `json:"card_drug,omitempty"`
	PatientState   string                 `json:"patient_state,omitempty"`
	GenomicResults []reviewResultWire     `json:"genomic_results"`
	Medications    []reviewMedicationWire `json:"medications"`
	Issues         []inputIssueWire       `json:"issues,omitempty"`
}

type reviewResultWire struct {
	Ref       string `json:"ref"`
	Kind      string `json:"kind"`
	Gene      string `json:"gene,omitempty"`
	Value     string `json:"value,omitempty"`
	Status    string `json:"status,omitempty"`
	Effective string `json:"effective,omitempty"`
	Issued    string `json:"issued,omitempty"`
	Performer string `json:"performer,omitempty"`
	Used      bool   `json:"used"`
	Note      string `json:"note,omitempty"`
}

type reviewMedicationWire struct {
	Ref        string   `json:"ref,omitempty"`
	Label      string   `json:"label,omitempty"`
	Drugs      []string `json:"drugs,omitempty"`
	Identified bool     `json:"identified"`
}

type reviewAnswerWire struct {
	Genotype         []genotypeCallWire `json:"genotype"`
	GenotypeWarnings []string           `json:"genotype_warnings,omitempty"`
	GenotypeError    string             `json:"genotype_error,omitempty"`
	Results          []reviewCheckWire  `json:"results"`
}

type reviewCheckWire struct {
	Result *resultWire `json:"result,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// reviewRecord is the audit record of a review view.
type reviewRecord = requestResponse[reviewRequestWire, reviewAnswerWire]

func newReviewRecord(in ReviewInput, ans ReviewAnswer) reviewRecord {
	rec := in.Record
	req := reviewRequestWire{
		RecordVersion: recordVersions[kindSMARTReview],
		Record: reviewRecordWire{Launch: rec.Launch, FHIRServer: rec.FHIRServer, Patient: rec.Patient, Encounter: rec.Encounter,
			Scope: rec.Scope, AppContext: rec.AppContext, CardDrug: rec.CardDrug, PatientState: rec.PatientState,
			GenomicResults: mapList(rec.GenomicResults, func(r ReviewResult) reviewResultWire {
				return reviewResultWire(r)
			}),
			Medications: mapList(rec.Medications, func(m ReviewMedication) reviewMedicationWire {
				return reviewMedicationWire(m)
			}),
			Issues: mapList(rec.Issues, inputIssueOf)},
		Genotype: requestOf(in.Genotype),
		Checks:   mapList(in.Checks, requestOf),
	}
	res := reviewAnswerWire{Genotype: mapList(ans.Genotype, genotypeCallOf), GenotypeWarnings: ans.GenotypeWarnings,
		GenotypeError: ans.GenotypeError}
	res.Results = mapList(ans.Results, func(c ReviewCheck) reviewCheckWire {
		out := reviewCheckWire{Error: c.Error}
		if c.Result != nil {
			r := resultOf(c.Result)
			out.Result = &r
		}
		return out
	})
	return reviewRecord{request: req, response: res}
}

// resultWire is the audit form of an engine.Result (in the SMART review
// record): the REST answer's field names, with the alerts' ids and the
// citations' typed targets.
type resultWire struct {
	Confidence           string               `json:"confidence"`
	DataCompleteness     dataCompletenessWire `json:"data_completeness"`
	SourceCitations      []citationWire       `json:"source_citations"`
	Drug                 string               `json:"drug"`
	DrugNormalised       string               `json:"drug_normalised"`
	DrugRecognised       bool                 `json:"drug_recognised"`
	DidYouMean           []string             `json:"did_you_mean,omitempty"`
	DrugReading          *drugReadingWire     `json:"drug_reading,omitempty"`
	Sensitivity          string               `json:"sensitivity"`
	OverallSeverity      string               `json:"overall_severity"`
	Alerts               []alertWire          `json:"alerts"`
	SaferAlternatives    []alternativeWire    `json:"safer_alternatives"`
	IndianContext        indianContextWire    `json:"indian_context"`
	Genotype             []genotypeCallWire   `json:"genotype"`
	UnrecognisedVariants []string             `json:"unrecognised_variants"`
	Warnings             []string             `json:"warnings"`
	GroundingContract    string               `json:"grounding_contract"`
	KnowledgeVersion     string               `json:"knowledge_version"`
}

type dataCompletenessWire struct {
	GenotypeProvided   bool `json:"genotype_provided"`
	StateProvided      bool `json:"state_provided"`
	EthnicityProvided  bool `json:"ethnicity_provided"`
	IndicationProvided bool `json:"indication_provided"`
	FieldsPopulated    int  `json:"fields_populated"`
	FieldsTotal        int  `json:"fields_total"`
}

type citationWire struct {
	Target        citationTargetWire `json:"target"`
	Source        string             `json:"source"`
	EvidenceLevel string             `json:"evidence_level,omitempty"`
	URL           string             `json:"url"`
}

// citationTargetWire names the part of the result a citation supports:
// Kind is one of citationKinds; Alert is set for the alert kinds, Index
// for the list kinds.
type citationTargetWire struct {
	Kind  string `json:"kind"`
	Alert string `json:"alert,omitempty"`
	Index *int   `json:"index,omitempty"`
}

// citationKinds are the recorded names of the citation kinds.
var citationKinds = map[engine.CitationKind]string{
	engine.CitesAlert:                "alert",
	engine.CitesAlertFrequencyIndia:  "alert.af_india",
	engine.CitesAlertFrequencyGlobal: "alert.af_global",
	engine.CitesAlternative:          "safer_alternative",
	engine.CitesEndemicRisk:          "endemic_risk",
	engine.CitesPopulationFrequency:  "population_frequency",
	engine.CitesCommunityNote:        "community_note",
	engine.CitesTraditionalMedicine:  "traditional_medicine",
}

func citationOf(c engine.Citation) citationWire {
	kind, ok := citationKinds[c.Target.Kind]
	if !ok {
		kind = fmt.Sprintf("unknown(%d)", int(c.Target.Kind))
	}
	t := citationTargetWire{Kind: kind}
	switch c.Target.Kind {
	case engine.CitesAlert, engine.CitesAlertFrequencyIndia, engine.CitesAlertFrequencyGlobal:
		t.Alert = c.Target.Alert
	default:
		i := c.Target.Index
		t.Index = &i
	}
	return citationWire{Target: t, Source: c.Source, EvidenceLevel: c.EvidenceLevel, URL: c.URL}
}

type drugReadingWire struct {
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

type genotypeCallWire struct {
	Gene          string `json:"gene"`
	Diplotype     string `json:"diplotype"`
	Phenotype     string `json:"phenotype"`
	ActivityScore string `json:"activity_score"`
}

func genotypeCallOf(g engine.GenotypeCall) genotypeCallWire {
	return genotypeCallWire{Gene: g.Gene, Diplotype: g.Diplotype, Phenotype: g.Phenotype, ActivityScore: g.ActivityScore}
}

type guidelineWire struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type alertWire struct {
	ID              string             `json:"id"`
	Drug            string             `json:"drug,omitempty"`
	Severity        string             `json:"severity"`
	SeverityScore   int                `json:"severity_score"`
	Variant         string             `json:"variant,omitempty"`
	Gene            string             `json:"gene,omitempty"`
	StarAllele      string             `json:"star_allele,omitempty"`
	AFIndia         *float64           `json:"af_india,omitempty"`
	AFGlobal        *float64           `json:"af_global,omitempty"`
	Category        string             `json:"category"`
	Message         string             `json:"message"`
	Action          string             `json:"action"`
	Alternatives    []string           `json:"alternatives"`
	TestRecommended bool               `json:"test_recommended"`
	Genotype        []genotypeCallWire `json:"genotype,omitempty"`
	Recommendation  string             `json:"recommendation,omitempty"`
	Implications    []string           `json:"implications,omitempty"`
	Classification  string             `json:"classification,omitempty"`
	EvidenceLevel   string             `json:"evidence_level,omitempty"`
	Population      string             `json:"population,omitempty"`
	Guideline       *guidelineWire     `json:"guideline,omitempty"`
	GuidanceSource  string             `json:"guidance_source,omitempty"`
	Assumptions     []string           `json:"assumptions"`
}

func alertOf(a engine.Alert) alertWire {
	out := alertWire{ID: a.ID, Drug: a.Drug,
		Severity:      auditSeverityName(a.Severity),
		SeverityScore: int(a.Severity), Variant: a.Variant, Gene: a.Gene, StarAllele: a.StarAllele,
		AFIndia: a.AFIndia, AFGlobal: a.AFGlobal, Category: auditCategoryName(a.Category), Message: a.Message, Action: a.Action,
		Alternatives: a.Alternatives, TestRecommended: a.TestRecommended, Genotype: mapList(a.Genotype, genotypeCallOf),
		Recommendation: a.Recommendation, Implications: a.Implications, Classification: a.Classification,
		EvidenceLevel: a.EvidenceLevel, Population: a.Population, GuidanceSource: a.GuidanceSource, Assumptions: a.Assumptions}
	if a.Guideline != nil {
		out.Guideline = &guidelineWire{Name: a.Guideline.Name, URL: a.Guideline.URL}
	}
	return out
}

type alternativeWire struct {
	Name      string `json:"name"`
	Rationale string `json:"rationale"`
}

type endemicRiskWire struct {
	Risk    string   `json:"risk"`
	Disease string   `json:"disease"`
	Drugs   []string `json:"drugs,omitempty"`
	Note    string   `json:"note,omitempty"`
}

type populationFrequencyWire struct {
	Variant      string   `json:"variant"`
	Gene         string   `json:"gene"`
	Allele       string   `json:"allele"`
	AFIndia      *float64 `json:"af_india,omitempty"`
	AFIndiaBasis string   `json:"af_india_basis,omitempty"`
	AFGlobal     *float64 `json:"af_global,omitempty"`
}

type communityNoteWire struct {
	Community string `json:"community"`
	Trait     string `json:"trait"`
	Finding   string `json:"finding"`
}

type herbNoteWire struct {
	Herb      string `json:"herb"`
	Botanical string `json:"botanical"`
	Mechanism string `json:"mechanism,omitempty"`
	Effect    string `json:"effect,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
}

type indianContextWire struct {
	State                 string                    `json:"state,omitempty"`
	StateRecognised       *bool                     `json:"state_recognised,omitempty"`
	StateNormalised       string                    `json:"state_normalised,omitempty"`
	EndemicRisks          []endemicRiskWire         `json:"endemic_risks"`
	PopulationFrequencies []populationFrequencyWire `json:"population_frequencies"`
	Ethnicity             string                    `json:"ethnicity,omitempty"`
	EthnicityRecognised   *bool                     `json:"ethnicity_recognised,omitempty"`
	CommunityNotes        []communityNoteWire       `json:"community_notes"`
	TraditionalMedicine   []herbNoteWire            `json:"traditional_medicine"`
}

func indianContextOf(c engine.IndianContext) indianContextWire {
	return indianContextWire{
		State: c.State, StateRecognised: c.StateRecognised, StateNormalised: c.StateNormalised,
		EndemicRisks: mapList(c.EndemicRisks, func(r engine.EndemicRisk) endemicRiskWire {
			return endemicRiskWire{Risk: r.Risk, Disease: r.Disease, Drugs: r.Drugs, Note: r.Note}
		}),
		PopulationFrequencies: mapList(c.PopulationFrequencies, func(p engine.PopulationFrequency) populationFrequencyWire {
			return populationFrequencyWire{Variant: p.Variant, Gene: p.Gene, Allele: p.Allele, AFIndia: p.AFIndia,
				AFIndiaBasis: p.AFIndiaBasis, AFGlobal: p.AFGlobal}
		}),
		Ethnicity: c.Ethnicity, EthnicityRecognised: c.EthnicityRecognised,
		CommunityNotes: mapList(c.CommunityNotes, func(n engine.CommunityNote) communityNoteWire {
			return communityNoteWire{Community: n.Community, Trait: n.Trait, Finding: n.Finding}
		}),
		TraditionalMedicine: mapList(c.TraditionalMedicine, func(h engine.HerbNote) herbNoteWire {
			return herbNoteWire{Herb: h.Herb, Botanical: h.Botanical, Mechanism: h.Mechanism, Effect: h.Effect, Evidence: h.Evidence}
		}),
	}
}

func resultOf(r *engine.Result) resultWire {
	out := resultWire{
		Confidence: r.Confidence,
		DataCompleteness: dataCompletenessWire{GenotypeProvided: r.DataCompleteness.GenotypeProvided,
			StateProvided: r.DataCompleteness.StateProvided, EthnicityProvided: r.DataCompleteness.EthnicityProvided,
			IndicationProvided: r.DataCompleteness.IndicationProvided, FieldsPopulated: r.DataCompleteness.FieldsPopulated,
			FieldsTotal: r.DataCompleteness.FieldsTotal},
		SourceCitations: mapList(r.SourceCitations, citationOf),
		Drug:            r.Drug, DrugNormalised: r.DrugNormalised, DrugRecognised: r.DrugRecognised, DidYouMean: r.DidYouMean,
		Sensitivity:     r.Sensitivity,
		OverallSeverity: auditSeverityName(r.OverallSeverity),
		Alerts:          mapList(r.Alerts, alertOf),
		SaferAlternatives: mapList(r.SaferAlternatives, func(a engine.Alternative) alternativeWire {
			return alternativeWire{Name: a.Name, Rationale: a.Rationale}
		}),
		IndianContext:        indianContextOf(r.IndianContext),
		Genotype:             mapList(r.Genotype, genotypeCallOf),
		UnrecognisedVariants: r.UnrecognisedVariants,
		Warnings:             r.Warnings,
		GroundingContract:    r.GroundingContract,
		KnowledgeVersion:     r.KnowledgeVersion,
	}
	if d := r.DrugReading; d != nil {
		out.DrugReading = &drugReadingWire{Input: d.Input, Status: d.Status, Via: d.Via, Matched: d.Matched, Drugs: d.Drugs,
			Ingredients: d.Ingredients, Unrecognised: d.Unrecognised, Ignored: d.Ignored, Notes: d.Notes, DidYouMean: d.DidYouMean}
	}
	return out
}

// --- lab CSV batch (POST /pgx/batch_csv): one entry per chunk, one closing ---

// chunkRequest is the request payload of a chunk entry.
type chunkRequest struct {
	Kind  string     `json:"kind"`
	Chunk int        `json:"chunk"`
	Rows  []chunkRow `json:"rows"`
}

type chunkRow struct {
	Row   int           `json:"row"`
	Line  int           `json:"line"`
	Input *rowInputWire `json:"input,omitempty"`
}

type rowInputWire struct {
	Drug       string `json:"drug"`
	Variants   string `json:"variants"`
	State      string `json:"state"`
	Ethnicity  string `json:"ethnicity"`
	Indication string `json:"indication"`
	PatientRef string `json:"patient_ref"`
}

// chunkResponse is the response payload of a chunk entry.
type chunkResponse struct {
	Rows []chunkOutcome `json:"rows"`
}

type chunkOutcome struct {
	Row          int    `json:"row"`
	OK           bool   `json:"ok"`
	ResultDigest string `json:"result_digest,omitempty"`
	// OverallSeverity is the severity's wire name ("HIGH").
	OverallSeverity string        `json:"overall_severity,omitempty"`
	Error           *rowErrorWire `json:"error,omitempty"`
}

type rowErrorWire struct {
	Code   string `json:"code"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// chunkRecord is the audit record of one chunk.
type chunkRecord = requestResponse[chunkRequest, chunkResponse]

func newChunkRecord(c *labcsv.Chunk) chunkRecord {
	rows := make([]chunkRow, len(c.Rows))
	outcomes := make([]chunkOutcome, len(c.Rows))
	for i := range c.Rows {
		row := &c.Rows[i]
		rows[i] = chunkRow{Row: row.Row, Line: row.Line}
		if in := row.Input; in != nil {
			rows[i].Input = &rowInputWire{Drug: in.Drug, Variants: in.Variants, State: in.State, Ethnicity: in.Ethnicity,
				Indication: in.Indication, PatientRef: in.PatientRef}
		}
		outcomes[i] = chunkOutcome{Row: row.Row, OK: row.OK, ResultDigest: row.ResultDigest}
		if row.OK {
			outcomes[i].OverallSeverity = auditSeverityName(row.OverallSeverity)
		}
		if e := row.Error; e != nil {
			outcomes[i].Error = &rowErrorWire{Code: e.Code, Field: e.Field, Detail: e.Detail}
		}
	}
	return chunkRecord{
		request:  chunkRequest{Kind: "batch_csv.chunk", Chunk: c.Index, Rows: rows},
		response: chunkResponse{Rows: outcomes},
	}
}

// closingRequest is the request payload of the closing entry.
type closingRequest struct {
	Kind       string `json:"kind"`
	FileName   string `json:"file_name,omitempty"`
	FileBytes  int64  `json:"file_bytes"`
	FileSHA256 string `json:"file_sha256"`
	Format     string `json:"format"`
}

// closingResponse is the response payload of the closing entry.
type closingResponse struct {
	Outcome       string   `json:"outcome"`
	Reason        string   `json:"reason,omitempty"`
	RowsTotal     int      `json:"rows_total"`
	RowsSucceeded int      `json:"rows_succeeded"`
	RowsFailed    int      `json:"rows_failed"`
	RowsReleased  int      `json:"rows_released"`
	ChunkEntries  []string `json:"chunk_entries"`
}

// closingRecord is the audit record that closes a batch.
type closingRecord = requestResponse[closingRequest, closingResponse]

func newClosingRecord(file CSVFile, st labcsv.Stats, released int, chunkIDs []string, outcome, reason string) closingRecord {
	if chunkIDs == nil {
		chunkIDs = []string{}
	}
	return closingRecord{
		request: closingRequest{Kind: "batch_csv", FileName: file.Name, FileBytes: file.Bytes,
			FileSHA256: file.SHA256, Format: file.Format},
		response: closingResponse{Outcome: outcome, Reason: reason, RowsTotal: st.Rows, RowsSucceeded: st.Succeeded,
			RowsFailed: st.Failed, RowsReleased: released, ChunkEntries: chunkIDs},
	}
}

// --- VCF (POST /pgx/vcf): one entry per group of samples, one closing ---

// vcfChunkRequest is the request payload of a chunk entry.
type vcfChunkRequest struct {
	Kind    string           `json:"kind"`
	Chunk   int              `json:"chunk"`
	Samples []vcfChunkSample `json:"samples"`
}

type vcfChunkSample struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// vcfChunkResponse is the response payload of a chunk entry.
type vcfChunkResponse struct {
	Samples []vcfChunkOutcome `json:"samples"`
}

type vcfChunkOutcome struct {
	Index          int    `json:"index"`
	ResultDigest   string `json:"result_digest"`
	GenesCalled    int    `json:"genes_called"`
	GenesForReview int    `json:"genes_for_review"`
	// Checks are the drugs checked with each one's overall severity.
	Checks []vcfCheckWire `json:"checks,omitempty"`
}

type vcfCheckWire struct {
	Drug string `json:"drug"`
	// OverallSeverity is the severity's wire name ("HIGH").
	OverallSeverity string `json:"overall_severity,omitempty"`
	Error           string `json:"error,omitempty"`
}

// vcfChunkRecord is the audit record of one group of samples.
type vcfChunkRecord = requestResponse[vcfChunkRequest, vcfChunkResponse]

func newVCFChunkRecord(c *vcfcall.Chunk) vcfChunkRecord {
	rec := vcfChunkRecord{
		request:  vcfChunkRequest{Kind: "vcf.chunk", Chunk: c.Index, Samples: make([]vcfChunkSample, len(c.Samples))},
		response: vcfChunkResponse{Samples: make([]vcfChunkOutcome, len(c.Samples))},
	}
	for i, s := range c.Samples {
		rec.request.Samples[i] = vcfChunkSample{Index: s.Index, Name: s.Name}
		rec.response.Samples[i] = vcfChunkOutcome{Index: s.Index, ResultDigest: s.ResultDigest,
			GenesCalled: s.GenesCalled, GenesForReview: s.GenesForReview,
			Checks: mapList(s.Checks, func(c vcfcall.CheckOutcome) vcfCheckWire {
				w := vcfCheckWire{Drug: c.Drug, Error: c.Error}
				if c.Error == "" {
					w.OverallSeverity = auditSeverityName(c.OverallSeverity)
				}
				return w
			})}
	}
	return rec
}

// vcfClosingRequest is the request payload of the closing entry.
type vcfClosingRequest struct {
	Kind       string   `json:"kind"`
	FileName   string   `json:"file_name,omitempty"`
	FileBytes  int64    `json:"file_bytes"`
	FileSHA256 string   `json:"file_sha256"`
	Format     string   `json:"format"`
	Samples    []string `json:"samples,omitempty"`
	Drugs      []string `json:"drugs,omitempty"`
	// OutsideCalls name the caller outputs merged with the file.
	OutsideCalls []outsideCallFileWire `json:"outside_calls,omitempty"`
}

type outsideCallFileWire struct {
	Name   string `json:"name,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Format string `json:"format"`
	Calls  int    `json:"calls"`
}

// vcfClosingResponse is the response payload of the closing entry.
type vcfClosingResponse struct {
	Outcome         string   `json:"outcome"`
	Reason          string   `json:"reason,omitempty"`
	SamplesInFile   int      `json:"samples_in_file"`
	SamplesAnswered int      `json:"samples_answered"`
	SamplesReleased int      `json:"samples_released"`
	Records         int      `json:"records"`
	RecordsUsed     int      `json:"records_used"`
	ChunkEntries    []string `json:"chunk_entries"`
}

// vcfClosingRecord is the audit record that closes a VCF answer.
type vcfClosingRecord = requestResponse[vcfClosingRequest, vcfClosingResponse]

func newVCFClosingRecord(file VCFFile, st vcfcall.Stats, released int, chunkIDs []string, outcome, reason string) vcfClosingRecord {
	if chunkIDs == nil {
		chunkIDs = []string{}
	}
	return vcfClosingRecord{
		request: vcfClosingRequest{Kind: "vcf", FileName: file.Name, FileBytes: file.Bytes, FileSHA256: file.SHA256,
			Format: file.Format, Samples: file.Samples, Drugs: file.Drugs,
			OutsideCalls: mapList(file.OutsideCalls, func(f OutsideCallFile) outsideCallFileWire { return outsideCallFileWire(f) })},
		response: vcfClosingResponse{Outcome: outcome, Reason: reason, SamplesInFile: st.SamplesInFile,
			SamplesAnswered: st.Samples, SamplesReleased: released, Records: st.Records, RecordsUsed: st.RecordsUsed,
			ChunkEntries: chunkIDs},
	}
}
