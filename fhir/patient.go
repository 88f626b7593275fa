package fhir

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// PatientFacts are the facts of a Patient resource that change which
// guideline row applies.
type PatientFacts struct {
	// Ref is "Patient/<id>".
	Ref string `json:"ref,omitempty"`
	// Sex is "male" or "female"; other administrative genders are not
	// used (the guideline rows that depend on sex are G6PD's).
	Sex string `json:"sex,omitempty"`
	// AgeYears is the whole years of age at the evaluation time, nil when
	// the birth date is missing or too coarse to tell.
	AgeYears *float64 `json:"age_years,omitempty"`
	// BirthDate is the birth date as written.
	BirthDate string `json:"birth_date,omitempty"`
	// State is the Indian state of the patient's address when the
	// knowledge recognises it.
	State  string  `json:"state,omitempty"`
	Issues []Issue `json:"issues,omitempty"`
}

// ReadPatient reads a Patient resource; now is the evaluation time (for
// the age). An unreadable Patient gives empty facts and an issue.
func (m *Mapper) ReadPatient(raw json.RawMessage, now time.Time) PatientFacts {
	var f PatientFacts
	pr, err := m.p.parse(raw)
	if err != nil {
		f.Issues = append(f.Issues, Issue{Ref: refOf(pr.head, "patient"), ResourceType: pr.head.ResourceType, Severity: IssueError, Message: err.Error()})
		return f
	}
	pt := pr.cr.GetPatient()
	if pt == nil {
		f.Issues = append(f.Issues, Issue{Ref: refOf(pr.head, "patient"), ResourceType: pr.head.ResourceType, Severity: IssueError,
			Message: "a Patient was expected, got " + pr.head.ResourceType})
		return f
	}
	f.Ref = refOf(pr.head, "patient")
	if pr.partial != "" {
		f.Issues = append(f.Issues, Issue{Ref: f.Ref, ResourceType: "Patient", Severity: IssueWarning, Message: pr.partial})
	}
	if is := pr.toleratedIssue(f.Ref, "Patient", false); is != nil {
		f.Issues = append(f.Issues, *is)
	}
	switch g := codeString(pt.GetGender().GetValue().String()); g {
	case "male", "female":
		f.Sex = g
	}
	if bd := pt.GetBirthDate(); bd != nil && (bd.GetValueUs() != 0 || bd.GetPrecision() != dpb.Date_PRECISION_UNSPECIFIED) {
		f.BirthDate, f.AgeYears = age(bd, now)
		if f.AgeYears == nil && f.BirthDate != "" {
			f.Issues = append(f.Issues, Issue{Ref: f.Ref, ResourceType: "Patient", Severity: IssueInfo,
				Message: fmt.Sprintf("birth date %s is too coarse to tell the age in whole years; age not used", f.BirthDate)})
		}
	}
	f.State = m.state(pt.GetAddress())
	return f
}

// age computes whole years of age at now from a FHIR date of any
// precision. A partial date (year, year-month) gives an age only when
// every day it may stand for gives the same whole years.
func age(bd *dpb.Date, now time.Time) (string, *float64) {
	t := usTime(bd.GetValueUs(), bd.GetTimezone())
	y, mo, d := t.Date()
	var first, last time.Time
	var written string
	switch bd.GetPrecision() {
	case dpb.Date_YEAR:
		written = fmt.Sprintf("%04d", y)
		first, last = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC)
	case dpb.Date_MONTH:
		written = fmt.Sprintf("%04d-%02d", y, mo)
		first = time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
		last = first.AddDate(0, 1, -1)
	default:
		written = fmt.Sprintf("%04d-%02d-%02d", y, mo, d)
		first = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		last = first
	}
	a, b := wholeYears(first, now), wholeYears(last, now)
	if a != b || b < 0 {
		return written, nil
	}
	v := float64(b)
	return written, &v
}

func wholeYears(born, now time.Time) int {
	ny, nm, nd := now.UTC().Date()
	by, bm, bd := born.Date()
	years := ny - by
	if nm < bm || nm == bm && nd < bd {
		years--
	}
	return years
}

// indiaNames are the ways an address writes India as its country.
var indiaNames = map[string]bool{"in": true, "ind": true, "india": true, "bharat": true}

// state returns the Indian state of the first home (else any) address the
// knowledge recognises.
func (m *Mapper) state(addrs []*dpb.Address) string {
	var home, other []*dpb.Address
	for _, a := range addrs {
		if codeString(a.GetUse().GetValue().String()) == "home" {
			home = append(home, a)
		} else {
			other = append(other, a)
		}
	}
	for _, a := range append(home, other...) {
		country := strings.ToLower(strings.TrimSpace(a.GetCountry().GetValue()))
		if country != "" && !indiaNames[country] {
			continue
		}
		if st, ok := m.kb.State(a.GetState().GetValue()); ok {
			return st.Name
		}
	}
	return ""
}
