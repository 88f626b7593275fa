package fhir

import (
	"encoding/json"
	"fmt"
	"regexp"
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
	LOINCMedication      = "51963-7" // Medication assessed
	LOINCMetabolismSTU1  = "53040-2" // STU1 medication-metabolism implication
	LAPresent            = "LA9633-4"
	LAAbsent             = "LA9634-2"
	LAHomozygous         = "LA6705-3"
	LAHeterozygous       = "LA6706-1"
	TBDTherapeutic       = "therapeutic-implication"
)

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
	HLA        map[string]string
	// Results lists every genomic Observation read, used or not.
	Results      []GenomicResult
	Implications []Implication
	Issues       []Issue
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
		}
	}
	if len(g.HLA) > 0 {
		req.HLA = make(map[string]string, len(g.HLA))
		for k, v := range g.HLA {
			req.HLA[k] = v
		}
	}
}

// HasGenotype reports whether any genotype went into the check.
func (g *Genomics) HasGenotype() bool {
	return len(g.Variants) > 0 || len(g.Diplotypes) > 0 || len(g.HLA) > 0
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

// geneOf returns the gene symbol of component 48018-6: its display, text
// or code when the code is a symbol (HGNC ids are not mapped: the
// knowledge holds symbols only).
func geneOf(obs *opb.Observation) string {
	cc, str, ok := componentValue(obs, LOINCGene)
	if !ok {
		return ""
	}
	for _, t := range conceptTexts(cc, str) {
		if s := strings.TrimSpace(t); s != "" {
			return s
		}
	}
	cs, _ := codings(cc)
	for _, c := range cs {
		if c.Code != "" && !strings.Contains(c.Code, ":") {
			return strings.TrimSpace(c.Code)
		}
	}
	return ""
}

// valueTexts returns the Observation value's text, displays and string.
func valueTexts(obs *opb.Observation) []string {
	v := obs.GetValue()
	return conceptTexts(v.GetCodeableConcept(), strings.TrimSpace(v.GetStringValue().GetValue()))
}

var hlaAllelePattern = regexp.MustCompile(`(?i)(?:HLA-)?([A-Z]+[0-9]*)\*([0-9]{2,3}:[0-9]{2,3})(?::[0-9]{2,3})*`)

// negativeWords mark an HLA result text as "not carried".
var negativeWords = []string{"negative", "absent", "not detected", "not present"}

type geneCall struct {
	value string // diplotype ("*2/*2") or "" for HLA
	hla   map[string]string
	res   *GenomicResult
	when  int64
}

// combine turns the counted results into the engine's genotype fields.
func (m *Mapper) combine(g *Genomics, reads []obsRead) {
	genotypes := map[string][]geneCall{}
	haplotypes := map[string][]obsRead{}
	type varCall struct {
		present bool
		zyg     engine.Zygosity
		res     *GenomicResult
		when    int64
	}
	variants := map[string][]varCall{}
	var implications []obsRead
	for _, rd := range reads {
		res := &g.Results[rd.idx]
		obs := rd.obs
		switch rd.res.Kind {
		case KindGenotype:
			gene, call, note := m.genotype(obs)
			res.Gene, res.Value = gene, strings.Join(valueTexts(obs), " / ")
			if note != "" {
				res.Note = note
				g.Issues = append(g.Issues, Issue{Ref: res.Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true, Message: note})
				continue
			}
			call.res, call.when = res, rd.res.when
			genotypes[gene] = append(genotypes[gene], call)
		case KindHaplotype:
			gene := m.geneSymbol(geneOf(obs), valueTexts(obs))
			res.Gene, res.Value = gene, strings.Join(valueTexts(obs), " / ")
			if gene == "" {
				res.Note = "no gene the knowledge holds is named; not used"
				continue
			}
			haplotypes[gene] = append(haplotypes[gene], rd)
		case KindVariant:
			rs, present, zyg, gene, note := variant(obs)
			res.Gene = gene
			res.Value = strings.TrimSpace(fmt.Sprintf("%s %s %s", rs, map[bool]string{true: "present", false: "absent"}[present], zyg))
			if note != "" {
				res.Note = note
				continue
			}
			variants[rs] = append(variants[rs], varCall{present: present, zyg: zyg, res: res, when: rd.res.when})
		case KindImplication:
			implications = append(implications, rd)
		}
	}

	// Genotypes: one per gene; disagreeing results → the latest.
	g.Diplotypes, g.HLA = map[string]string{}, map[string]string{}
	genes := sortedKeys(genotypes)
	for _, gene := range genes {
		calls := genotypes[gene]
		pick, note := latest(len(calls), func(i int) (string, int64) {
			return calls[i].value + fmt.Sprint(calls[i].hla), calls[i].when
		})
		if pick < 0 {
			for _, c := range calls {
				c.res.Note = note
			}
			g.Issues = append(g.Issues, Issue{Ref: calls[0].res.Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true,
				Message: fmt.Sprintf("%s: %s", gene, note)})
			continue
		}
		if note != "" {
			g.Issues = append(g.Issues, Issue{Ref: calls[pick].res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: fmt.Sprintf("%s: %s", gene, note)})
		}
		c := calls[pick]
		c.res.Used = true
		if c.hla != nil {
			for a, s := range c.hla {
				g.HLA[a] = s
			}
		} else {
			g.Diplotypes[gene] = c.value
		}
	}
	// Haplotypes: two per gene make a diplotype, where no genotype exists.
	for _, gene := range sortedKeys(haplotypes) {
		hs := haplotypes[gene]
		if _, done := g.Diplotypes[gene]; done {
			for _, h := range hs {
				g.Results[h.idx].Note = "a Genotype result of the gene is used instead"
			}
			continue
		}
		d, note := m.haplotypeDiplotype(gene, hs)
		if note != "" {
			for _, h := range hs {
				g.Results[h.idx].Note = note
			}
			g.Issues = append(g.Issues, Issue{Ref: g.Results[hs[0].idx].Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true,
				Message: fmt.Sprintf("%s haplotypes: %s", gene, note)})
			continue
		}
		g.Diplotypes[gene] = d
		for _, h := range hs {
			g.Results[h.idx].Used = true
		}
	}
	// Variants.
	g.Zygosity = map[string]engine.Zygosity{}
	for _, rs := range sortedKeys(variants) {
		vs := variants[rs]
		pick, note := latest(len(vs), func(i int) (string, int64) {
			return fmt.Sprint(vs[i].present, vs[i].zyg), vs[i].when
		})
		if pick < 0 {
			for _, v := range vs {
				v.res.Note = note
			}
			g.Issues = append(g.Issues, Issue{Ref: vs[0].res.Ref, ResourceType: "Observation", Severity: IssueError, Genomic: true,
				Message: fmt.Sprintf("%s: %s", rs, note)})
			continue
		}
		if note != "" {
			g.Issues = append(g.Issues, Issue{Ref: vs[pick].res.Ref, ResourceType: "Observation", Severity: IssueWarning, Genomic: true,
				Message: fmt.Sprintf("%s: %s", rs, note)})
		}
		v := vs[pick]
		v.res.Used = true
		if !v.present {
			v.res.Note = "reported absent: not a carrier"
			continue
		}
		g.Variants = append(g.Variants, rs)
		if v.zyg != "" {
			g.Zygosity[rs] = v.zyg
		}
	}
	// Therapeutic implications.
	used := map[string]bool{}
	for _, r := range g.Results {
		if r.Used {
			used[r.Ref] = true
		}
	}
	for _, rd := range implications {
		res := &g.Results[rd.idx]
		im := m.implication(rd.obs, res.Ref, used)
		im.Effective = res.Effective
		res.Value = strings.TrimSpace(im.Phenotype + " (" + firstNonEmpty(im.Medication, im.Drug, "medication not named") + ")")
		res.Used = im.Resolved
		if !im.Resolved {
			res.Note = "no genotype it derives from was among the results used"
		}
		g.Implications = append(g.Implications, im)
	}
	if len(g.Diplotypes) == 0 {
		g.Diplotypes = nil
	}
	if len(g.HLA) == 0 {
		g.HLA = nil
	}
	if len(g.Zygosity) == 0 {
		g.Zygosity = nil
	}
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

// genotype reads a Genotype Observation: a diplotype, or for an HLA gene
// the allele statuses. note is set when it cannot be used.
func (m *Mapper) genotype(obs *opb.Observation) (gene string, call geneCall, note string) {
	values := valueTexts(obs)
	comp := geneOf(obs)
	gene = m.geneSymbol(comp, values)
	if gene == "" {
		if comp != "" {
			return comp, call, fmt.Sprintf("gene %q is not in the knowledge; not used", comp)
		}
		return "", call, "no gene named (component 48018-6) and none recognised in the value; not used"
	}
	if len(values) == 0 {
		return gene, call, "the genotype has no value; not used"
	}
	if strings.HasPrefix(gene, "HLA-") {
		hla, n := m.hlaStatus(gene, values)
		if n != "" {
			return gene, call, n
		}
		call.hla = hla
		return gene, call, ""
	}
	var reasons []string
	for _, v := range values {
		d := stripGene(v, gene)
		if d == "" {
			continue
		}
		if err := m.kb.Validate(engine.Request{Drug: "x", Diplotypes: map[string]string{gene: d}}); err != nil {
			reasons = append(reasons, validationReason(err))
			continue
		}
		call.value = d
		return gene, call, ""
	}
	if len(reasons) == 0 {
		reasons = []string{"no diplotype in the value"}
	}
	return gene, call, fmt.Sprintf("%s genotype %q is not a diplotype of the CPIC allele definitions (%s); not used",
		gene, values[0], strings.Join(reasons, "; "))
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

// hlaStatus reads the HLA alleles named in a genotype of gene: named
// alleles are positive (negative when the text says negative, absent or
// not detected); when two alleles are named (a full typing) every other
// allele the knowledge keys on is negative. Only alleles the knowledge
// holds are returned.
func (m *Mapper) hlaStatus(gene string, values []string) (map[string]string, string) {
	text := strings.Join(values, " ")
	named := map[string]bool{}
	for _, sm := range hlaAllelePattern.FindAllStringSubmatch(text, -1) {
		g := "HLA-" + strings.ToUpper(sm[1])
		if g != gene {
			return nil, fmt.Sprintf("the value names %s alleles in a %s result; not used", g, gene)
		}
		named[g+"*"+sm[2]] = true
	}
	if len(named) == 0 {
		return nil, fmt.Sprintf("no %s allele recognised in %q; not used", gene, text)
	}
	status := "positive"
	low := strings.ToLower(text)
	for _, w := range negativeWords {
		if strings.Contains(low, w) {
			status = "negative"
		}
	}
	out := map[string]string{}
	keyed := m.hlaKeyed()[gene]
	for a := range named {
		if m.knownHLA(a) {
			out[a] = status
		}
	}
	if status == "positive" && len(hlaAllelePattern.FindAllString(text, -1)) >= 2 {
		for _, a := range keyed {
			if !named[a] {
				out[a] = "negative"
			}
		}
	}
	if len(out) == 0 {
		// A typing that names only alleles no guideline keys on says
		// nothing the engine can use; it is not an error.
		return map[string]string{}, ""
	}
	return out, ""
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

func (m *Mapper) knownHLA(allele string) bool {
	gene, _, _ := strings.Cut(allele, "*")
	for _, a := range m.hlaKeyed()[gene] {
		if a == allele {
			return true
		}
	}
	return false
}

// haplotypeDiplotype joins the haplotypes of one gene into a diplotype:
// two haplotypes, or one whose allelic state (53034-5) is homozygous (the
// allele twice) or hemizygous (the allele once).
func (m *Mapper) haplotypeDiplotype(gene string, hs []obsRead) (string, string) {
	if len(hs) > 2 {
		return "", fmt.Sprintf("%d haplotypes reported; a diplotype needs two; not used", len(hs))
	}
	var alleles []string
	for _, h := range hs {
		var a string
		for _, v := range valueTexts(h.obs) {
			if s := stripGene(v, gene); s != "" {
				a = s
				break
			}
		}
		if a == "" {
			return "", "a haplotype has no value; not used"
		}
		alleles = append(alleles, a)
	}
	if len(hs) == 1 {
		cc, _, _ := componentValue(hs[0].obs, LOINCZygosity)
		switch zygosity(cc) {
		case engine.Hom:
			alleles = append(alleles, alleles[0])
		case engine.Hemi:
		default:
			return "", "one haplotype without a homozygous or hemizygous allelic state does not give a diplotype; not used"
		}
	}
	d := strings.Join(alleles, "/")
	if err := m.kb.Validate(engine.Request{Drug: "x", Diplotypes: map[string]string{gene: d}}); err != nil {
		return "", fmt.Sprintf("diplotype %q is not of the CPIC allele definitions (%s); not used", d, validationReason(err))
	}
	return d, ""
}

// variant reads a Variant Observation.
func variant(obs *opb.Observation) (rs string, present bool, zyg engine.Zygosity, gene string, note string) {
	gene = geneOf(obs)
	cc, str, ok := componentValue(obs, LOINCDiscreteVariant, LOINCDbSNPLegacy)
	if !ok {
		return "", false, "", gene, "no dbSNP id (component 81252-9); a variant given only in HGVS is not used"
	}
	var cands []string
	cs, text := codings(cc)
	for _, c := range cs {
		if c.System == SystemDbSNP || strings.HasPrefix(strings.ToLower(c.Code), "rs") {
			cands = append(cands, c.Code)
		}
	}
	cands = append(cands, text, str)
	for _, c := range cands {
		if n, ok := engine.NormaliseRsID(c); ok {
			rs = n
			break
		}
	}
	if rs == "" {
		return "", false, "", gene, "the variant component holds no rsID of the form rs<digits>; not used"
	}
	present = true
	v := obs.GetValue().GetCodeableConcept()
	switch {
	case hasCode(v, "", LAAbsent):
		present = false
	case hasCode(v, "", LAPresent):
	default:
		for _, t := range valueTexts(obs) {
			if strings.EqualFold(strings.TrimSpace(t), "absent") {
				present = false
			}
		}
	}
	if zc, _, ok := componentValue(obs, LOINCZygosity); ok {
		zyg = zygosity(zc)
	}
	return rs, present, zyg, gene, ""
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
