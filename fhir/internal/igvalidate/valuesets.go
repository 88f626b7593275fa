package igvalidate

// CoreValueSets are the FHIR R4 (4.0.1) value sets of the required
// bindings of the profiles checked here that are small and enumerable,
// as "system|code" sets, keyed by the canonical the profiles name. Codes
// from the R4 pages:
//   - http://hl7.org/fhir/R4/valueset-observation-status.html
//   - http://hl7.org/fhir/R4/valueset-diagnostic-report-status.html
//   - http://hl7.org/fhir/R4/valueset-task-status.html
//   - http://hl7.org/fhir/R4/valueset-task-intent.html
//   - http://hl7.org/fhir/R4/valueset-request-priority.html
//
// The LOINC answer lists bound by the IG (LL4049-4 on Task.code,
// LL2938-0 on a chromosome component) are not in the IG package; a
// binding to them is listed as unchecked (Validator.Unchecked).
func CoreValueSets() map[string]map[string]bool {
	set := func(system string, codes ...string) map[string]bool {
		m := map[string]bool{}
		for _, c := range codes {
			m[system+"|"+c] = true
		}
		return m
	}
	return map[string]map[string]bool{
		"http://hl7.org/fhir/ValueSet/observation-status|4.0.1": set("http://hl7.org/fhir/observation-status",
			"registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"),
		"http://hl7.org/fhir/ValueSet/diagnostic-report-status|4.0.1": set("http://hl7.org/fhir/diagnostic-report-status",
			"registered", "partial", "preliminary", "final", "amended", "corrected", "appended", "cancelled", "entered-in-error", "unknown"),
		"http://hl7.org/fhir/ValueSet/task-status|4.0.1": set("http://hl7.org/fhir/task-status",
			"draft", "requested", "received", "accepted", "rejected", "ready", "cancelled", "in-progress", "on-hold", "failed", "completed", "entered-in-error"),
		"http://hl7.org/fhir/ValueSet/task-intent|4.0.1": set("http://hl7.org/fhir/task-intent",
			"unknown", "proposal", "plan", "order", "original-order", "reflex-order", "filler-order", "instance-order", "option"),
		"http://hl7.org/fhir/ValueSet/request-priority|4.0.1": set("http://hl7.org/fhir/request-priority",
			"routine", "urgent", "asap", "stat"),
	}
}
