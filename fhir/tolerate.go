package fhir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// arrayElements lists, per resource type, the top-level elements FHIR R4
// defines as arrays that EHRs are known to send as one object (the CDS
// Hooks sandbox sends reasonCode and category so). Only these are
// repaired; any other deviation still fails the strict parse.
var arrayElements = map[string][]string{
	"MedicationRequest": {"identifier", "category", "reasonCode", "reasonReference", "dosageInstruction", "note",
		"basedOn", "supportingInformation", "insurance", "detectedIssue", "eventHistory", "contained"},
	"Medication":  {"identifier", "ingredient", "contained"},
	"Observation": {"identifier", "category", "basedOn", "partOf", "performer", "interpretation", "note", "referenceRange", "hasMember", "derivedFrom", "component", "contained"},
	"Condition":   {"identifier", "category", "bodySite", "stage", "evidence", "note", "contained"},
	"Patient":     {"identifier", "name", "telecom", "address", "contact", "communication", "generalPractitioner", "link", "contained"},
}

// nestedArrays are elements of data types that FHIR R4 defines as arrays,
// repaired wherever they occur: CodeableConcept.coding and
// Dosage.doseAndRate.
var nestedArrays = map[string]bool{"coding": true, "doseAndRate": true}

// tolerate repairs a resource whose array elements (arrayElements,
// nestedArrays) were sent as single objects. It returns the repaired JSON
// and the paths repaired; ok is false when nothing was repaired. Numbers
// keep their literal text.
func tolerate(resourceType string, raw json.RawMessage) (json.RawMessage, []string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return raw, nil, false
	}
	var paths []string
	for _, el := range arrayElements[resourceType] {
		if v, ok := obj[el].(map[string]any); ok {
			obj[el] = []any{v}
			paths = append(paths, el)
		}
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if m, ok := c.(map[string]any); ok && nestedArrays[k] && path != "" {
					x[k] = []any{m}
					paths = append(paths, p)
					c = x[k]
				}
				walk(c, p)
			}
		case []any:
			for _, c := range x {
				walk(c, path)
			}
		}
	}
	walk(obj, "")
	if len(paths) == 0 {
		return raw, nil, false
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return raw, nil, false
	}
	sort.Strings(paths)
	return b, paths, true
}

// toleratedNote describes the repairs for an Issue.
func toleratedNote(paths []string) string {
	return fmt.Sprintf("%s sent as a single object where FHIR R4 requires an array; read as a one-element array",
		strings.Join(paths, ", "))
}
