package fhir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// The Genomics Reporting IG 3.0.0 output (docs/fhir-output.md): one
// transaction Bundle per sample holding a Genomic Report, a Genotype per
// gene, Haplotypes where phase is known, a Therapeutic Implication per
// drug and gene finding, a Medication Recommendation where the guideline
// recommends an action, and a Provenance naming the audit entry and the
// knowledge version. It is built from the audited answer's JSON (the
// bytes whose digest is in the audit log), never from a second evaluation.

// IG profile canonicals and codes used by the report.
const (
	ProfileGenomicReport            = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/genomic-report"
	ProfileGenotype                 = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/genotype"
	ProfileHaplotype                = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/haplotype"
	ProfileTherapeuticImplication   = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/therapeutic-implication"
	ProfileMedicationRecommendation = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/medication-recommendation"
	extGenomicReportNote            = "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/genomic-report-note"
	extRelatedArtifact              = "http://hl7.org/fhir/StructureDefinition/workflow-relatedArtifact"
	systemObsCategory               = "http://terminology.hl7.org/CodeSystem/observation-category"
	systemPharmGKBLevel             = "http://hl7.org/fhir/uv/genomics-reporting/CodeSystem/pharmgkb-evidence-level-custom-cs"
	loincGeneticReport              = "51969-4" // Genetic analysis report
	loincEvidenceLevel              = "93044-6" // Level of evidence
	tbdConclusion                   = "conclusion-string"
)

// The Genotype caveat codes (docs/fhir-output.md): a component coded in
// SystemCaveat carries, as valueString, one thing the result says beside
// its value, so a reader (ReadGenomics) takes it with the value and never
// reads the value alone as a plain result.
const (
	SystemCaveat = "urn:pgxsafety:genotype-caveat"
	// CaveatReview: one reason the gene needs review.
	CaveatReview = "review-reason"
	// CaveatPositionNotCalled: one definition position without a called
	// genotype ("chr10:94842866 rs3758581").
	CaveatPositionNotCalled = "position-not-called"
	// CaveatUntestedAllele: one allele defined at such a position.
	CaveatUntestedAllele = "untested-allele"
)

// MediaTypeFHIRJSON is the media type of FHIR JSON.
const MediaTypeFHIRJSON = "application/fhir+json"

// SampleReport is one sample's audited answer as JSON: the per-sample
// result of POST /pgx/vcf and pgxsafety call (sample, genes, warnings,
// checks) or, for POST /pgx/check, a single check (see CheckReport). Only
// the fields the report uses are decoded; names are the interface spec's.
type SampleReport struct {
	Sample   string               `json:"sample"`
	Genes    []vcfcall.GeneResult `json:"genes"`
	Warnings []string             `json:"warnings"`
	Checks   []ReportCheck        `json:"checks"`
	Calls    []ReportGenotype     `json:"-"`
}

// ReportCheck is one drug checked (its wire result, or why it could not be).
type ReportCheck struct {
	Drug   string        `json:"drug"`
	Result *ReportResult `json:"result"`
	Error  string        `json:"error"`
}

// ReportResult is the part of a check's wire result the report uses.
type ReportResult struct {
	Drug             string           `json:"drug"`
	DrugNormalised   string           `json:"drug_normalised"`
	DrugRecognised   bool             `json:"drug_recognised"`
	OverallSeverity  string           `json:"overall_severity"`
	Alerts           []ReportAlert    `json:"alerts"`
	SourceCitations  []ReportCitation `json:"source_citations"`
	Genotype         []ReportGenotype `json:"genotype"`
	Warnings         []string         `json:"warnings"`
	KnowledgeVersion string           `json:"knowledge_version"`
}

// ReportAlert is one finding of a check.
type ReportAlert struct {
	Drug            string           `json:"drug"`
	Severity        string           `json:"severity"`
	Gene            string           `json:"gene"`
	Category        string           `json:"category"`
	Message         string           `json:"message"`
	Action          string           `json:"action"`
	Recommendation  string           `json:"recommendation"`
	Classification  string           `json:"classification"`
	EvidenceLevel   string           `json:"evidence_level"`
	Implications    []string         `json:"implications"`
	Genotype        []ReportGenotype `json:"genotype"`
	TestRecommended bool             `json:"test_recommended"`
	Guideline       *struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	} `json:"guideline"`
}

// ReportGenotype is the engine's reading of one gene inside a check.
type ReportGenotype struct {
	Gene            string   `json:"gene"`
	Diplotype       string   `json:"diplotype"`
	Phenotype       string   `json:"phenotype"`
	ActivityScore   string   `json:"activity_score"`
	UntestedAlleles []string `json:"untested_alleles"`
}

// ReportCitation is one source citation of a check.
type ReportCitation struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level"`
	URL           string `json:"url"`
}

// Alert categories on the wire.
const (
	categoryConfirmed = "genotype-confirmed"
)

// ReportMeta is who the Bundle is about and where it comes from.
type ReportMeta struct {
	// PatientID is the FHIR id of the patient; empty: the subject is
	// given by the sample's name as an identifier (the receiving system
	// links it to its patient before storing).
	PatientID string
	// AuditID is the audit log entry holding the answer's digest (empty
	// for an offline answer of pgxsafety call, which is not audited).
	AuditID          string
	RequestID        string
	KnowledgeVersion string
	// Issued is when the answer was made (the service clock).
	Issued time.Time
	// Source names the input ("POST /pgx/vcf file NA12878.vcf.gz").
	Source string
}

// SampleReportFromJSON decodes one sample's audited answer.
func SampleReportFromJSON(b []byte) (SampleReport, error) {
	var r SampleReport
	if err := json.Unmarshal(b, &r); err != nil {
		return SampleReport{}, fmt.Errorf("fhir: read the sample answer: %w", err)
	}
	return r, nil
}

// CheckReport makes a report of one POST /pgx/check answer (its wire
// JSON): the genes are those the check read, each as called.
func CheckReport(wire []byte) (SampleReport, error) {
	var res ReportResult
	if err := json.Unmarshal(wire, &res); err != nil {
		return SampleReport{}, fmt.Errorf("fhir: read the check answer: %w", err)
	}
	r := SampleReport{Checks: []ReportCheck{{Drug: res.Drug, Result: &res}}, Calls: res.Genotype}
	return r, nil
}

// bundleBuilder accumulates the entries of one Bundle.
type bundleBuilder struct {
	seed    string
	subject map[string]any
	issued  string
	entries []map[string]any
	refs    []string // fullUrls of every entry, for Provenance.target
}

// uuidFor is a deterministic UUID (RFC 9562 version 8, name-based on
// SHA-256) for key within the Bundle: the same answer gives the same
// Bundle.
func (b *bundleBuilder) uuidFor(key string) string {
	h := sha256.Sum256([]byte(b.seed + "\x00" + key))
	h[6] = (h[6] & 0x0f) | 0x80
	h[8] = (h[8] & 0x3f) | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// add appends a resource and returns its fullUrl.
func (b *bundleBuilder) add(key string, res map[string]any) string {
	id := b.uuidFor(key)
	res["id"] = id
	full := "urn:uuid:" + id
	b.entries = append(b.entries, map[string]any{
		"fullUrl":  full,
		"resource": res,
		"request":  map[string]any{"method": "POST", "url": res["resourceType"]},
	})
	b.refs = append(b.refs, full)
	return full
}

func codingOf(system, code, display string) map[string]any {
	c := map[string]any{"system": system, "code": code}
	if display != "" {
		c["display"] = display
	}
	return c
}

func concept(codings ...map[string]any) map[string]any {
	cs := make([]any, len(codings))
	for i, c := range codings {
		cs[i] = c
	}
	return map[string]any{"coding": cs}
}

func textConcept(text string) map[string]any { return map[string]any{"text": text} }

func genomicCategories() []any {
	return []any{
		concept(codingOf(systemObsCategory, "laboratory", "Laboratory")),
		concept(codingOf(SystemGECateg, "GE", "Genetics")),
	}
}

func geneComponent(gene string) map[string]any {
	return map[string]any{"code": concept(codingOf(SystemLOINC, LOINCGene, "Gene studied [ID]")), "valueCodeableConcept": textConcept(gene)}
}

func caveatComponent(code, display, text string) map[string]any {
	return map[string]any{"code": concept(codingOf(SystemCaveat, code, display)), "valueString": text}
}

// caveatComponents are a Genotype's caveats: the review reasons of a gene
// in review, and, where the value is a diplotype, the positions not called
// and the alleles left untested.
func caveatComponents(g vcfcall.GeneResult, st geneState, valueIsDiplotype bool) []any {
	var out []any
	if st == geneReview {
		reasons := g.Uninterpreted
		if len(reasons) == 0 {
			reasons = []string{firstNonEmpty(g.Summary, ReviewValue)}
		}
		for _, r := range reasons {
			out = append(out, caveatComponent(CaveatReview, "Needs review", r))
		}
	}
	if !valueIsDiplotype {
		return out
	}
	for _, p := range g.MissingPositions {
		out = append(out, caveatComponent(CaveatPositionNotCalled, "Definition position not called", p))
	}
	for _, a := range g.UntestedAlleles {
		out = append(out, caveatComponent(CaveatUntestedAllele, "Allele not tested", a))
	}
	return out
}

func conclusionComponent(text string) map[string]any {
	return map[string]any{"code": concept(codingOf(SystemTBD, tbdConclusion, "")), "valueString": text}
}

func annotations(texts []string) []any {
	var out []any
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, map[string]any{"text": t})
		}
	}
	return out
}

func (b *bundleBuilder) observation(profile string, code map[string]any) map[string]any {
	return map[string]any{
		"resourceType": "Observation",
		"meta":         map[string]any{"profile": []any{profile}},
		"status":       "final",
		"category":     genomicCategories(),
		"code":         code,
		"subject":      b.subject,
		"issued":       b.issued,
	}
}

// geneState says how a gene is written.
type geneState int

const (
	geneNotTested geneState = iota // no data / not called: no Genotype
	geneCalled                     // a normal genotype
	geneReview                     // present but not interpreted: never a normal genotype
)

func stateOf(g vcfcall.GeneResult) geneState {
	switch {
	case g.NeedsReview || g.Interpretation == vcfcall.InterpretationReview || g.Interpretation == vcfcall.InterpretationProvisional:
		return geneReview
	case g.Status == "no_data" || g.Status == "not_called":
		return geneNotTested
	case g.Interpretation != vcfcall.InterpretationCalled || len(g.Diplotypes) == 0:
		return geneReview
	}
	return geneCalled
}

// ReviewValue is the value text of a Genotype whose result needs review:
// no diplotype is stated, so no reader can take it as a normal genotype.
const ReviewValue = "not interpreted — review"

// BuildGenomicsBundle returns the transaction Bundle of one sample's
// answer.
func BuildGenomicsBundle(r SampleReport, meta ReportMeta) (json.RawMessage, error) {
	if meta.Issued.IsZero() {
		return nil, errors.New("fhir: the report needs its time")
	}
	if meta.PatientID != "" && !fhirID.MatchString(meta.PatientID) {
		return nil, errors.New("fhir: the patient id is not a FHIR id")
	}
	b := &bundleBuilder{seed: meta.AuditID + "\x00" + meta.RequestID + "\x00" + r.Sample,
		issued: meta.Issued.UTC().Format("2006-01-02T15:04:05Z")}
	switch {
	case meta.PatientID != "":
		b.subject = map[string]any{"reference": "Patient/" + meta.PatientID}
	case r.Sample != "":
		b.subject = map[string]any{"identifier": map[string]any{"value": r.Sample}, "display": "sample " + r.Sample}
	default:
		b.subject = map[string]any{"display": "the patient of this check"}
	}

	genes := r.Genes
	if len(genes) == 0 {
		genes = genesOfCalls(r)
	}
	var results []any
	genotypeRef := map[string]string{}
	var notTested []string
	for _, g := range genes {
		st := stateOf(g)
		if st == geneNotTested {
			notTested = append(notTested, fmt.Sprintf("%s: %s", g.Gene, firstNonEmpty(g.Summary, g.Interpretation)))
			continue
		}
		ref, haps := b.genotype(g, st)
		genotypeRef[g.Gene] = ref
		results = append(results, map[string]any{"reference": ref})
		for _, h := range haps {
			results = append(results, map[string]any{"reference": h})
		}
	}
	var checkNotes []string
	for ci, c := range r.Checks {
		if c.Result == nil {
			checkNotes = append(checkNotes, fmt.Sprintf("%s: not checked: %s", c.Drug, c.Error))
			continue
		}
		for ai, a := range c.Result.Alerts {
			ref := genotypeRef[a.Gene]
			if a.Gene == "" {
				continue
			}
			if ref == "" || a.Category != categoryConfirmed {
				// Not a finding from the patient's genotype (a review, a
				// gene without a result): said in the report, with no
				// implication a reader could take for an interpretation.
				checkNotes = append(checkNotes, fmt.Sprintf("%s, %s (%s): %s", firstNonEmpty(a.Drug, c.Drug), a.Gene, strings.ToLower(a.Severity), firstNonEmpty(a.Action, a.Message)))
				continue
			}
			im := b.implication(c, ai, a, ref, genotypeRef)
			key := fmt.Sprintf("implication/%d/%d", ci, ai)
			imRef := b.add(key, im)
			results = append(results, map[string]any{"reference": imRef})
			if a.Category == categoryConfirmed && a.Recommendation != "" && (a.Severity == "HIGH" || a.Severity == "MODERATE") {
				b.add(key+"/task", b.task(c, a, imRef))
			}
		}
	}

	report := map[string]any{
		"resourceType": "DiagnosticReport",
		"meta":         map[string]any{"profile": []any{ProfileGenomicReport}},
		"status":       "final",
		"category":     []any{concept(codingOf(SystemGECateg, "GE", "Genetics"))},
		"code":         concept(codingOf(SystemLOINC, loincGeneticReport, "Genetic analysis report")),
		"subject":      b.subject,
		"issued":       b.issued,
		"conclusion":   conclusion(r, genes),
	}
	if meta.AuditID != "" {
		report["identifier"] = []any{map[string]any{"type": textConcept("pgxsafety audit log entry"), "value": meta.AuditID}}
	}
	if len(results) > 0 {
		report["result"] = results
	}
	var notes []string
	notes = append(notes, r.Warnings...)
	if len(notTested) > 0 {
		notes = append(notes, "Genes without a genotype in this report (no data, or not called): "+strings.Join(notTested, "; "))
	}
	notes = append(notes, checkNotes...)
	for _, n := range annotations(notes) {
		report["extension"] = append(asSlice(report["extension"]), map[string]any{"url": extGenomicReportNote, "valueAnnotation": n})
	}
	b.add("report", report)

	// Provenance: what made the Bundle and the audit entry of the answer.
	prov := map[string]any{
		"resourceType": "Provenance",
		"target":       refsOf(b.refs),
		"recorded":     b.issued,
		"agent": []any{map[string]any{
			"type": concept(codingOf("http://terminology.hl7.org/CodeSystem/provenance-participant-type", "assembler", "Assembler")),
			"who":  map[string]any{"display": "pgxsafety, knowledge " + meta.KnowledgeVersion},
		}},
		"reason": []any{textConcept("pharmacogenomic decision support answer")},
	}
	var entities []any
	if meta.AuditID != "" {
		entities = append(entities, map[string]any{"role": "source", "what": map[string]any{
			"identifier": map[string]any{"type": textConcept("pgxsafety audit log entry"), "value": meta.AuditID},
			"display":    "audit log entry " + meta.AuditID + " (the answer's SHA-256 is recorded there)"}})
	}
	entities = append(entities, map[string]any{"role": "source", "what": map[string]any{
		"identifier": map[string]any{"type": textConcept("pgxsafety knowledge version"), "value": meta.KnowledgeVersion},
		"display":    "knowledge snapshot " + meta.KnowledgeVersion}})
	if meta.Source != "" {
		entities = append(entities, map[string]any{"role": "source", "what": map[string]any{"display": meta.Source}})
	}
	prov["entity"] = entities
	b.add("provenance", prov)

	bundle := map[string]any{
		"resourceType": "Bundle",
		"type":         "transaction",
		"entry":        entriesOf(b.entries),
	}
	out, err := json.Marshal(bundle)
	if err != nil {
		return nil, fmt.Errorf("fhir: encode the report: %w", err)
	}
	return out, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func refsOf(full []string) []any {
	out := make([]any, len(full))
	for i, f := range full {
		out[i] = map[string]any{"reference": f}
	}
	return out
}

func entriesOf(es []map[string]any) []any {
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// genesOfCalls lists the genes a /pgx/check answer read: called with
// their diplotype, or in review when the engine could not read them.
func genesOfCalls(r SampleReport) []vcfcall.GeneResult {
	seen := map[string]bool{}
	var out []vcfcall.GeneResult
	for _, c := range r.Calls {
		if c.Gene == "" || seen[c.Gene] || (c.Diplotype == "" && c.Phenotype == "") {
			continue
		}
		seen[c.Gene] = true
		if c.Diplotype == "" || strings.Contains(strings.ToLower(c.Phenotype), "review") {
			// The engine could not read the gene ("Could not interpret —
			// review"): a Genotype in review, never a normal one.
			out = append(out, vcfcall.GeneResult{Gene: c.Gene, Status: "called", Interpretation: vcfcall.InterpretationReview,
				NeedsReview: true, Summary: firstNonEmpty(c.Phenotype, ReviewValue), UntestedAlleles: c.UntestedAlleles})
			continue
		}
		out = append(out, vcfcall.GeneResult{Gene: c.Gene, Status: "called", Interpretation: "called",
			Diplotypes:      []vcfcall.DiplotypeResult{{Diplotype: c.Diplotype, Phenotype: c.Phenotype, ActivityScore: c.ActivityScore}},
			UntestedAlleles: c.UntestedAlleles})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Gene < out[j].Gene })
	return out
}

// conclusion is the report's one-paragraph summary: per gene its reading.
func conclusion(r SampleReport, genes []vcfcall.GeneResult) string {
	var parts []string
	for _, g := range genes {
		switch stateOf(g) {
		case geneCalled:
			parts = append(parts, g.Gene+" "+readingOf(g))
		case geneReview:
			parts = append(parts, g.Gene+" needs review")
		}
	}
	s := "Pharmacogenomic result"
	if r.Sample != "" {
		s += " of sample " + r.Sample
	}
	if len(parts) == 0 {
		return s + ": no gene was called."
	}
	return s + ": " + strings.Join(parts, "; ") + ". Decision support only; see each result's notes."
}

// readingOf is a called gene's diplotype(s) with phenotype and activity
// score.
func readingOf(g vcfcall.GeneResult) string {
	var ds []string
	for _, d := range g.Diplotypes {
		s := d.Diplotype
		var ph []string
		if d.Phenotype != "" {
			ph = append(ph, d.Phenotype)
		}
		if d.ActivityScore != "" {
			ph = append(ph, "activity score "+d.ActivityScore)
		}
		if len(ph) > 0 {
			s += " (" + strings.Join(ph, ", ") + ")"
		}
		ds = append(ds, s)
	}
	return strings.Join(ds, " or ")
}

// genotype adds a gene's Genotype (and its Haplotypes when phase is known)
// and returns their fullUrls.
func (b *bundleBuilder) genotype(g vcfcall.GeneResult, st geneState) (string, []string) {
	obs := b.observation(ProfileGenotype, concept(codingOf(SystemLOINC, LOINCGenotype, "Genotype display name")))
	comps := []any{geneComponent(g.Gene)}
	var notes []string
	var haps []string
	switch st {
	case geneCalled:
		var names []string
		for _, d := range g.Diplotypes {
			names = append(names, d.Diplotype)
		}
		obs["valueCodeableConcept"] = textConcept(strings.Join(names, " or "))
		comps = append(comps, conclusionComponent(g.Gene+" "+readingOf(g)))
		if len(g.Diplotypes) > 1 {
			notes = append(notes, "Ambiguous: the genotypes read allow "+strings.Join(names, " or ")+"; none is chosen.")
		}
		if g.Phased && len(g.Diplotypes) == 1 && len(g.Diplotypes[0].Alleles) == 2 {
			for i, a := range g.Diplotypes[0].Alleles {
				h := b.observation(ProfileHaplotype, concept(codingOf(SystemLOINC, LOINCHaplotype, "Haplotype name")))
				h["valueCodeableConcept"] = textConcept(a)
				h["component"] = []any{geneComponent(g.Gene)}
				h["note"] = annotations([]string{fmt.Sprintf("Haplotype %d of 2 of %s %s, phase known from the input.", i+1, g.Gene, g.Diplotypes[0].Diplotype)})
				haps = append(haps, b.add("haplotype/"+g.Gene+"/"+fmt.Sprint(i), h))
			}
		}
	case geneReview:
		obs["interpretation"] = []any{textConcept("needs review")}
		comps = append(comps, conclusionComponent(g.Gene+": "+firstNonEmpty(g.Summary, ReviewValue)))
		if actionable(g) {
			// The engine keeps a reading beside a review only when it is
			// actionable (never one that could read as normal): it is the
			// value, so a reader acts on it, and the review is said.
			var names []string
			for _, d := range g.Diplotypes {
				names = append(names, d.Diplotype)
			}
			obs["valueCodeableConcept"] = textConcept(strings.Join(names, " or "))
			notes = append(notes, "Needs review; the actionable reading "+readingOf(g)+" is kept beside the review.")
		} else {
			obs["valueCodeableConcept"] = textConcept(ReviewValue)
			if len(g.Diplotypes) > 0 {
				notes = append(notes, "Not a genotype to act on as normal; the positions read would give "+readingOf(g)+".")
			}
		}
	}
	comps = append(comps, caveatComponents(g, st, st == geneCalled || actionable(g))...)
	obs["component"] = comps
	if len(g.UntestedAlleles) > 0 {
		notes = append(notes, "Untested alleles (defined at positions without a called genotype, not ruled out): "+strings.Join(g.UntestedAlleles, ", ")+".")
	}
	if n := len(g.MissingPositions); n > 0 {
		notes = append(notes, fmt.Sprintf("%d defining position(s) not called: %s.", n, clipList(g.MissingPositions, 10)))
	}
	if len(g.Uninterpreted) > 0 {
		notes = append(notes, "Not interpreted: "+strings.Join(g.Uninterpreted, "; "))
	}
	notes = append(notes, g.Notes...)
	if ns := annotations(notes); len(ns) > 0 {
		obs["note"] = ns
	}
	if len(haps) > 0 {
		obs["derivedFrom"] = refsOf(haps)
	}
	return b.add("genotype/"+g.Gene, obs), haps
}

// actionable reports whether a gene in review carries a reading beside
// the review: every diplotype with a phenotype.
func actionable(g vcfcall.GeneResult) bool {
	if len(g.Diplotypes) == 0 {
		return false
	}
	for _, d := range g.Diplotypes {
		if d.Phenotype == "" {
			return false
		}
	}
	return true
}

func clipList(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

// implication is the Therapeutic Implication of one alert.
func (b *bundleBuilder) implication(c ReportCheck, ai int, a ReportAlert, genotypeRef string, all map[string]string) map[string]any {
	obs := b.observation(ProfileTherapeuticImplication, concept(codingOf(SystemTBD, TBDTherapeutic, "Therapeutic Implication")))
	drug := firstNonEmpty(a.Drug, c.Result.DrugNormalised, c.Drug)
	derived := []any{map[string]any{"reference": genotypeRef}}
	comps := []any{map[string]any{"code": concept(codingOf(SystemLOINC, LOINCMedication, "Medication assessed [Identifier]")), "valueCodeableConcept": textConcept(drug)}}
	var phenotype string
	for _, gc := range a.Genotype {
		if gc.Gene == a.Gene && gc.Phenotype != "" {
			phenotype = gc.Phenotype
		}
		if ref := all[gc.Gene]; ref != "" && gc.Gene != a.Gene {
			derived = append(derived, map[string]any{"reference": ref})
		}
	}
	if phenotype != "" && a.Category == categoryConfirmed {
		comps = append(comps, map[string]any{"code": concept(codingOf(SystemTBD, TBDTherapeutic, "Therapeutic Implication")), "valueCodeableConcept": textConcept(phenotype)})
	}
	if lv := a.EvidenceLevel; lv != "" {
		comps = append(comps, map[string]any{"code": concept(codingOf(SystemLOINC, loincEvidenceLevel, "Level of evidence")),
			"valueCodeableConcept": concept(codingOf(systemPharmGKBLevel, lv, "PGKB "+lv))})
	}
	var text string
	src := "CPIC"
	if a.Guideline != nil && a.Guideline.Name != "" {
		src = "CPIC guideline " + a.Guideline.Name
	}
	switch {
	case a.Category == categoryConfirmed && a.Recommendation != "":
		strength := ""
		if a.Classification != "" {
			strength = " (strength: " + a.Classification + ")"
		}
		text = fmt.Sprintf("%s, %s %s: %s recommendation%s: %s", drug, a.Gene, firstNonEmpty(phenotype, "result"), src, strength, a.Recommendation)
	default:
		text = fmt.Sprintf("%s, %s (%s): %s", drug, a.Gene, strings.ToLower(a.Severity), firstNonEmpty(a.Action, a.Message))
	}
	comps = append(comps, conclusionComponent(text))
	obs["component"] = comps
	obs["derivedFrom"] = derived
	var notes []string
	notes = append(notes, a.Implications...)
	if a.Message != "" && a.Message != text {
		notes = append(notes, a.Message)
	}
	if ns := annotations(notes); len(ns) > 0 {
		obs["note"] = ns
	}
	var exts []any
	for _, ct := range alertCitations(c.Result, ai) {
		ra := map[string]any{"type": "citation", "label": ct.Source}
		if strings.HasPrefix(ct.URL, "http://") || strings.HasPrefix(ct.URL, "https://") {
			ra["url"] = ct.URL
		} else if ct.URL != "" {
			ra["citation"] = ct.URL
		}
		exts = append(exts, map[string]any{"url": extRelatedArtifact, "valueRelatedArtifact": ra})
	}
	if len(exts) > 0 {
		obs["extension"] = exts
	}
	return obs
}

// alertCitations are the citations of alerts[ai] (field "alerts[ai]").
func alertCitations(r *ReportResult, ai int) []ReportCitation {
	field := fmt.Sprintf("alerts[%d]", ai)
	var out []ReportCitation
	for _, c := range r.SourceCitations {
		if c.Field == field {
			out = append(out, c)
		}
	}
	return out
}

// task is the Medication Recommendation of a confirmed alert whose
// guideline recommends an action. Task.code is left out: its binding is
// LOINC LL4049-4 and the knowledge does not sort recommendations into
// those answers (mapping the text would be a guess); the description
// carries the recommendation.
func (b *bundleBuilder) task(c ReportCheck, a ReportAlert, implication string) map[string]any {
	drug := firstNonEmpty(a.Drug, c.Result.DrugNormalised, c.Drug)
	desc := a.Recommendation
	if a.Classification != "" {
		desc += " (CPIC strength: " + a.Classification + ")"
	}
	return map[string]any{
		"resourceType":    "Task",
		"meta":            map[string]any{"profile": []any{ProfileMedicationRecommendation}},
		"status":          "requested",
		"intent":          "proposal",
		"description":     drug + ": " + desc,
		"for":             b.subject,
		"authoredOn":      b.issued,
		"reasonReference": map[string]any{"reference": implication},
	}
}
