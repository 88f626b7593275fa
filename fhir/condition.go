package fhir

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Coding is a code system, code and display as written in a resource.
type Coding struct {
	System  string `json:"system,omitempty"`
	Code    string `json:"code"`
	Display string `json:"display,omitempty"`
}

// Condition is an active Condition of the patient as pgxsafety reads it:
// clinical context for the guideline population (clopidogrel's
// indication, for example).
type Condition struct {
	Ref string `json:"ref"`
	// Codes are the Condition.code codings (ICD-10, SNOMED CT …).
	Codes []Coding `json:"codes,omitempty"`
	// Text is Condition.code.text, else the first display.
	Text           string `json:"text,omitempty"`
	ClinicalStatus string `json:"clinical_status"`
	Onset          string `json:"onset,omitempty"`
}

// activeClinical are the Condition.clinicalStatus codes that count as a
// current condition.
var activeClinical = map[string]bool{"active": true, "recurrence": true, "relapse": true}

// ActiveConditions reads the patient's Conditions (the conditions prefetch
// or search): those whose clinicalStatus is active, recurrence or relapse
// and whose verificationStatus is not refuted or entered-in-error; a
// Condition about another patient is refused. The others are recorded as
// info issues.
func (m *Mapper) ActiveConditions(raws []json.RawMessage, patientID, place string) ([]Condition, []Issue) {
	var out []Condition
	var issues []Issue
	for i, po := range m.p.parseAll(raws) {
		where := fmt.Sprintf("%s entry %d", place, i+1)
		pr, err := po.pr, po.err
		if err != nil {
			issues = append(issues, Issue{Ref: refOf(pr.head, where), ResourceType: pr.head.ResourceType, Severity: IssueWarning, Message: err.Error()})
			continue
		}
		cond := pr.cr.GetCondition()
		ref := refOf(pr.head, where)
		if cond == nil {
			if pr.head.ResourceType != "OperationOutcome" {
				issues = append(issues, Issue{Ref: ref, ResourceType: pr.head.ResourceType, Severity: IssueInfo, Message: "not a Condition; ignored"})
			}
			continue
		}
		if is := pr.toleratedIssue(ref, "Condition", false); is != nil {
			issues = append(issues, *is)
		}
		if pr.partial != "" {
			issues = append(issues, Issue{Ref: ref, ResourceType: "Condition", Severity: IssueWarning, Message: pr.partial})
		}
		if subj := referenceString(cond.GetSubject()); subj != "" && patientID != "" && !sameResource(subj, "Patient", patientID) {
			issues = append(issues, Issue{Ref: ref, ResourceType: "Condition", Severity: IssueWarning,
				Message: fmt.Sprintf("its subject %s is not the patient of this call; not used", subj)})
			continue
		}
		cs, _ := codings(cond.GetClinicalStatus())
		clinical := ""
		for _, c := range cs {
			if c.Code != "" {
				clinical = c.Code
				break
			}
		}
		vs, _ := codings(cond.GetVerificationStatus())
		verification := ""
		for _, c := range vs {
			if c.Code != "" {
				verification = c.Code
				break
			}
		}
		switch {
		case verification == "refuted" || verification == "entered-in-error":
			issues = append(issues, Issue{Ref: ref, ResourceType: "Condition", Severity: IssueInfo,
				Message: "verification status " + verification + "; not used"})
			continue
		case !activeClinical[clinical]:
			st := clinical
			if st == "" {
				st = "missing"
			}
			issues = append(issues, Issue{Ref: ref, ResourceType: "Condition", Severity: IssueInfo,
				Message: "clinical status " + st + ": only active, recurrence or relapse count; not used"})
			continue
		}
		c := Condition{Ref: ref, ClinicalStatus: clinical}
		codes, text := codings(cond.GetCode())
		for _, cd := range codes {
			if cd.Code != "" {
				c.Codes = append(c.Codes, Coding(cd))
			}
			if text == "" {
				text = cd.Display
			}
		}
		c.Text = strings.TrimSpace(text)
		if c.Text == "" && len(c.Codes) == 0 {
			issues = append(issues, Issue{Ref: ref, ResourceType: "Condition", Severity: IssueInfo, Message: "no code or text; not used"})
			continue
		}
		if dt := cond.GetOnset().GetDateTime(); dt != nil {
			c.Onset = formatDateTime(dt)
		}
		out = append(out, c)
	}
	return out, issues
}
