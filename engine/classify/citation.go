package classify

// Citation supports one field of a classification (spec §2.4): Field is
// the JSON path of the field in the classify answer.
type Citation struct {
	Field         string `json:"field"`
	Source        string `json:"source"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
	URL           string `json:"url"`
}
