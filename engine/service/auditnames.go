package service

import "github.com/pgxsafety/pgxsafety/engine"

// auditSeverityName is how the audit records of CSV chunks and VCF
// samples spell a severity: the spec's names, as those records have
// always held them (the answers' own wire names are pgxapi's).
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
