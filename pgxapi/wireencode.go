package pgxapi

// This file encodes the wire form of an answer (Result and the types it
// holds) without reflection. Every appender writes exactly the bytes
// encoding/json writes for the same value: the fields in declaration
// order, under their json tags, omitempty as encoding/json applies it,
// nil slices without omitempty as null, strings escaped as encoding/json
// escapes them and float64 in its ES6 form. FuzzResultJSONMatchesEncodingJSON
// and TestResultJSONMatchesEncodingJSONOnGoldens prove it; a field added
// to one of these types must be added here too (the fuzz filler sets
// every field by reflection and fails on one it does not know).

import (
	"errors"
	"math"
	"strconv"

	"github.com/pgxsafety/pgxsafety/engine/service"
)

// The service encodes an answer with AppendJSON.
var _ service.JSONAppender = (*Result)(nil)

// errUnsupportedFloat reports a NaN or an infinity, which JSON cannot
// hold (encoding/json fails on them too).
var errUnsupportedFloat = errors.New("pgxapi: NaN or infinite number in the answer")

// AppendJSON appends r encoded as JSON, without a trailing newline: with
// escapeHTML the bytes json.Marshal returns, without it the bytes an
// Encoder with SetEscapeHTML(false) writes (less its newline). It fails,
// appending nothing, where encoding/json fails: on a NaN or infinite
// frequency.
func (r *Result) AppendJSON(dst []byte, escapeHTML bool) ([]byte, error) {
	if !r.finite() {
		return dst, errUnsupportedFloat
	}
	return r.appendJSON(dst, escapeHTML), nil
}

// finite reports whether every float64 of r is finite.
func (r *Result) finite() bool {
	ok := func(f *float64) bool { return f == nil || !(math.IsNaN(*f) || math.IsInf(*f, 0)) }
	for i := range r.Alerts {
		if !ok(r.Alerts[i].AFIndia) || !ok(r.Alerts[i].AFGlobal) {
			return false
		}
	}
	for i := range r.IndianContext.PopulationFrequencies {
		p := &r.IndianContext.PopulationFrequencies[i]
		if !ok(p.AFIndia) || !ok(p.AFGlobal) {
			return false
		}
	}
	return true
}

// appendJSON appends r as encoding/json encodes it; its floats must be
// finite (AppendJSON checks).
func (r *Result) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"confidence":`...)
	dst = appendJSONStringHTML(dst, r.Confidence, escapeHTML)
	dst = append(dst, `,"data_completeness":`...)
	dst = r.DataCompleteness.appendJSON(dst)
	dst = append(dst, `,"source_citations":`...)
	dst = appendJSONSlice(dst, r.SourceCitations, escapeHTML, (*Citation).appendJSON)
	dst = append(dst, `,"drug":`...)
	dst = appendJSONStringHTML(dst, r.Drug, escapeHTML)
	dst = append(dst, `,"drug_normalised":`...)
	dst = appendJSONStringHTML(dst, r.DrugNormalised, escapeHTML)
	dst = append(dst, `,"drug_recognised":`...)
	dst = strconv.AppendBool(dst, r.DrugRecognised)
	if len(r.DidYouMean) > 0 {
		dst = append(dst, `,"did_you_mean":`...)
		dst = appendJSONStrings(dst, r.DidYouMean, escapeHTML)
	}
	if r.DrugReading != nil {
		dst = append(dst, `,"drug_reading":`...)
		dst = r.DrugReading.appendJSON(dst, escapeHTML)
	}
	dst = append(dst, `,"sensitivity":`...)
	dst = appendJSONStringHTML(dst, r.Sensitivity, escapeHTML)
	dst = append(dst, `,"overall_severity":`...)
	dst = appendJSONStringHTML(dst, r.OverallSeverity, escapeHTML)
	dst = append(dst, `,"alerts":`...)
	dst = appendJSONSlice(dst, r.Alerts, escapeHTML, (*Alert).appendJSON)
	dst = append(dst, `,"safer_alternatives":`...)
	dst = appendJSONSlice(dst, r.SaferAlternatives, escapeHTML, (*Alternative).appendJSON)
	dst = append(dst, `,"indian_context":`...)
	dst = r.IndianContext.appendJSON(dst, escapeHTML)
	dst = append(dst, `,"genotype":`...)
	dst = appendJSONSlice(dst, r.Genotype, escapeHTML, (*GenotypeCall).appendJSON)
	dst = append(dst, `,"unrecognised_variants":`...)
	dst = appendJSONStrings(dst, r.UnrecognisedVariants, escapeHTML)
	dst = append(dst, `,"warnings":`...)
	dst = appendJSONStrings(dst, r.Warnings, escapeHTML)
	if len(r.Evidence) > 0 {
		dst = append(dst, `,"evidence":`...)
		dst = appendJSONSlice(dst, r.Evidence, escapeHTML, (*EvidenceItem).appendJSON)
	}
	dst = append(dst, `,"grounding_contract":`...)
	dst = appendJSONStringHTML(dst, r.GroundingContract, escapeHTML)
	dst = append(dst, `,"knowledge_version":`...)
	dst = appendJSONStringHTML(dst, r.KnowledgeVersion, escapeHTML)
	return append(dst, '}')
}

func (d *DataCompleteness) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"genotype_provided":`...)
	dst = strconv.AppendBool(dst, d.GenotypeProvided)
	dst = append(dst, `,"state_provided":`...)
	dst = strconv.AppendBool(dst, d.StateProvided)
	dst = append(dst, `,"ethnicity_provided":`...)
	dst = strconv.AppendBool(dst, d.EthnicityProvided)
	dst = append(dst, `,"indication_provided":`...)
	dst = strconv.AppendBool(dst, d.IndicationProvided)
	dst = append(dst, `,"fields_populated":`...)
	dst = strconv.AppendInt(dst, int64(d.FieldsPopulated), 10)
	dst = append(dst, `,"fields_total":`...)
	dst = strconv.AppendInt(dst, int64(d.FieldsTotal), 10)
	return append(dst, '}')
}

func (c *Citation) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"field":`...)
	dst = appendJSONStringHTML(dst, c.Field, escapeHTML)
	dst = append(dst, `,"source":`...)
	dst = appendJSONStringHTML(dst, c.Source, escapeHTML)
	if c.EvidenceLevel != "" {
		dst = append(dst, `,"evidence_level":`...)
		dst = appendJSONStringHTML(dst, c.EvidenceLevel, escapeHTML)
	}
	dst = append(dst, `,"url":`...)
	dst = appendJSONStringHTML(dst, c.URL, escapeHTML)
	return append(dst, '}')
}

func (d *DrugReading) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"input":`...)
	dst = appendJSONStringHTML(dst, d.Input, escapeHTML)
	dst = append(dst, `,"status":`...)
	dst = appendJSONStringHTML(dst, d.Status, escapeHTML)
	dst = appendOptionalString(dst, `,"via":`, d.Via, escapeHTML)
	dst = appendOptionalString(dst, `,"matched":`, d.Matched, escapeHTML)
	dst = append(dst, `,"drugs":`...)
	dst = appendJSONStrings(dst, d.Drugs, escapeHTML)
	dst = appendOptionalStrings(dst, `,"ingredients":`, d.Ingredients, escapeHTML)
	dst = appendOptionalStrings(dst, `,"unrecognised":`, d.Unrecognised, escapeHTML)
	dst = appendOptionalStrings(dst, `,"ignored":`, d.Ignored, escapeHTML)
	dst = appendOptionalStrings(dst, `,"notes":`, d.Notes, escapeHTML)
	dst = appendOptionalStrings(dst, `,"did_you_mean":`, d.DidYouMean, escapeHTML)
	return append(dst, '}')
}

func (a *Alert) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, '{')
	if a.Drug != "" {
		dst = append(dst, `"drug":`...)
		dst = appendJSONStringHTML(dst, a.Drug, escapeHTML)
		dst = append(dst, ',')
	}
	dst = append(dst, `"severity":`...)
	dst = appendJSONStringHTML(dst, a.Severity, escapeHTML)
	dst = append(dst, `,"severity_score":`...)
	dst = strconv.AppendInt(dst, int64(a.SeverityScore), 10)
	dst = appendOptionalString(dst, `,"variant":`, a.Variant, escapeHTML)
	dst = appendOptionalString(dst, `,"gene":`, a.Gene, escapeHTML)
	dst = appendOptionalString(dst, `,"star_allele":`, a.StarAllele, escapeHTML)
	dst = appendOptionalFloat(dst, `,"af_india":`, a.AFIndia)
	dst = appendOptionalFloat(dst, `,"af_global":`, a.AFGlobal)
	dst = append(dst, `,"category":`...)
	dst = appendJSONStringHTML(dst, a.Category, escapeHTML)
	dst = append(dst, `,"message":`...)
	dst = appendJSONStringHTML(dst, a.Message, escapeHTML)
	dst = append(dst, `,"action":`...)
	dst = appendJSONStringHTML(dst, a.Action, escapeHTML)
	dst = append(dst, `,"alternatives":`...)
	dst = appendJSONStrings(dst, a.Alternatives, escapeHTML)
	dst = append(dst, `,"test_recommended":`...)
	dst = strconv.AppendBool(dst, a.TestRecommended)
	if len(a.Genotype) > 0 {
		dst = append(dst, `,"genotype":`...)
		dst = appendJSONSlice(dst, a.Genotype, escapeHTML, (*GenotypeCall).appendJSON)
	}
	dst = appendOptionalString(dst, `,"recommendation":`, a.Recommendation, escapeHTML)
	dst = appendOptionalStrings(dst, `,"implications":`, a.Implications, escapeHTML)
	dst = appendOptionalString(dst, `,"classification":`, a.Classification, escapeHTML)
	dst = appendOptionalString(dst, `,"evidence_level":`, a.EvidenceLevel, escapeHTML)
	dst = appendOptionalString(dst, `,"population":`, a.Population, escapeHTML)
	if a.Guideline != nil {
		dst = append(dst, `,"guideline":{"name":`...)
		dst = appendJSONStringHTML(dst, a.Guideline.Name, escapeHTML)
		dst = appendOptionalString(dst, `,"url":`, a.Guideline.URL, escapeHTML)
		dst = append(dst, '}')
	}
	dst = appendOptionalString(dst, `,"guidance_source":`, a.GuidanceSource, escapeHTML)
	dst = append(dst, `,"assumptions":`...)
	dst = appendJSONStrings(dst, a.Assumptions, escapeHTML)
	return append(dst, '}')
}

func (g *GenotypeCall) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"gene":`...)
	dst = appendJSONStringHTML(dst, g.Gene, escapeHTML)
	dst = appendOptionalString(dst, `,"diplotype":`, g.Diplotype, escapeHTML)
	dst = appendOptionalString(dst, `,"phenotype":`, g.Phenotype, escapeHTML)
	dst = appendOptionalString(dst, `,"activity_score":`, g.ActivityScore, escapeHTML)
	dst = appendOptionalStrings(dst, `,"untested_alleles":`, g.UntestedAlleles, escapeHTML)
	return append(dst, '}')
}

func (e *EvidenceItem) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"field":`...)
	dst = appendJSONStringHTML(dst, e.Field, escapeHTML)
	dst = append(dst, `,"item":`...)
	dst = appendJSONStringHTML(dst, e.Item, escapeHTML)
	dst = append(dst, `,"state":`...)
	dst = appendJSONStringHTML(dst, e.State, escapeHTML)
	dst = appendOptionalStrings(dst, `,"genes":`, e.Genes, escapeHTML)
	dst = appendOptionalString(dst, `,"reason":`, e.Reason, escapeHTML)
	return append(dst, '}')
}

func (a *Alternative) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendJSONStringHTML(dst, a.Name, escapeHTML)
	dst = append(dst, `,"rationale":`...)
	dst = appendJSONStringHTML(dst, a.Rationale, escapeHTML)
	return append(dst, '}')
}

func (c *IndianContext) appendJSON(dst []byte, escapeHTML bool) []byte {
	// The first field is omitempty, so every field is written after a
	// comma and the first comma becomes the opening brace.
	start := len(dst)
	dst = appendOptionalString(dst, `,"state":`, c.State, escapeHTML)
	dst = appendOptionalBool(dst, `,"state_recognised":`, c.StateRecognised)
	dst = appendOptionalString(dst, `,"state_normalised":`, c.StateNormalised, escapeHTML)
	dst = append(dst, `,"endemic_risks":`...)
	dst = appendJSONSlice(dst, c.EndemicRisks, escapeHTML, (*EndemicRisk).appendJSON)
	dst = append(dst, `,"population_frequencies":`...)
	dst = appendJSONSlice(dst, c.PopulationFrequencies, escapeHTML, (*PopulationFrequency).appendJSON)
	dst = appendOptionalString(dst, `,"ethnicity":`, c.Ethnicity, escapeHTML)
	dst = appendOptionalBool(dst, `,"ethnicity_recognised":`, c.EthnicityRecognised)
	dst = append(dst, `,"community_notes":`...)
	dst = appendJSONSlice(dst, c.CommunityNotes, escapeHTML, (*CommunityNote).appendJSON)
	dst = append(dst, `,"traditional_medicine":`...)
	dst = appendJSONSlice(dst, c.TraditionalMedicine, escapeHTML, (*HerbNote).appendJSON)
	dst[start] = '{'
	return append(dst, '}')
}

func (e *EndemicRisk) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"risk":`...)
	dst = appendJSONStringHTML(dst, e.Risk, escapeHTML)
	dst = append(dst, `,"disease":`...)
	dst = appendJSONStringHTML(dst, e.Disease, escapeHTML)
	dst = appendOptionalStrings(dst, `,"drugs":`, e.Drugs, escapeHTML)
	dst = appendOptionalString(dst, `,"note":`, e.Note, escapeHTML)
	return append(dst, '}')
}

func (p *PopulationFrequency) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"variant":`...)
	dst = appendJSONStringHTML(dst, p.Variant, escapeHTML)
	dst = append(dst, `,"gene":`...)
	dst = appendJSONStringHTML(dst, p.Gene, escapeHTML)
	dst = append(dst, `,"allele":`...)
	dst = appendJSONStringHTML(dst, p.Allele, escapeHTML)
	dst = appendOptionalFloat(dst, `,"af_india":`, p.AFIndia)
	dst = appendOptionalString(dst, `,"af_india_basis":`, p.AFIndiaBasis, escapeHTML)
	dst = appendOptionalFloat(dst, `,"af_global":`, p.AFGlobal)
	return append(dst, '}')
}

func (n *CommunityNote) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"community":`...)
	dst = appendJSONStringHTML(dst, n.Community, escapeHTML)
	dst = append(dst, `,"trait":`...)
	dst = appendJSONStringHTML(dst, n.Trait, escapeHTML)
	dst = append(dst, `,"finding":`...)
	dst = appendJSONStringHTML(dst, n.Finding, escapeHTML)
	return append(dst, '}')
}

func (h *HerbNote) appendJSON(dst []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"herb":`...)
	dst = appendJSONStringHTML(dst, h.Herb, escapeHTML)
	dst = append(dst, `,"botanical":`...)
	dst = appendJSONStringHTML(dst, h.Botanical, escapeHTML)
	dst = appendOptionalString(dst, `,"mechanism":`, h.Mechanism, escapeHTML)
	dst = appendOptionalString(dst, `,"effect":`, h.Effect, escapeHTML)
	dst = appendOptionalString(dst, `,"evidence":`, h.Evidence, escapeHTML)
	return append(dst, '}')
}

// appendJSONSlice appends s as a JSON array of its elements encoded by
// elem; a nil slice is null, as encoding/json writes it.
func appendJSONSlice[T any](dst []byte, s []T, escapeHTML bool, elem func(*T, []byte, bool) []byte) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(&s[i], dst, escapeHTML)
	}
	return append(dst, ']')
}

// appendJSONStrings appends s as a JSON array of strings; nil is null.
func appendJSONStrings(dst []byte, s []string, escapeHTML bool) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONStringHTML(dst, v, escapeHTML)
	}
	return append(dst, ']')
}

// appendOptionalString appends key (",\"name\":") and s unless s is empty
// (omitempty).
func appendOptionalString(dst []byte, key, s string, escapeHTML bool) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendJSONStringHTML(dst, s, escapeHTML)
}

// appendOptionalStrings appends key and s unless s is empty (omitempty
// omits an empty slice as well as a nil one).
func appendOptionalStrings(dst []byte, key string, s []string, escapeHTML bool) []byte {
	if len(s) == 0 {
		return dst
	}
	dst = append(dst, key...)
	return appendJSONStrings(dst, s, escapeHTML)
}

// appendOptionalBool appends key and *b unless b is nil.
func appendOptionalBool(dst []byte, key string, b *bool) []byte {
	if b == nil {
		return dst
	}
	dst = append(dst, key...)
	return strconv.AppendBool(dst, *b)
}

// appendOptionalFloat appends key and *f unless f is nil.
func appendOptionalFloat(dst []byte, key string, f *float64) []byte {
	if f == nil {
		return dst
	}
	dst = append(dst, key...)
	return appendJSONFloat(dst, *f)
}

// appendJSONFloat appends a finite f as encoding/json encodes a float64:
// like ES6 number-to-string, 'f' format except below 1e-6 or from 1e21
// on, where it is 'e' with a one-digit negative exponent unpadded.
func appendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
