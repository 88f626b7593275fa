package fhir

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/pgxsafety/pgxsafety/engine"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
	opb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/observation_go_proto"
)

// LOINC and Genomics Reporting IG codes of genomic results.
const (
	LOINCGenotype        = "84413-4" // Genotype display name
	LOINCHaplotype       = "84414-2" // Haplotype name
	LOINCVariant         = "69548-6" // Genetic variant assessment
	LOINCGene            = "48018-6" // Gene studied [ID]
	LOINCDiscreteVariant = "81252-9" // Discrete genetic variant (dbSNP id, STU2+)
	LOINCDbSNPLegacy     = "81255-2" // dbSNP [ID] (STU1)
	LOINCZygosity        = "53034-5" // Allelic state
	LOINCHLATyping       = "57290-9" // HLA-A+B+C (class I) [Type], on the IG's HLA examples
	LOINCMedication      = "51963-7" // Medication assessed
	LOINCMetabolismSTU1  = "53040-2" // STU1 medication-metabolism implication
	LAPresent            = "LA9633-4"
	LAAbsent             = "LA9634-2"
	LAHomozygous         = "LA6705-3"
	LAHeterozygous       = "LA6706-1"
	TBDTherapeutic       = "therapeutic-implication"
)

// GenomicCodes are the Observation codes ReadGenomics reads, as FHIR
// token search values (system|code): the CDS discovery prefetch and the
// FHIR search ask for exactly these.
var GenomicCodes = []string{
	SystemLOINC + "|" + LOINCGenotype,
	SystemLOINC + "|" + LOINCHaplotype,
	SystemLOINC + "|" + LOINCVariant,
	SystemLOINC + "|" + LOINCHLATyping,
	SystemTBD + "|" + TBDTherapeutic,
}

// Genomic result kinds.
const (
	KindGenotype    = "genotype"
	KindHaplotype   = "haplotype"
	KindVariant     = "variant"
	KindImplication = "therapeutic-implication"
)

// GenomicResult is one genomic Observation as pgxsafety read it.
type GenomicResult struct {
	// Ref is "Observation/<id>" (or its place when it has no id).
	Ref    string `json:"ref"`
	Kind   string `json:"kind"`
	Gene   string `json:"gene,omitempty"`
	Value  string `json:"value,omitempty"`
	Status string `json:"status,omitempty"`
	// Effective and Issued are the result's dates as written.
	Effective string `json:"effective,omitempty"`
	Issued    string `json:"issued,omitempty"`
	// SpecimenCollected is the collection date of a contained Specimen.
	SpecimenCollected string `json:"specimen_collected,omitempty"`
	// Performer names who produced the result (the laboratory): each
	// performer's display, else its reference, joined with "; ".
	Performer string `json:"performer,omitempty"`
	// Used is true when the result went into the check.
	Used bool `json:"used"`
	// Note says why a result was not used, or how it was read.
	Note string `json:"note,omitempty"`

	when int64 // effective or issued, µs since the epoch, for ordering
}

// Implication is a lab's Therapeutic Implication for a drug.
type Implication struct {
	Ref string `json:"ref"`
	// Drug is the knowledge's drug the implication is about ("" when the
	// medication assessed is not a covered drug).
	Drug       string `json:"drug,omitempty"`
	Medication string `json:"medication,omitempty"`
	// Phenotype is the lab's wording ("Poor metabolizer", "High risk").
	Phenotype   string   `json:"phenotype,omitempty"`
	DerivedFrom []string `json:"derived_from,omitempty"`
	// Resolved is true when a genotype it derives from went into the
	// check, so the engine judged the same data itself.
	Resolved  bool   `json:"resolved"`
	Effective string `json:"effective,omitempty"`
}

// Genomics is what a patient's genomic Observations say, in the engine's
// terms.
type Genomics struct {
	Variants   []string
	Zygosity   map[string]engine.Zygosity
	Diplotypes map[string]string
	// Caveats are what a Genotype says beside a diplotype of Diplotypes
	// (review reasons, positions not called, untested alleles).
	Caveats map[string]engine.DiplotypeCaveat
	HLA     map[string]string
	// Calls are position-level calls on GRCh38 (reference calls of "wild
	// type" positions, insertions and deletions with their allelic state);
	// single-base substitutions go to Variants as genomic HGVS items.
	Calls []engine.PositionCall
	// Results lists every genomic Observation read, used or not.
	Results      []GenomicResult
	Implications []Implication
	// Uninterpreted lists the genomic results present but not
	// interpreted; see UninterpretedFor.
	Uninterpreted []Uninterpreted
	Issues        []Issue
}

// Apply copies the genotype into req.
func (g *Genomics) Apply(req *engine.Request) {
	if len(g.Variants) > 0 {
		req.Variants = append([]string(nil), g.Variants...)
	}
	if len(g.Zygosity) > 0 {
		req.Zygosity = make(map[string]engine.Zygosity, len(g.Zygosity))
		for k, v := range g.Zygosity {
			req.Zygosity[k] = v
		}
	}
	if len(g.Diplotypes) > 0 {
		req.Diplotypes = make(map[string]string, len(g.Diplotypes))
		for k, v := range g.Diplotypes {
			req.Diplotypes[k] = v
			if c, ok := g.Caveats[k]; ok {
				if req.DiplotypeCaveats == nil {
					req.DiplotypeCaveats = map[string]engine.DiplotypeCaveat{}
				}
				req.DiplotypeCaveats[k] = c
			}
		}
	}
	if len(g.HLA) > 0 {
		req.HLA = make(map[string]string, len(g.HLA))
		for k, v := range g.HLA {
			req.HLA[k] = v
		}
	}
	if len(g.Calls) > 0 {
		req.Calls = append([]engine.PositionCall(nil), g.Calls...)
	}
}

// HasGenotype reports whether any genotype went into the check.
func (g *Genomics) HasGenotype() bool {
	return len(g.Variants) > 0 || len(g.Diplotypes) > 0 || len(g.HLA) > 0 || len(g.Calls) > 0
}

// UsedResults returns the results that went into the check.
func (g *Genomics) UsedResults() []GenomicResult {
	var out []GenomicResult
	for _, r := range g.Results {
		if r.Used {
			out = append(out, r)
		}
	}
	return out
}

// countingStatuses are the Observation statuses whose results count.
var countingStatuses = map[string]bool{"final": true, "amended": true, "corrected": true}

// obsRead is one genomic Observation read, before combining.
type obsRead struct {
	res GenomicResult
	obs *opb.Observation
	idx int // index into Genomics.Results
}

// ReadGenomics reads a patient's genomic Observations (the resources of
// the genomic prefetch or search). patientID is the patient of the hook
// call: an Observation about another subject is refused. place names the
// source in issues.
//
// Rules (docs/cds-hooks.md §3): only final, amended and corrected results
// count; a Genotype (84413-4) gives a diplotype (or HLA allele status), two
// Haplotypes (84414-2) of a gene without a Genotype give one; a Variant
// (69548-6) with a dbSNP id (component 81252-9, or STU1 81255-2) and value
// Present gives an rsID with its zygosity (53034-5), Absent is not a
// carrier; a Therapeutic Implication is resolved when a genotype it derives
// from was used. Where results of one gene disagree, the latest is used
// and an issue says so; where they cannot be ordered, none is used.
func (m *Mapper) ReadGenomics(raws []json.RawMessage, patientID, place string) Genomics {
	g := Genomics{}
	var reads []obsRead
	for i, po := range m.p.parseAll(raws) {
		where := fmt.Sprintf("%s entry %d", place, i+1)
		pr, err := po.pr, po.err
		if err != nil {
			g.Issues = append(g.Issues, Issue{Ref: refOf(pr.head, where), ResourceType: pr.head.ResourceType, Severity: IssueError,
				Message: err.Error(), Genomic: pr.head.ResourceType == "Observation" || pr.head.ResourceType == ""})
			continue
		}
		obs := pr.cr.GetObservation()
		if obs == nil {
			if pr.head.ResourceType != "OperationOutcome" {
				g.Issues = append(g.Issues, Issue{Ref: refOf(pr.head, where), ResourceType: pr.head.ResourceType, Severity: IssueInfo,
					Message: "not an Observation; ignored"})
			}
			continue
		}
		ref := refOf(pr.head, where)
		if pr.partial != "" {
			g.Issues = append(g.Issues, Issue{Ref: ref, ResourceType: "Observation", Severity: IssueWarning, Message: pr.partial, Genomic: true})
		}
		if is := pr.toleratedIssue(ref, "Observation", true); is != nil {
			g.Issues = append(g.Issues, *is)
		}
		kind := obsKind(obs)
		if kind == "" {
			continue // not a genomic result (a search may return others)
		}
		r := GenomicResult{
			Ref:       ref,
			Kind:      kind,
			Status:    codeString(obs.GetStatus().GetValue().String()),
			Effective: effective(obs),
			Issued:    formatInstant(obs.GetIssued()),
		}
		r.when = obs.GetIssued().GetValueUs()
		if dt := obs.GetEffective().GetDateTime(); dt != nil {
			r.when = dt.GetValueUs()
		}
		r.SpecimenCollected = m.specimenCollected(obs)
		r.Performer = performer(obs)
		subj := referenceString(obs.GetSubject())
		switch {
		case subj != "" && patientID != "" && !sameResource(subj, "Patient", patientID):
			r.Note = fmt.Sprintf("its subject %s is not the patient of this call; not used", subj)
			g.Issues = append(g.Issues, Issue{Ref: ref, ResourceType: "Observation", Severity: IssueError, Genomic: true, Message: r.Note})
		case !countingStatuses[r.Status]:
			st := r.Status
			if st == "" {
				st = "missing"
			}
			r.Note = fmt.Sprintf("status %s: only final, amended or corrected results count; not used", st)
		default:
			reads = append(reads, obsRead{res: r, obs: obs, idx: len(g.Results)})
		}
		g.Results = append(g.Results, r)
	}
	m.combine(&g, reads)
	return g
}

// obsKind classifies a genomic Observation by its code (and, for a
// Therapeutic Implication, its profile or components).
func obsKind(obs *opb.Observation) string {
	code := obs.GetCode()
	switch {
	case hasCode(code, SystemLOINC, LOINCGenotype):
		return KindGenotype
	case hasCode(code, SystemLOINC, LOINCHaplotype):
		return KindHaplotype
	case hasCode(code, SystemLOINC, LOINCVariant):
		return KindVariant
	case hasCode(code, SystemLOINC, LOINCHLATyping):
		// An HLA class I typing coded only with the panel code: read as
		// a genotype (its value must name HLA alleles).
		return KindGenotype
	case hasCode(code, SystemTBD, TBDTherapeutic):
		return KindImplication
	}
	for _, p := range obs.GetMeta().GetProfile() {
		if strings.HasSuffix(p.GetValue(), "/therapeutic-implication") {
			return KindImplication
		}
	}
	for _, c := range obs.GetComponent() {
		if hasCode(c.GetCode(), SystemLOINC, LOINCMetabolismSTU1, LOINCMedication) {
			return KindImplication
		}
	}
	return ""
}

func effective(obs *opb.Observation) string {
	e := obs.GetEffective()
	switch {
	case e.GetDateTime() != nil:
		return formatDateTime(e.GetDateTime())
	case e.GetInstant() != nil:
		return formatInstant(e.GetInstant())
	case e.GetPeriod() != nil:
		return formatDateTime(e.GetPeriod().GetStart())
	}
	return ""
}

// performer names the Observation's performers: each one's display, else
// its reference as written.
func performer(obs *opb.Observation) string {
	var out []string
	for _, p := range obs.GetPerformer() {
		if d := strings.TrimSpace(p.GetDisplay().GetValue()); d != "" {
			out = append(out, d)
		} else if ref := referenceString(p); ref != "" {
			out = append(out, ref)
		}
	}
	return strings.Join(out, "; ")
}

// specimenCollected returns the collection date of a contained Specimen
// the Observation references.
func (m *Mapper) specimenCollected(obs *opb.Observation) string {
	ref := referenceString(obs.GetSpecimen())
	if !strings.HasPrefix(ref, "#") {
		return ""
	}
	id := strings.TrimPrefix(ref, "#")
	for _, a := range obs.GetContained() {
		if sp := containedSpecimen(a, id); sp != "" {
			return sp
		}
	}
	return ""
}

func containedSpecimen(a *anypb.Any, id string) string {
	cr := &rpb.ContainedResource{}
	if err := a.UnmarshalTo(cr); err != nil {
		return ""
	}
	sp := cr.GetSpecimen()
	if sp == nil || sp.GetId().GetValue() != id {
		return ""
	}
	c := sp.GetCollection().GetCollected()
	if dt := c.GetDateTime(); dt != nil {
		return formatDateTime(dt)
	}
	if p := c.GetPeriod(); p != nil {
		return formatDateTime(p.GetStart())
	}
	return ""
}

// componentValue returns the CodeableConcept and string value of the first
// component with one of the codes.
func componentValue(obs *opb.Observation, codes ...string) (*dpb.CodeableConcept, string, bool) {
	for _, c := range obs.GetComponent() {
		if hasCode(c.GetCode(), "", codes...) {
			return c.GetValue().GetCodeableConcept(), strings.TrimSpace(c.GetValue().GetStringValue().GetValue()), true
		}
	}
	return nil, "", false
}

// conceptTexts lists a concept's text and displays, then the string value.
func conceptTexts(cc *dpb.CodeableConcept, str string) []string {
	cs, text := codings(cc)
	var out []string
	if text != "" {
		out = append(out, text)
	}
	for _, c := range cs {
		if c.Display != "" {
			out = append(out, c.Display)
		}
	}
	if str != "" {
		out = append(out, str)
	}
	return out
}

// geneOf returns the gene symbol of component 48018-6 (the first one;
// see genesOf).
func geneOf(obs *opb.Observation) string {
	if gs := genesOf(obs); len(gs) > 0 {
		return gs[0]
	}
	return ""
}

// genesOf returns the gene symbols of every component 48018-6: its
// display, text or code when the code is a symbol (HGNC ids are not
// mapped: the knowledge holds symbols only).
func genesOf(obs *opb.Observation) []string {
	var out []string
	for _, c := range obs.GetComponent() {
		if !hasCode(c.GetCode(), "", LOINCGene) {
			continue
		}
		cc, str := c.GetValue().GetCodeableConcept(), strings.TrimSpace(c.GetValue().GetStringValue().GetValue())
		sym := ""
		for _, t := range conceptTexts(cc, str) {
			if s := strings.TrimSpace(t); s != "" {
				sym = s
				break
			}
		}
		if sym == "" {
			cs, _ := codings(cc)
			for _, cd := range cs {
				if cd.Code != "" && !strings.Contains(cd.Code, ":") {
					sym = strings.TrimSpace(cd.Code)
					break
				}
			}
		}
		if sym != "" {
			out = append(out, sym)
		}
	}
	return out
}

// valueTexts returns the Observation value's text, displays and string.
func valueTexts(obs *opb.Observation) []string {
	v := obs.GetValue()
	return conceptTexts(v.GetCodeableConcept(), strings.TrimSpace(v.GetStringValue().GetValue()))
}

// latest chooses among n results of one gene or variant: all agreeing →
// the first; disagreeing → the one strictly latest, with a note; no
// strictly latest → -1 with a note.
func latest(n int, at func(i int) (key string, when int64)) (int, string) {
	k0, _ := at(0)
	agree := true
	for i := 1; i < n; i++ {
		if k, _ := at(i); k != k0 {
			agree = false
		}
	}
	if agree {
		return 0, ""
	}
	best, bestWhen, tie := -1, int64(0), false
	for i := 0; i < n; i++ {
		_, w := at(i)
		switch {
		case w == 0:
			continue
		case best < 0 || w > bestWhen:
			best, bestWhen, tie = i, w, false
		case w == bestWhen:
			tie = true
		}
	}
	if best < 0 || tie {
		return -1, "results disagree and their dates do not say which is latest; none was used — review the lab reports"
	}
	return best, "results disagree; the latest was used — review the lab reports"
}

// geneSymbol picks the gene of a result: the gene component when the
// knowledge holds it (or it is an HLA gene), else the gene named at the
// start of the value.
func (m *Mapper) geneSymbol(component string, values []string) string {
	known := func(s string) string {
		s = strings.TrimSpace(s)
		if s == "" {
			return ""
		}
		if strings.HasPrefix(strings.ToUpper(s), "HLA-") {
			return strings.ToUpper(s)
		}
		for _, gn := range m.kb.Genes {
			if strings.EqualFold(gn.Symbol, s) {
				return gn.Symbol
			}
		}
		return ""
	}
	if g := known(component); g != "" {
		return g
	}
	if component != "" {
		return ""
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "* "); i > 0 {
			if g := known(v[:i]); g != "" {
				return g
			}
		}
	}
	return ""
}

// stripGene removes the gene symbol written before the alleles
// ("CYP2C19*2/*2", "CYP2C19 *1/*17", "CYP2C19*1/CYP2C19*2" → "*2/*2" …).
func stripGene(v, gene string) string {
	v = strings.TrimSpace(v)
	up := strings.ToUpper(v)
	g := strings.ToUpper(gene)
	var b strings.Builder
	for i := 0; i < len(v); {
		if strings.HasPrefix(up[i:], g) {
			i += len(g)
			for i < len(v) && v[i] == ' ' {
				i++
			}
			continue
		}
		b.WriteByte(v[i])
		i++
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func validationReason(err error) string {
	if ve, ok := err.(*engine.ValidationError); ok && len(ve.Fields) > 0 {
		return ve.Fields[0].Reason
	}
	return err.Error()
}

// hlaKeyed lists, per HLA gene, the alleles the knowledge's
// recommendations key on or has frequencies for ("HLA-B*15:02").
func (m *Mapper) hlaKeyed() map[string][]string {
	m.hlaOnce.Do(func() {
		set := map[string]map[string]bool{}
		add := func(gene, allele string) {
			if set[gene] == nil {
				set[gene] = map[string]bool{}
			}
			set[gene][gene+allele] = true
		}
		for _, r := range m.kb.Recommendations {
			for gene, v := range r.Lookup {
				if strings.HasPrefix(gene, "HLA-") && strings.HasPrefix(v, "*") {
					a, _, _ := strings.Cut(v, " ")
					add(gene, a)
				}
			}
		}
		for _, h := range m.kb.HLAAlleles {
			add(h.Gene, h.Allele)
		}
		m.hla = map[string][]string{}
		for gene, as := range set {
			m.hla[gene] = sortedKeys(as)
		}
	})
	return m.hla
}

// zygosity maps allelic state (53034-5) to the engine's zygosity: LOINC
// LA6705-3 homozygous, LA6706-1 heterozygous, and the words homozygous,
// heterozygous, hemizygous in the display or text.
func zygosity(cc *dpb.CodeableConcept) engine.Zygosity {
	switch {
	case hasCode(cc, SystemLOINC, LAHomozygous):
		return engine.Hom
	case hasCode(cc, SystemLOINC, LAHeterozygous):
		return engine.Het
	}
	for _, t := range conceptTexts(cc, "") {
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "homozygous":
			return engine.Hom
		case "heterozygous":
			return engine.Het
		case "hemizygous":
			return engine.Hemi
		}
	}
	return ""
}

// implication reads a Therapeutic Implication.
func (m *Mapper) implication(obs *opb.Observation, ref string, used map[string]bool) Implication {
	im := Implication{Ref: ref}
	if cc, str, ok := componentValue(obs, LOINCMedication); ok {
		label, drugs, _ := m.identify(cc)
		im.Medication = firstNonEmpty(label, str)
		if len(drugs) == 0 && str != "" {
			drugs = m.byText(str)
		}
		if len(drugs) > 0 {
			im.Drug = drugs[0].Drug
		}
	}
	if cc, str, ok := componentValue(obs, TBDTherapeutic, LOINCMetabolismSTU1); ok {
		im.Phenotype = firstNonEmpty(append(conceptTexts(cc, str), "")...)
	}
	for _, d := range obs.GetDerivedFrom() {
		r := referenceString(d)
		if r == "" {
			continue
		}
		im.DerivedFrom = append(im.DerivedFrom, r)
		for u := range used {
			if r == u || strings.HasSuffix(r, "/"+u) {
				im.Resolved = true
			}
		}
	}
	return im
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
