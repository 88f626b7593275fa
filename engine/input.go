package engine

// This file holds the input types of a Request that other parts read: position-level
// calls and coded indications.

// PositionCall is one position-level genotype call on REST.
type PositionCall struct {
	Chrom    string `json:"chrom"`
	Pos      int    `json:"pos"`
	Ref      string `json:"ref"`
	Alt      string `json:"alt,omitempty"` // one or more ALT alleles, comma-separated; "" or "." for none
	Genotype string `json:"genotype"`
}

// Ref is the zygosity of an explicit reference call.
const Ref Zygosity = "ref"

// Coding is one coded clinical fact: a code system (a FHIR system URL or a
// system name such as "ICD-10-CM") and a code.
type Coding struct {
	System  string `json:"system"`
	Code    string `json:"code"`
	Display string `json:"display,omitempty"`
}

// FHIR system URLs of the indication code systems.
const (
	SystemICD10URL    = "http://hl7.org/fhir/sid/icd-10"
	SystemICD10CMURL  = "http://hl7.org/fhir/sid/icd-10-cm"
	SystemICD10PCSURL = "http://www.cms.gov/Medicare/Coding/ICD10"
	SystemSNOMEDURL   = "http://snomed.info/sct"
)
