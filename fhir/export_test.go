package fhir

import (
	"encoding/json"
	"fmt"

	"github.com/google/fhir/go/fhirversion"
	"github.com/google/fhir/go/jsonformat"
)

// StrictR4 parses raw (one resource, or a Bundle with its entries) with
// google/fhir's R4 unmarshaller with its validation on: R4 datatypes,
// codes of required core bindings, required elements and references.
func StrictR4(raw json.RawMessage) error {
	u, err := jsonformat.NewUnmarshaller("UTC", fhirversion.R4)
	if err != nil {
		return err
	}
	if _, err := u.UnmarshalR4(raw); err != nil {
		return fmt.Errorf("R4 structure: %w", err)
	}
	return nil
}
