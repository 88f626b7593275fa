package fhir

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	cpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/codes_go_proto"
	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
	rpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/bundle_and_contained_resource_go_proto"
	condpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/condition_go_proto"
	medpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/medication_go_proto"
	mrpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/medication_request_go_proto"
	opb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/observation_go_proto"
	ppb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/patient_go_proto"
	spb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/resources/specimen_go_proto"
)

// Typed assignment (issue 25). Setting a field through protoreflect
// (Message.Set, List.Append, MessageType.New) goes through reflect and
// costs more than reading the JSON of the value. For the messages of the
// CDS order-sign prefetch (Observation and its components, MedicationRequest,
// Meta, Narrative, Range, SimpleQuantity) the fast path assigns the Go
// fields directly: typedSetters gives, per element of fastElements, a
// function that stores one value read for it (appending for a repeated
// element, making the choice container for a value[x] element). The values
// themselves are read as before. TestTypedSettersMatchProtoreflect checks
// every setter against the protoreflect assignment it replaces, and
// TestTypedFastPathMatchesReflect the whole parse of the corpus.

// setFunc stores v, read for one element, in dst.
type setFunc func(dst, v proto.Message)

// typedSetters lists, per fastElements name, the elements assigned
// without protoreflect. An element not listed is set through protoreflect.
var typedSetters = map[string]map[string]setFunc{
	"Observation": {
		"id":   func(d, v proto.Message) { d.(*opb.Observation).Id = v.(*dpb.Id) },
		"meta": func(d, v proto.Message) { d.(*opb.Observation).Meta = v.(*dpb.Meta) },
		"text": func(d, v proto.Message) { d.(*opb.Observation).Text = v.(*dpb.Narrative) },
		"extension": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.Extension = append(o.Extension, v.(*dpb.Extension))
		},
		"status": func(d, v proto.Message) { d.(*opb.Observation).Status = v.(*opb.Observation_StatusCode) },
		"category": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.Category = append(o.Category, v.(*dpb.CodeableConcept))
		},
		"code":      func(d, v proto.Message) { d.(*opb.Observation).Code = v.(*dpb.CodeableConcept) },
		"subject":   func(d, v proto.Message) { d.(*opb.Observation).Subject = v.(*dpb.Reference) },
		"encounter": func(d, v proto.Message) { d.(*opb.Observation).Encounter = v.(*dpb.Reference) },
		"effectiveDateTime": func(d, v proto.Message) {
			d.(*opb.Observation).Effective = &opb.Observation_EffectiveX{Choice: &opb.Observation_EffectiveX_DateTime{DateTime: v.(*dpb.DateTime)}}
		},
		"effectivePeriod": func(d, v proto.Message) {
			d.(*opb.Observation).Effective = &opb.Observation_EffectiveX{Choice: &opb.Observation_EffectiveX_Period{Period: v.(*dpb.Period)}}
		},
		"effectiveInstant": func(d, v proto.Message) {
			d.(*opb.Observation).Effective = &opb.Observation_EffectiveX{Choice: &opb.Observation_EffectiveX_Instant{Instant: v.(*dpb.Instant)}}
		},
		"issued": func(d, v proto.Message) { d.(*opb.Observation).Issued = v.(*dpb.Instant) },
		"performer": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.Performer = append(o.Performer, v.(*dpb.Reference))
		},
		"valueCodeableConcept": func(d, v proto.Message) {
			d.(*opb.Observation).Value = &opb.Observation_ValueX{Choice: &opb.Observation_ValueX_CodeableConcept{CodeableConcept: v.(*dpb.CodeableConcept)}}
		},
		"valueString": func(d, v proto.Message) {
			d.(*opb.Observation).Value = &opb.Observation_ValueX{Choice: &opb.Observation_ValueX_StringValue{StringValue: v.(*dpb.String)}}
		},
		"valueQuantity": func(d, v proto.Message) {
			d.(*opb.Observation).Value = &opb.Observation_ValueX{Choice: &opb.Observation_ValueX_Quantity{Quantity: v.(*dpb.Quantity)}}
		},
		"valueRange": func(d, v proto.Message) {
			d.(*opb.Observation).Value = &opb.Observation_ValueX{Choice: &opb.Observation_ValueX_Range{Range: v.(*dpb.Range)}}
		},
		"method":   func(d, v proto.Message) { d.(*opb.Observation).Method = v.(*dpb.CodeableConcept) },
		"specimen": func(d, v proto.Message) { d.(*opb.Observation).Specimen = v.(*dpb.Reference) },
		"basedOn": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.BasedOn = append(o.BasedOn, v.(*dpb.Reference))
		},
		"hasMember": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.HasMember = append(o.HasMember, v.(*dpb.Reference))
		},
		"derivedFrom": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.DerivedFrom = append(o.DerivedFrom, v.(*dpb.Reference))
		},
		"component": func(d, v proto.Message) {
			o := d.(*opb.Observation)
			o.Component = append(o.Component, v.(*opb.Observation_Component))
		},
	},
	"Observation.Component": {
		"code": func(d, v proto.Message) { d.(*opb.Observation_Component).Code = v.(*dpb.CodeableConcept) },
		"valueCodeableConcept": func(d, v proto.Message) {
			d.(*opb.Observation_Component).Value = &opb.Observation_Component_ValueX{Choice: &opb.Observation_Component_ValueX_CodeableConcept{CodeableConcept: v.(*dpb.CodeableConcept)}}
		},
		"valueString": func(d, v proto.Message) {
			d.(*opb.Observation_Component).Value = &opb.Observation_Component_ValueX{Choice: &opb.Observation_Component_ValueX_StringValue{StringValue: v.(*dpb.String)}}
		},
		"valueQuantity": func(d, v proto.Message) {
			d.(*opb.Observation_Component).Value = &opb.Observation_Component_ValueX{Choice: &opb.Observation_Component_ValueX_Quantity{Quantity: v.(*dpb.Quantity)}}
		},
		"valueRange": func(d, v proto.Message) {
			d.(*opb.Observation_Component).Value = &opb.Observation_Component_ValueX{Choice: &opb.Observation_Component_ValueX_Range{Range: v.(*dpb.Range)}}
		},
	},
	"MedicationRequest": {
		"id":   func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Id = v.(*dpb.Id) },
		"meta": func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Meta = v.(*dpb.Meta) },
		"text": func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Text = v.(*dpb.Narrative) },
		"extension": func(d, v proto.Message) {
			o := d.(*mrpb.MedicationRequest)
			o.Extension = append(o.Extension, v.(*dpb.Extension))
		},
		"status": func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Status = v.(*mrpb.MedicationRequest_StatusCode) },
		"intent": func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Intent = v.(*mrpb.MedicationRequest_IntentCode) },
		"category": func(d, v proto.Message) {
			o := d.(*mrpb.MedicationRequest)
			o.Category = append(o.Category, v.(*dpb.CodeableConcept))
		},
		"medicationCodeableConcept": func(d, v proto.Message) {
			d.(*mrpb.MedicationRequest).Medication = &mrpb.MedicationRequest_MedicationX{Choice: &mrpb.MedicationRequest_MedicationX_CodeableConcept{CodeableConcept: v.(*dpb.CodeableConcept)}}
		},
		"medicationReference": func(d, v proto.Message) {
			d.(*mrpb.MedicationRequest).Medication = &mrpb.MedicationRequest_MedicationX{Choice: &mrpb.MedicationRequest_MedicationX_Reference{Reference: v.(*dpb.Reference)}}
		},
		"subject":    func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Subject = v.(*dpb.Reference) },
		"encounter":  func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Encounter = v.(*dpb.Reference) },
		"authoredOn": func(d, v proto.Message) { d.(*mrpb.MedicationRequest).AuthoredOn = v.(*dpb.DateTime) },
		"requester":  func(d, v proto.Message) { d.(*mrpb.MedicationRequest).Requester = v.(*dpb.Reference) },
		"reasonCode": func(d, v proto.Message) {
			o := d.(*mrpb.MedicationRequest)
			o.ReasonCode = append(o.ReasonCode, v.(*dpb.CodeableConcept))
		},
	},
	"Meta": {
		"versionId":   func(d, v proto.Message) { d.(*dpb.Meta).VersionId = v.(*dpb.Id) },
		"lastUpdated": func(d, v proto.Message) { d.(*dpb.Meta).LastUpdated = v.(*dpb.Instant) },
		"source":      func(d, v proto.Message) { d.(*dpb.Meta).Source = v.(*dpb.Uri) },
		"profile": func(d, v proto.Message) {
			m := d.(*dpb.Meta)
			m.Profile = append(m.Profile, v.(*dpb.Canonical))
		},
	},
	"Narrative": {
		"status": func(d, v proto.Message) { d.(*dpb.Narrative).Status = v.(*dpb.Narrative_StatusCode) },
		"div":    func(d, v proto.Message) { d.(*dpb.Narrative).Div = v.(*dpb.Xhtml) },
	},
	"Range": {
		"low":  func(d, v proto.Message) { d.(*dpb.Range).Low = v.(*dpb.SimpleQuantity) },
		"high": func(d, v proto.Message) { d.(*dpb.Range).High = v.(*dpb.SimpleQuantity) },
	},
	"SimpleQuantity": {
		"value":  func(d, v proto.Message) { d.(*dpb.SimpleQuantity).Value = v.(*dpb.Decimal) },
		"unit":   func(d, v proto.Message) { d.(*dpb.SimpleQuantity).Unit = v.(*dpb.String) },
		"system": func(d, v proto.Message) { d.(*dpb.SimpleQuantity).System = v.(*dpb.Uri) },
		"code":   func(d, v proto.Message) { d.(*dpb.SimpleQuantity).Code = v.(*dpb.Code) },
	},
}

// typedNew makes an empty message of the composite types the fast path
// reads most, without reflect (MessageType.New allocates through it).
var typedNew = map[protoreflect.FullName]func() proto.Message{
	"google.fhir.r4.core.Observation.Component": func() proto.Message { return &opb.Observation_Component{} },
	"google.fhir.r4.core.Meta":                  func() proto.Message { return &dpb.Meta{} },
	"google.fhir.r4.core.Narrative":             func() proto.Message { return &dpb.Narrative{} },
	"google.fhir.r4.core.Range":                 func() proto.Message { return &dpb.Range{} },
	"google.fhir.r4.core.SimpleQuantity":        func() proto.Message { return &dpb.SimpleQuantity{} },
	"google.fhir.r4.core.Quantity":              func() proto.Message { return &dpb.Quantity{} },
	"google.fhir.r4.core.Period":                func() proto.Message { return &dpb.Period{} },
	"google.fhir.r4.core.Extension":             func() proto.Message { return &dpb.Extension{} },
	"google.fhir.r4.core.RelatedArtifact":       func() proto.Message { return &dpb.RelatedArtifact{} },
	"google.fhir.r4.core.Identifier":            func() proto.Message { return &dpb.Identifier{} },
	"google.fhir.r4.core.HumanName":             func() proto.Message { return &dpb.HumanName{} },
	"google.fhir.r4.core.Address":               func() proto.Message { return &dpb.Address{} },
	"google.fhir.r4.core.Observation":           func() proto.Message { return &opb.Observation{} },
	"google.fhir.r4.core.MedicationRequest":     func() proto.Message { return &mrpb.MedicationRequest{} },
	"google.fhir.r4.core.Medication":            func() proto.Message { return &medpb.Medication{} },
	"google.fhir.r4.core.Patient":               func() proto.Message { return &ppb.Patient{} },
	"google.fhir.r4.core.Condition":             func() proto.Message { return &condpb.Condition{} },
	"google.fhir.r4.core.Specimen":              func() proto.Message { return &spb.Specimen{} },
}

// typedEnums make the coded elements of the resources read most from
// their enum number, without reflect.
var typedEnums = map[protoreflect.FullName]func(protoreflect.EnumNumber) proto.Message{
	"google.fhir.r4.core.Observation.StatusCode": func(n protoreflect.EnumNumber) proto.Message {
		return &opb.Observation_StatusCode{Value: cpb.ObservationStatusCode_Value(n)}
	},
	"google.fhir.r4.core.MedicationRequest.StatusCode": func(n protoreflect.EnumNumber) proto.Message {
		return &mrpb.MedicationRequest_StatusCode{Value: cpb.MedicationrequestStatusCode_Value(n)}
	},
	"google.fhir.r4.core.MedicationRequest.IntentCode": func(n protoreflect.EnumNumber) proto.Message {
		return &mrpb.MedicationRequest_IntentCode{Value: cpb.MedicationRequestIntentCode_Value(n)}
	},
	"google.fhir.r4.core.Narrative.StatusCode": func(n protoreflect.EnumNumber) proto.Message {
		return &dpb.Narrative_StatusCode{Value: cpb.NarrativeStatusCode_Value(n)}
	},
}

// typedContain puts a resource of the types the fast path reads into its
// ContainedResource field, without protoreflect.
var typedContain = map[protoreflect.FullName]func(*rpb.ContainedResource, proto.Message){
	"google.fhir.r4.core.Observation": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_Observation{Observation: m.(*opb.Observation)}
	},
	"google.fhir.r4.core.MedicationRequest": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_MedicationRequest{MedicationRequest: m.(*mrpb.MedicationRequest)}
	},
	"google.fhir.r4.core.Medication": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_Medication{Medication: m.(*medpb.Medication)}
	},
	"google.fhir.r4.core.Patient": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_Patient{Patient: m.(*ppb.Patient)}
	},
	"google.fhir.r4.core.Condition": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_Condition{Condition: m.(*condpb.Condition)}
	},
	"google.fhir.r4.core.Specimen": func(cr *rpb.ContainedResource, m proto.Message) {
		cr.OneofResource = &rpb.ContainedResource_Specimen{Specimen: m.(*spb.Specimen)}
	},
}
