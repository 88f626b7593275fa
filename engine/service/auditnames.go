package service

import "github.com/pgxsafety/pgxsafety/engine"

// auditSeverityName is how the audit records spell a severity: the spec's
// names, as the records have always held them (the answers' own wire names
// are pgxapi's; the audit format is this package's).
func auditSeverityName(s engine.Severity) string {
	switch s {
	case engine.SeverityHigh:
		return "HIGH"
	case engine.SeverityModerate:
		return "MODERATE"
	case engine.SeverityInfo:
		return "INFO"
	}
	return "NONE"
}

// auditCategoryName is how the audit records spell an alert's category:
// the spec's names.
func auditCategoryName(c engine.Category) string {
	switch c {
	case engine.CategoryConfirmed:
		return "genotype-confirmed"
	case engine.CategoryUnknown:
		return "genotype-unknown"
	case engine.CategoryPopulationRisk:
		return "population-risk"
	case engine.CategoryNotInterpreted:
		return "input-not-interpreted"
	}
	return ""
}
