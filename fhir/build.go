package fhir

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/fhir/go/jsonformat"

	cpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/codes_go_proto"
	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
	mrpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/medication_request_go_proto"
	srpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/service_request_go_proto"
)

// OrderContext is who and where a suggested order is for.
type OrderContext struct {
	// PatientID is the FHIR id of the patient (required).
	PatientID string
	// EncounterID is the FHIR id of the encounter, if any.
	EncounterID string
	// Requester is a relative reference to the ordering user
	// ("PractitionerRole/123"), if any; other forms are ignored.
	Requester string
}

// MedicationSuggestion describes a MedicationRequest to suggest.
type MedicationSuggestion struct {
	OrderContext
	// Drug is the knowledge's name of the drug: it becomes the text of
	// the medication concept.
	Drug string
	// RxNormCUIs are the drug's RxNorm codes from the knowledge; none
	// means the order is coded by text only (no code is invented).
	RxNormCUIs []string
	// Note is added as an annotation for the prescriber.
	Note string
}

// TestSuggestion describes a genotype-test ServiceRequest to suggest.
type TestSuggestion struct {
	OrderContext
	// Text names the test ("CYP2C19 genotype"); it is coded by text only,
	// since the knowledge holds no test codes.
	Text string
	// Reason is the reason for the test, as text.
	Reason string
	Note   string
}

var relativeRef = regexp.MustCompile(`^[A-Z][A-Za-z]+/[A-Za-z0-9\-.]{1,64}$`)
var fhirID = regexp.MustCompile(`^[A-Za-z0-9\-.]{1,64}$`)

// requesterTypes are the resource types R4 allows as a request's requester.
var requesterTypes = map[string]bool{"Practitioner": true, "PractitionerRole": true, "Organization": true,
	"Patient": true, "RelatedPerson": true, "Device": true}

func (c OrderContext) check() error {
	if !fhirID.MatchString(c.PatientID) {
		return errors.New("fhir: a suggested order needs the patient's FHIR id")
	}
	if c.EncounterID != "" && !fhirID.MatchString(c.EncounterID) {
		return errors.New("fhir: the encounter id is not a FHIR id")
	}
	return nil
}

func ref(s string) *dpb.Reference {
	r := &dpb.Reference{Reference: &dpb.Reference_Uri{Uri: &dpb.String{Value: s}}}
	// A relative reference is stored typed, as the unmarshaller stores it.
	_ = jsonformat.NormalizeReference(r)
	return r
}

func (c OrderContext) requester() *dpb.Reference {
	if !relativeRef.MatchString(c.Requester) {
		return nil
	}
	typ, _, _ := strings.Cut(c.Requester, "/")
	if !requesterTypes[typ] {
		return nil
	}
	return ref(c.Requester)
}

func note(text string) []*dpb.Annotation {
	if text == "" {
		return nil
	}
	return []*dpb.Annotation{{Text: &dpb.Markdown{Value: text}}}
}

// BuildMedicationRequest returns the JSON of a draft MedicationRequest for
// the suggested drug.
func (p *Parser) BuildMedicationRequest(s MedicationSuggestion) (json.RawMessage, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.Drug == "" {
		return nil, errors.New("fhir: a suggested MedicationRequest needs a drug")
	}
	cc := &dpb.CodeableConcept{Text: &dpb.String{Value: s.Drug}}
	for _, c := range s.RxNormCUIs {
		cc.Coding = append(cc.Coding, &dpb.Coding{
			System:  &dpb.Uri{Value: SystemRxNorm},
			Code:    &dpb.Code{Value: c},
			Display: &dpb.String{Value: s.Drug},
		})
	}
	mr := &mrpb.MedicationRequest{
		Status: &mrpb.MedicationRequest_StatusCode{Value: cpb.MedicationrequestStatusCode_DRAFT},
		Intent: &mrpb.MedicationRequest_IntentCode{Value: cpb.MedicationRequestIntentCode_ORDER},
		Medication: &mrpb.MedicationRequest_MedicationX{
			Choice: &mrpb.MedicationRequest_MedicationX_CodeableConcept{CodeableConcept: cc},
		},
		Subject:   ref("Patient/" + s.PatientID),
		Requester: s.requester(),
		Note:      note(s.Note),
	}
	if s.EncounterID != "" {
		mr.Encounter = ref("Encounter/" + s.EncounterID)
	}
	return p.marshal(&rpb.ContainedResource{OneofResource: &rpb.ContainedResource_MedicationRequest{MedicationRequest: mr}})
}

// BuildServiceRequest returns the JSON of a draft ServiceRequest for a
// genotype test.
func (p *Parser) BuildServiceRequest(s TestSuggestion) (json.RawMessage, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.Text == "" {
		return nil, errors.New("fhir: a suggested ServiceRequest needs the test's name")
	}
	sr := &srpb.ServiceRequest{
		Status:    &srpb.ServiceRequest_StatusCode{Value: cpb.RequestStatusCode_DRAFT},
		Intent:    &srpb.ServiceRequest_IntentCode{Value: cpb.RequestIntentCode_ORDER},
		Code:      &dpb.CodeableConcept{Text: &dpb.String{Value: s.Text}},
		Subject:   ref("Patient/" + s.PatientID),
		Requester: s.requester(),
		Note:      note(s.Note),
	}
	if s.Reason != "" {
		sr.ReasonCode = []*dpb.CodeableConcept{{Text: &dpb.String{Value: s.Reason}}}
	}
	if s.EncounterID != "" {
		sr.Encounter = ref("Encounter/" + s.EncounterID)
	}
	return p.marshal(&rpb.ContainedResource{OneofResource: &rpb.ContainedResource_ServiceRequest{ServiceRequest: sr}})
}

func (p *Parser) marshal(cr *rpb.ContainedResource) (json.RawMessage, error) {
	b, err := p.m.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("fhir: marshal: %w", err)
	}
	return json.RawMessage(b), nil
}
