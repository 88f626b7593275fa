package fhir

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/anypb"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
	mpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/medication_go_proto"
)

// Mapper maps FHIR resources to the engine's inputs using one knowledge
// base. It is safe for concurrent use.
type Mapper struct {
	p       *Parser
	kb      *engine.Knowledge
	names   *drugnames.Reader
	calls   *calling.Caller
	hlaOnce sync.Once
	hla     map[string][]string // see hlaKeyed
}

// NewMapper returns a Mapper over the knowledge of names and calls (one
// knowledge base). Drugs are identified by the engine's one drug-name
// reader (drugnames.Reader: DrugsByCode, ReadDrug), the same that REST, the
// lab CSV and the CLI use; diplotypes are read by the allele caller.
func NewMapper(p *Parser, names *drugnames.Reader, calls *calling.Caller) *Mapper {
	return &Mapper{p: p, kb: calls.Knowledge, names: names, calls: calls}
}

// Parser returns the mapper's parser.
func (m *Mapper) Parser() *Parser { return m.p }

// Knowledge returns the mapper's knowledge.
func (m *Mapper) Knowledge() *engine.Knowledge { return m.kb }

// DrugMatch is a covered drug identified in a medication.
type DrugMatch struct {
	// Drug is the knowledge's name of the drug.
	Drug string `json:"drug"`
	// Via says how it was identified: "RxNorm 32968", "ATC B01AC04" or
	// "name in text".
	Via string `json:"via"`
}

// MedicationOrder is one MedicationRequest as pgxsafety reads it.
type MedicationOrder struct {
	// Ref is "MedicationRequest/<id>", or "" when the resource has no id.
	Ref    string `json:"ref,omitempty"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	Intent string `json:"intent,omitempty"`
	// Subject is the subject reference as written.
	Subject string `json:"subject,omitempty"`
	// Label is how the order names its medication (text, display or code).
	Label string `json:"label,omitempty"`
	// Drugs are the covered drugs identified; empty when the medication
	// is not covered or could not be identified.
	Drugs []DrugMatch `json:"drugs,omitempty"`
	// Unread are the parts of a medication of which some covered drug was
	// identified that name no covered drug: an ingredient of a
	// combination product or of an ingredient list, as written. They were
	// not checked.
	Unread []string `json:"unread,omitempty"`
	// Identified is false when nothing names the medication: no code, no
	// text, or a reference that could not be resolved.
	Identified bool `json:"identified"`
	// NoMedication is true when the order has no medication[x] at all (an
	// order-select draft before a drug is chosen).
	NoMedication bool `json:"no_medication,omitempty"`
	// Indication is the reasonCode text or displays.
	Indication string `json:"indication,omitempty"`
	// IndicationCodes are the reasonCode codings (ICD-10, SNOMED CT …)
	// as written.
	IndicationCodes []Coding `json:"indication_codes,omitempty"`
	AuthoredOn      string   `json:"authored_on,omitempty"`
	// Partial is set when only the core elements of the resource could be
	// read; it says why.
	Partial string `json:"partial,omitempty"`
	// Place is where the order came from ("draftOrders entry 1").
	Place string `json:"place,omitempty"`
}

// Orders is the result of reading a set of order resources.
type Orders struct {
	Medications []MedicationOrder
	// Other names the orders that are not MedicationRequests (they are not
	// checked).
	Other  []string
	Issues []Issue
}

// ResolveFunc fetches a referenced resource ("Medication/123") that is not
// among the resources given; it returns nil, nil when it cannot.
type ResolveFunc func(ref string) (json.RawMessage, error)

// MedicationOrders reads the MedicationRequests among raws (the resources
// of a draftOrders Bundle or of a search). A Medication referenced by an
// order is taken from the order's contained resources, from the Medication
// resources among raws, or from resolve (may be nil). place names the
// source in issues ("draftOrders", "activeMedications").
func (m *Mapper) MedicationOrders(raws []json.RawMessage, place string, resolve ResolveFunc) Orders {
	var out Orders
	meds := map[string]*mpb.Medication{}
	type pending struct {
		pr    parsed
		place string
	}
	var orders []pending
	for i, po := range m.p.parseAll(raws) {
		where := fmt.Sprintf("%s entry %d", place, i+1)
		pr, err := po.pr, po.err
		if err != nil {
			out.Issues = append(out.Issues, Issue{Ref: refOf(pr.head, where), ResourceType: pr.head.ResourceType, Severity: IssueError, Message: err.Error()})
			continue
		}
		switch {
		case pr.cr.GetMedicationRequest() != nil:
			orders = append(orders, pending{pr, where})
		case pr.cr.GetMedication() != nil:
			if pr.head.ID != "" {
				meds["Medication/"+pr.head.ID] = pr.cr.GetMedication()
			}
		default:
			out.Other = append(out.Other, refOf(pr.head, where))
		}
	}
	for _, o := range orders {
		mo, issues := m.medicationOrder(o.pr, o.place, meds, resolve)
		out.Medications = append(out.Medications, mo)
		out.Issues = append(out.Issues, issues...)
	}
	return out
}

func (m *Mapper) medicationOrder(pr parsed, place string, meds map[string]*mpb.Medication, resolve ResolveFunc) (MedicationOrder, []Issue) {
	mr := pr.cr.GetMedicationRequest()
	mo := MedicationOrder{
		ID:         pr.head.ID,
		Status:     codeString(mr.GetStatus().GetValue().String()),
		Intent:     codeString(mr.GetIntent().GetValue().String()),
		Subject:    referenceString(mr.GetSubject()),
		AuthoredOn: formatDateTime(mr.GetAuthoredOn()),
		Partial:    pr.partial,
		Place:      place,
	}
	if mo.ID != "" {
		mo.Ref = "MedicationRequest/" + mo.ID
	}
	ref := refOf(pr.head, place)
	var issues []Issue
	if pr.partial != "" {
		issues = append(issues, Issue{Ref: ref, ResourceType: "MedicationRequest", Severity: IssueWarning, Message: pr.partial})
	}
	if is := pr.toleratedIssue(ref, "MedicationRequest", false); is != nil {
		issues = append(issues, *is)
	}
	var reasons []string
	for _, rc := range mr.GetReasonCode() {
		cs, text := codings(rc)
		for _, c := range cs {
			if c.Code != "" {
				mo.IndicationCodes = append(mo.IndicationCodes, Coding(c))
			}
		}
		if text != "" {
			reasons = append(reasons, text)
			continue
		}
		for _, c := range cs {
			if c.Display != "" {
				reasons = append(reasons, c.Display)
				break
			}
		}
	}
	mo.Indication = strings.Join(reasons, "; ")

	med := mr.GetMedication()
	switch {
	case med.GetCodeableConcept() != nil:
		mo.Label, mo.Drugs, mo.Unread, mo.Identified = m.identifyParts(med.GetCodeableConcept())
	case med.GetReference() != nil:
		r := referenceString(med.GetReference())
		md, why := m.resolveMedication(r, mr.GetContained(), meds, resolve)
		if md == nil {
			issues = append(issues, Issue{Ref: ref, ResourceType: "MedicationRequest", Severity: IssueError,
				Message: fmt.Sprintf("its medication reference %q could not be resolved (%s); the drug was not identified", r, why)})
			if d := strings.TrimSpace(med.GetReference().GetDisplay().GetValue()); d != "" {
				mo.Label = d
				mo.Drugs, mo.Unread = m.readText(d)
				mo.Identified = true
			}
			break
		}
		mo.Label, mo.Drugs, mo.Unread, mo.Identified = m.identifyParts(md.GetCode())
		if len(mo.Drugs) == 0 {
			// A Medication without a usable code may list its ingredients;
			// an ingredient that names no covered drug is kept as unread.
			var unread []string
			for _, ing := range md.GetIngredient() {
				if cc := ing.GetItem().GetCodeableConcept(); cc != nil {
					label, drugs, parts, ok := m.identifyParts(cc)
					if ok && mo.Label == "" {
						mo.Label, mo.Identified = label, true
					}
					for _, d := range drugs {
						mo.Drugs = appendMatch(mo.Drugs, d)
					}
					if ok && len(drugs) == 0 {
						unread = appendFold(unread, label)
					}
					for _, p := range parts {
						unread = appendFold(unread, p)
					}
				}
			}
			if len(mo.Drugs) > 0 {
				mo.Unread = unread
			}
		}
	default:
		mo.NoMedication = true
		issues = append(issues, Issue{Ref: ref, ResourceType: "MedicationRequest", Severity: IssueError,
			Message: "it names no medication (no medicationCodeableConcept or medicationReference)"})
	}
	return mo, issues
}

// resolveMedication finds the Medication a reference points at.
func (m *Mapper) resolveMedication(ref string, contained []*anypb.Any, meds map[string]*mpb.Medication, resolve ResolveFunc) (*mpb.Medication, string) {
	if ref == "" {
		return nil, "empty reference"
	}
	if strings.HasPrefix(ref, "#") {
		id := strings.TrimPrefix(ref, "#")
		for _, a := range contained {
			cr := &rpb.ContainedResource{}
			if err := a.UnmarshalTo(cr); err != nil {
				continue
			}
			if md := cr.GetMedication(); md != nil && md.GetId().GetValue() == id {
				return md, ""
			}
		}
		return nil, "no contained Medication has that id"
	}
	for k, md := range meds {
		if sameResource(ref, "Medication", strings.TrimPrefix(k, "Medication/")) {
			return md, ""
		}
	}
	if resolve == nil {
		return nil, "it is not among the resources sent and no FHIR server was available"
	}
	raw, err := resolve(ref)
	if err != nil {
		return nil, clip(err.Error())
	}
	if raw == nil {
		return nil, "not found"
	}
	pr, err := m.p.parse(raw)
	if err != nil {
		return nil, err.Error()
	}
	if md := pr.cr.GetMedication(); md != nil {
		return md, ""
	}
	return nil, "the reference is not a Medication"
}

func appendMatch(ms []DrugMatch, d DrugMatch) []DrugMatch {
	for _, x := range ms {
		if x.Drug == d.Drug {
			return ms
		}
	}
	return append(ms, d)
}

// identify names the covered drugs of a medication concept: RxNorm and ATC
// codes of the knowledge first; when no code is known, the drug names
// found in the concept's text and displays (SNOMED CT and SCD/SBD codes
// are read through their displays: the knowledge holds no such codes).
// label is the concept's own name; ok is false when the concept has no
// code and no text at all.
func (m *Mapper) identify(cc *dpb.CodeableConcept) (label string, drugs []DrugMatch, ok bool) {
	label, drugs, _, ok = m.identifyParts(cc)
	return label, drugs, ok
}

// identifyParts is identify that also returns, when some covered drug was
// read from the concept's text or displays, the parts of that text that
// name no covered drug (the unread ingredients of a combination).
func (m *Mapper) identifyParts(cc *dpb.CodeableConcept) (label string, drugs []DrugMatch, unread []string, ok bool) {
	cs, text := codings(cc)
	label = text
	for _, c := range cs {
		if label == "" && c.Display != "" {
			label = c.Display
		}
		if c.Code != "" || c.Display != "" {
			ok = true
		}
		switch c.System {
		case SystemRxNorm:
			for _, d := range m.names.DrugsByCode(engine.SystemRxNormURL, c.Code) {
				drugs = appendMatch(drugs, DrugMatch{Drug: d, Via: "RxNorm " + c.Code})
			}
		case SystemATC:
			for _, d := range m.names.DrugsByCode(engine.SystemATCURL, c.Code) {
				drugs = appendMatch(drugs, DrugMatch{Drug: d, Via: "ATC " + strings.ToUpper(c.Code)})
			}
		}
	}
	if text != "" {
		ok = true
	}
	if label == "" && len(cs) > 0 {
		label = strings.TrimSpace(systemName(cs[0].System) + " " + cs[0].Code)
	}
	if len(drugs) > 0 {
		return label, drugs, nil, ok
	}
	texts := []string{text}
	for _, c := range cs {
		texts = append(texts, c.Display)
	}
	for _, t := range texts {
		ds, parts := m.readText(t)
		for _, d := range ds {
			drugs = appendMatch(drugs, d)
		}
		for _, p := range parts {
			unread = appendFold(unread, p)
		}
	}
	// A part left unread that reads on its own as a covered drug (an
	// ingredient a combination product's source lists without marking it
	// as covered: "Ecosprin-AV" → atorvastatin, with "Aspirin" unmarked)
	// is checked as that drug, never dropped.
	var still []string
	for _, p := range unread {
		ds, _ := m.readText(p)
		if len(ds) == 0 {
			still = append(still, p)
			continue
		}
		for _, d := range ds {
			drugs = appendMatch(drugs, DrugMatch{Drug: d.Drug, Via: "ingredient in text"})
		}
	}
	return label, drugs, still, ok
}

// systemName is the short name of a drug coding system, for labels.
func systemName(system string) string {
	switch system {
	case SystemRxNorm:
		return "RxNorm"
	case SystemATC:
		return "ATC"
	case SystemSNOMED:
		return "SNOMED CT"
	}
	return system
}

// appendFold appends s unless it is empty or already in ss (any case).
func appendFold(ss []string, s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ss
	}
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return ss
		}
	}
	return append(ss, s)
}

// byText finds the covered drugs named in free text with the engine's
// drug-name reader: names, salts, brands, abbreviations, combination
// products and names inside a longer text ("Clopidogrel 75 MG Oral Tablet
// [Plavix]" → clopidogrel). A name the reader does not trust alone (a short
// abbreviation) identifies nothing.
func (m *Mapper) byText(text string) []DrugMatch {
	drugs, _ := m.readText(text)
	return drugs
}

// readText is byText that also returns, when some covered drug was read,
// the parts of the text that name no covered drug (an ingredient of a
// combination product or of an ingredient list).
func (m *Mapper) readText(text string) ([]DrugMatch, []string) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	r := m.names.ReadDrug(text)
	if r.Status != engine.DrugStatusRecognised && r.Status != engine.DrugStatusPartial {
		return nil, nil
	}
	var out []DrugMatch
	for _, d := range r.Drugs {
		out = appendMatch(out, DrugMatch{Drug: d, Via: "name in text"})
	}
	var unread []string
	if r.Status == engine.DrugStatusPartial {
		for _, u := range r.Unrecognised {
			unread = appendFold(unread, u)
		}
	}
	return out, unread
}

// codeString turns a google/fhir enum name (ENTERED_IN_ERROR) into the FHIR
// code (entered-in-error).
func codeString(enum string) string {
	if enum == "" || strings.HasPrefix(enum, "INVALID") {
		return ""
	}
	return strings.ReplaceAll(strings.ToLower(enum), "_", "-")
}

// ActiveMedications reads the MedicationRequests of a search for the
// patient's active orders. Orders whose status is not active are dropped.
func (m *Mapper) ActiveMedications(raws []json.RawMessage, place string, resolve ResolveFunc) Orders {
	all := m.MedicationOrders(raws, place, resolve)
	var keep []MedicationOrder
	for _, mo := range all.Medications {
		if mo.Status == "active" {
			keep = append(keep, mo)
		}
	}
	all.Medications = keep
	return all
}
