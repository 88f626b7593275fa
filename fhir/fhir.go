// Package fhir maps FHIR R4 JSON to the engine's inputs and builds the FHIR
// resources pgxsafety suggests. It is the only package that imports the
// protocol buffers of github.com/google/fhir/go (DESIGN.md §1):
//
//   - MedicationRequest / Medication → the covered drug, from RxNorm, ATC or
//     the drug's name in the text (DraftOrders, ActiveMedications);
//   - Genomics Reporting IG Observations (Genotype, Haplotype, Variant,
//     Therapeutic Implication) → diplotypes, HLA allele status, rsIDs with
//     zygosity (ReadGenomics);
//   - Patient → sex, age and Indian state (ReadPatient);
//   - builders for the resources of card suggestions (MedicationRequest
//     for an alternative, ServiceRequest for a genotype test);
//   - a small FHIR REST client: read, search, Bundle paging (Client).
//
// Every resource is parsed on its own, so one bad resource never drops the
// others: a resource that google/fhir rejects is parsed again restricted
// to the elements pgxsafety reads (its "core"), and when even that fails it
// is reported as an Issue and skipped. The common shapes of the resources
// pgxsafety reads are decoded by a fast path (fastparse.go) that builds
// the same protos google/fhir would and hands anything else to
// google/fhir. Bundles are split with encoding/json, so a Bundle without
// the type R4 requires (as the draftOrders of CDS Hooks examples often
// are) is still read.
package fhir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/fhir/go/fhirversion"
	"github.com/google/fhir/go/jsonformat"
	"google.golang.org/protobuf/proto"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
)

// Code systems and codes read or written by this package.
const (
	SystemRxNorm  = "http://www.nlm.nih.gov/research/umls/rxnorm"
	SystemATC     = "http://www.whocc.no/atc"
	SystemSNOMED  = "http://snomed.info/sct"
	SystemLOINC   = "http://loinc.org"
	SystemDbSNP   = "http://www.ncbi.nlm.nih.gov/projects/SNP"
	SystemTBD     = "http://hl7.org/fhir/uv/genomics-reporting/CodeSystem/tbd-codes-cs"
	SystemHGNC    = "http://www.genenames.org"
	SystemGECateg = "http://terminology.hl7.org/CodeSystem/v2-0074"
)

// IssueSeverity grades an Issue.
type IssueSeverity string

// Issue severities.
const (
	// IssueError: the resource (or the item named) was not used.
	IssueError IssueSeverity = "error"
	// IssueWarning: the resource was used, but part of it was not.
	IssueWarning IssueSeverity = "warning"
	// IssueInfo: something worth recording that changes nothing.
	IssueInfo IssueSeverity = "info"
)

// Issue records a problem with one input resource.
type Issue struct {
	// Ref names the resource ("Observation/abc") or, when it has no id, its
	// place ("draftOrders entry 2").
	Ref string `json:"ref"`
	// ResourceType is the resource's type when known.
	ResourceType string        `json:"resource_type,omitempty"`
	Severity     IssueSeverity `json:"severity"`
	Message      string        `json:"message"`
	// Genomic is true when the resource is (or looks like) a genomic
	// result: losing it may hide a finding.
	Genomic bool `json:"genomic,omitempty"`
	// Tolerated lists the elements of a deviation pgxsafety tolerated
	// (an array sent as one object): element names only, safe to log.
	Tolerated []string `json:"tolerated,omitempty"`
}

// maxIssueText bounds the parser error text copied into an Issue.
const maxIssueText = 300

// Parser parses FHIR R4 resources with google/fhir/go. It is safe for
// concurrent use.
type Parser struct {
	u *jsonformat.Unmarshaller
	m *jsonformat.Marshaller
}

// NewParser returns a Parser. Resources are parsed without the
// unmarshaller's extended validation (required elements, reference
// checks): real EHR data is imperfect and pgxsafety checks what it reads
// itself. Primitive formats and unknown elements are still rejected.
func NewParser() (*Parser, error) {
	u, err := jsonformat.NewUnmarshallerWithoutValidation("UTC", fhirversion.R4)
	if err != nil {
		return nil, fmt.Errorf("fhir: unmarshaller: %w", err)
	}
	u.MaxNestingDepth = 64
	m, err := jsonformat.NewMarshaller(false, "", "", fhirversion.R4)
	if err != nil {
		return nil, fmt.Errorf("fhir: marshaller: %w", err)
	}
	return &Parser{u: u, m: m}, nil
}

// coreElements lists, per resource type, the elements pgxsafety reads. A
// resource that does not parse whole is parsed again with only these.
var coreElements = map[string][]string{
	"MedicationRequest": {"id", "status", "intent", "medicationCodeableConcept", "medicationReference",
		"contained", "subject", "encounter", "authoredOn", "reasonCode", "requester"},
	"Medication": {"id", "code", "ingredient", "status"},
	"Observation": {"id", "meta", "status", "category", "code", "subject", "effectiveDateTime",
		"effectivePeriod", "effectiveInstant", "issued", "valueCodeableConcept", "valueString",
		"component", "derivedFrom", "specimen", "contained", "performer"},
	"Patient":   {"id", "gender", "birthDate", "address"},
	"Condition": {"id", "clinicalStatus", "verificationStatus", "code", "subject", "onsetDateTime"},
	"Specimen":  {"id", "collection"},
}

// rawHead is the part of a resource read before parsing.
type rawHead struct {
	ResourceType string `json:"resourceType"`
	ID           string `json:"id"`
}

// head reads resourceType and id: in one pass over the top level
// (scanTop) or, when that gives up, with encoding/json (headDecode), so
// the answer is always encoding/json's.
func head(raw json.RawMessage) (rawHead, error) {
	if h, _, ok := scanTop(raw, false); ok {
		if h.ResourceType == "" {
			return h, fmt.Errorf("no resourceType")
		}
		return h, nil
	}
	return headDecode(raw)
}

// headDecode reads resourceType and id with encoding/json.
func headDecode(raw json.RawMessage) (rawHead, error) {
	var h rawHead
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("not a JSON object: %s", clip(err.Error()))
	}
	if h.ResourceType == "" {
		return h, fmt.Errorf("no resourceType")
	}
	return h, nil
}

// refOf names a resource for issues and citations.
func refOf(h rawHead, place string) string {
	if h.ResourceType != "" && h.ID != "" {
		return h.ResourceType + "/" + h.ID
	}
	if h.ResourceType != "" {
		return h.ResourceType + " (" + place + ")"
	}
	return place
}

// parsed is one resource parsed by google/fhir.
type parsed struct {
	cr   *rpb.ContainedResource
	head rawHead
	// partial is set when only the core elements parsed; it says why.
	partial string
	// tolerated lists the array elements sent as single objects and read
	// as one-element arrays (see tolerate).
	tolerated []string
}

// toleratedIssue is the note recorded for a resource read after repairing
// array elements sent as single objects, or nil.
func (p parsed) toleratedIssue(ref, resourceType string, genomic bool) *Issue {
	if len(p.tolerated) == 0 {
		return nil
	}
	return &Issue{Ref: ref, ResourceType: resourceType, Severity: IssueWarning, Genomic: genomic,
		Message: toleratedNote(p.tolerated), Tolerated: p.tolerated}
}

// parse parses one resource. The common shapes are read by the fast path
// (fastParse), which builds the proto google/fhir would; anything else is
// parsed by google/fhir. When the whole resource is rejected it is parsed
// again restricted to its core elements (see coreElements), and partial
// says what was dropped and why.
func (p *Parser) parse(raw json.RawMessage) (parsed, error) {
	if cr, h, ok := p.fastParse(raw); ok {
		return parsed{cr: cr, head: h}, nil
	}
	h, err := head(raw)
	if err != nil {
		return parsed{head: h}, err
	}
	cr, err := p.u.UnmarshalR4(raw)
	if err == nil {
		return parsed{cr: cr, head: h}, nil
	}
	first := clip(err.Error())
	// EHRs commonly send an array element as one object: repair the
	// known ones and say so.
	fixed, tolerated, repaired := tolerate(h.ResourceType, raw)
	if repaired {
		if cr, err := p.u.UnmarshalR4(fixed); err == nil {
			return parsed{cr: cr, head: h, tolerated: tolerated}, nil
		}
		raw = fixed
	}
	core, ok := coreElements[h.ResourceType]
	if !ok {
		return parsed{head: h}, fmt.Errorf("not valid FHIR R4: %s", first)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return parsed{head: h}, fmt.Errorf("not a JSON object: %s", clip(err.Error()))
	}
	keep := map[string]json.RawMessage{"resourceType": obj["resourceType"]}
	var dropped []string
	for k := range obj {
		if k == "resourceType" {
			continue
		}
		if slices.Contains(core, strings.TrimPrefix(k, "_")) {
			keep[k] = obj[k]
		} else {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) == 0 {
		return parsed{head: h}, fmt.Errorf("not valid FHIR R4: %s", first)
	}
	b, err := json.Marshal(keep)
	if err != nil {
		return parsed{head: h}, fmt.Errorf("not valid FHIR R4: %s", first)
	}
	cr, err = p.u.UnmarshalR4(b)
	if err != nil {
		return parsed{head: h}, fmt.Errorf("not valid FHIR R4: %s", first)
	}
	slices.Sort(dropped)
	return parsed{cr: cr, head: h, tolerated: tolerated, partial: fmt.Sprintf(
		"not valid FHIR R4 (%s); read without the elements pgxsafety does not use (%s)", first, strings.Join(dropped, ", "))}, nil
}

// parsedOrError is the outcome of parsing one resource.
type parsedOrError struct {
	pr  parsed
	err error
}

// parallelThreshold is the number of resources from which parseAll uses
// several goroutines (google/fhir parsing costs a few hundred µs each, the
// fast path tens of µs; a goroutine about one).
const parallelThreshold = 8

// parseAll parses each resource on its own, concurrently for larger sets
// (up to GOMAXPROCS workers); the results keep the input order.
func (p *Parser) parseAll(raws []json.RawMessage) []parsedOrError {
	out := make([]parsedOrError, len(raws))
	workers := min(runtime.GOMAXPROCS(0), len(raws))
	if len(raws) < parallelThreshold || workers < 2 {
		for i, raw := range raws {
			out[i].pr, out[i].err = p.parse(raw)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(raws) {
					return
				}
				out[i].pr, out[i].err = p.parse(raws[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// clip bounds error text copied into issues.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxIssueText {
		return string(r[:maxIssueText]) + "…"
	}
	return s
}

// MaxBundleEntries bounds the entries of one Bundle that Resources reads
// (empty entries included): the work of the resolution of references
// and of the mapping grows with them.
const MaxBundleEntries = 10000

// TooManyEntriesError is Resources' refusal of a Bundle with more than
// MaxBundleEntries entries.
type TooManyEntriesError struct{ Entries int }

func (e *TooManyEntriesError) Error() string {
	return fmt.Sprintf("Bundle: %d entries, more than the %d read", e.Entries, MaxBundleEntries)
}

// Resources splits a prefetch or search value into its resources: a
// Bundle gives its entries' resources (Bundle.type is not required), any
// other resource gives itself. An OperationOutcome is returned as an
// *OutcomeError, a Bundle of more than MaxBundleEntries entries as a
// *TooManyEntriesError. JSON null gives no resources.
func Resources(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	// One pass reads the head and a Bundle's entries; when it gives up,
	// encoding/json decodes (and names the error).
	h, b, ok := scanTop(raw, true)
	if !ok || h.ResourceType == "" {
		var err error
		if h, err = headDecode(raw); err != nil {
			return nil, err
		}
		if h.ResourceType == "Bundle" {
			b = bundle{}
			if err := json.Unmarshal(raw, &b); err != nil {
				//lint:ignore ST1005 "Bundle" is the FHIR resource type's name, capitalised as FHIR writes it
				return nil, fmt.Errorf("Bundle: %s", clip(err.Error()))
			}
		}
	}
	switch h.ResourceType {
	case "OperationOutcome":
		return nil, outcomeError(raw)
	case "Bundle":
		if len(b.Entry) > MaxBundleEntries {
			return nil, &TooManyEntriesError{Entries: len(b.Entry)}
		}
		return entryResources(b), nil
	}
	return []json.RawMessage{raw}, nil
}

// entryResources returns the resources of a Bundle's entries (entries
// without one, or with null, are skipped) with their references to other
// entries resolved.
func entryResources(b bundle) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(b.Entry))
	for _, e := range b.Entry {
		if r := bytes.TrimSpace(e.Resource); len(r) > 0 && !bytes.Equal(r, []byte("null")) {
			out = append(out, e.Resource)
		}
	}
	return resolveBundleRefs(b, out)
}

// resolveBundleRefs rewrites references to a Bundle entry's fullUrl
// ("urn:uuid:…", as transaction Bundles write them) into "Type/id" of
// that entry's resource, so a subject written urn:uuid:… is recognised as
// the patient (FHIR R4 Bundle reference resolution). Resources without
// such references are returned unchanged.
func resolveBundleRefs(b bundle, raws []json.RawMessage) []json.RawMessage {
	refs := map[string]string{}
	for _, e := range b.Entry {
		if !strings.HasPrefix(e.FullURL, "urn:") {
			continue
		}
		if h, err := head(e.Resource); err == nil && h.ID != "" {
			refs[e.FullURL] = h.ResourceType + "/" + h.ID
		}
	}
	if len(refs) == 0 {
		return raws
	}
	for i, raw := range raws {
		if !bytes.Contains(raw, []byte(`"urn:`)) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		changed := false
		var walk func(any)
		walk = func(x any) {
			switch t := x.(type) {
			case map[string]any:
				for k, c := range t {
					if s, ok := c.(string); ok && k == "reference" {
						if r, ok := refs[s]; ok {
							t[k] = r
							changed = true
						}
						continue
					}
					walk(c)
				}
			case []any:
				for _, c := range t {
					walk(c)
				}
			}
		}
		walk(v)
		if !changed {
			continue
		}
		if nb, err := json.Marshal(v); err == nil {
			raws[i] = nb
		}
	}
	return raws
}

// bundle is the part of a Bundle read with encoding/json.
type bundle struct {
	Entry []struct {
		FullURL  string          `json:"fullUrl"`
		Resource json.RawMessage `json:"resource"`
	} `json:"entry"`
	Link []struct {
		Relation string `json:"relation"`
		URL      string `json:"url"`
	} `json:"link"`
}

// OutcomeError is an OperationOutcome received where data was expected.
type OutcomeError struct {
	// Text is the issues' severity, code and diagnostics, clipped.
	Text string
}

// Error describes the outcome.
func (e *OutcomeError) Error() string { return "OperationOutcome: " + e.Text }

func outcomeError(raw json.RawMessage) error {
	var oo struct {
		Issue []struct {
			Severity    string `json:"severity"`
			Code        string `json:"code"`
			Diagnostics string `json:"diagnostics"`
			Details     struct {
				Text string `json:"text"`
			} `json:"details"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(raw, &oo); err != nil {
		return &OutcomeError{Text: "unreadable"}
	}
	var parts []string
	for _, is := range oo.Issue {
		s := strings.TrimSpace(is.Severity + " " + is.Code)
		if d := firstNonEmpty(is.Diagnostics, is.Details.Text); d != "" {
			s += ": " + d
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		parts = []string{"no issue given"}
	}
	return &OutcomeError{Text: clip(strings.Join(parts, "; "))}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// coding is a code system, code and display.
type coding struct {
	System, Code, Display string
}

// codings returns the codings of a CodeableConcept and its text.
func codings(cc *dpb.CodeableConcept) ([]coding, string) {
	if cc == nil {
		return nil, ""
	}
	out := make([]coding, 0, len(cc.GetCoding()))
	for _, c := range cc.GetCoding() {
		out = append(out, coding{
			System:  strings.TrimSpace(c.GetSystem().GetValue()),
			Code:    strings.TrimSpace(c.GetCode().GetValue()),
			Display: strings.TrimSpace(c.GetDisplay().GetValue()),
		})
	}
	return out, strings.TrimSpace(cc.GetText().GetValue())
}

// hasCode reports whether cc holds a coding with one of the codes (any
// system when system is empty).
func hasCode(cc *dpb.CodeableConcept, system string, codes ...string) bool {
	// As codings reads them (trimmed), without building the slice.
	for _, c := range cc.GetCoding() {
		if system != "" && strings.TrimSpace(c.GetSystem().GetValue()) != system {
			continue
		}
		code := strings.TrimSpace(c.GetCode().GetValue())
		for _, want := range codes {
			if code == want {
				return true
			}
		}
	}
	return false
}

// referenceString returns a Reference as written in JSON ("Patient/123",
// "#med1", an absolute URL), or "".
func referenceString(ref *dpb.Reference) string {
	if ref == nil {
		return ""
	}
	if s, ok := commonReferenceString(ref); ok {
		return s
	}
	return slowReferenceString(ref)
}

// commonReferenceString is referenceString without a clone or
// protoreflect for a uri, a fragment and the typed references of
// commonReferenceSetters; ok is false for any other form
// (TestReferenceStringMatchesDenormalize).
func commonReferenceString(ref *dpb.Reference) (string, bool) {
	var typ string
	var id *dpb.ReferenceId
	switch r := ref.Reference.(type) {
	case *dpb.Reference_Uri:
		if r.Uri == nil {
			return "", false
		}
		return strings.TrimSpace(r.Uri.GetValue()), true
	case *dpb.Reference_Fragment:
		if r.Fragment == nil {
			return "", false
		}
		return strings.TrimSpace("#" + r.Fragment.GetValue()), true
	case *dpb.Reference_PatientId:
		typ, id = "Patient", r.PatientId
	case *dpb.Reference_ObservationId:
		typ, id = "Observation", r.ObservationId
	case *dpb.Reference_OrganizationId:
		typ, id = "Organization", r.OrganizationId
	case *dpb.Reference_PractitionerId:
		typ, id = "Practitioner", r.PractitionerId
	case *dpb.Reference_SpecimenId:
		typ, id = "Specimen", r.SpecimenId
	case *dpb.Reference_EncounterId:
		typ, id = "Encounter", r.EncounterId
	case *dpb.Reference_MedicationId:
		typ, id = "Medication", r.MedicationId
	case *dpb.Reference_MedicationRequestId:
		typ, id = "MedicationRequest", r.MedicationRequestId
	case *dpb.Reference_ConditionId:
		typ, id = "Condition", r.ConditionId
	case *dpb.Reference_DiagnosticReportId:
		typ, id = "DiagnosticReport", r.DiagnosticReportId
	case *dpb.Reference_MolecularSequenceId:
		typ, id = "MolecularSequence", r.MolecularSequenceId
	case *dpb.Reference_ServiceRequestId:
		typ, id = "ServiceRequest", r.ServiceRequestId
	case *dpb.Reference_DeviceId:
		typ, id = "Device", r.DeviceId
	case *dpb.Reference_GroupId:
		typ, id = "Group", r.GroupId
	default:
		return "", false
	}
	if id == nil {
		return "", false
	}
	s := typ + "/" + id.GetValue()
	if h := id.GetHistory().GetValue(); h != "" {
		s += "/_history/" + h
	}
	return strings.TrimSpace(s), true
}

// slowReferenceString is referenceString through
// jsonformat.DenormalizeReference.
func slowReferenceString(ref *dpb.Reference) string {
	c := proto.Clone(ref).(*dpb.Reference)
	if err := jsonformat.DenormalizeReference(c); err != nil {
		return ""
	}
	return strings.TrimSpace(c.GetUri().GetValue())
}

// sameResource reports whether reference ref points at Type/id (relative
// or absolute, with or without _history).
func sameResource(ref, typ, id string) bool {
	if ref == "" || id == "" {
		return false
	}
	if i := strings.Index(ref, "/_history/"); i >= 0 {
		ref = ref[:i]
	}
	return ref == typ+"/"+id || strings.HasSuffix(ref, "/"+typ+"/"+id)
}

// formatDateTime writes a FHIR dateTime at its own precision.
func formatDateTime(dt *dpb.DateTime) string {
	if dt == nil || dt.GetValueUs() == 0 && dt.GetPrecision() == dpb.DateTime_PRECISION_UNSPECIFIED {
		return ""
	}
	t := usTime(dt.GetValueUs(), dt.GetTimezone())
	switch dt.GetPrecision() {
	case dpb.DateTime_YEAR:
		return t.Format("2006")
	case dpb.DateTime_MONTH:
		return t.Format("2006-01")
	case dpb.DateTime_DAY:
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339)
}

// formatInstant writes a FHIR instant.
func formatInstant(in *dpb.Instant) string {
	if in == nil || in.GetValueUs() == 0 {
		return ""
	}
	return usTime(in.GetValueUs(), in.GetTimezone()).Format(time.RFC3339)
}

func usTime(us int64, tz string) time.Time {
	t := time.UnixMicro(us)
	if loc := zone(tz); loc != nil {
		t = t.In(loc)
	}
	return t
}

// zone resolves the time zone google/fhir records ("Z", "+05:30", or an
// IANA name).
func zone(tz string) *time.Location {
	switch {
	case tz == "" || tz == "Z" || tz == "UTC":
		return time.UTC
	case (tz[0] == '+' || tz[0] == '-') && len(tz) == 6:
		if t, err := time.Parse("-07:00", tz); err == nil {
			_, off := t.Zone()
			return time.FixedZone(tz, off)
		}
	default:
		if loc, err := time.LoadLocation(tz); err == nil {
			return loc
		}
	}
	return time.UTC
}
