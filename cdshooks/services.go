package cdshooks

import (
	"net/url"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/fhir"
)

// Service ids and hooks.
const (
	ServiceOrderSelect = "pgx-order-select"
	ServiceOrderSign   = "pgx-order-sign"
	HookOrderSelect    = "order-select"
	HookOrderSign      = "order-sign"
)

// Prefetch keys.
const (
	KeyPatient     = "patient"
	KeyGenomics    = "pgxObservations"
	KeyMedications = "activeMedications"
	// KeyConditions are the patient's current Conditions: clinical
	// context (e.g. clopidogrel's indication) when the order carries no
	// reasonCode. Optional.
	KeyConditions = "conditions"
)

// conditionStatuses are the Condition clinical statuses asked for.
const conditionStatuses = "active,recurrence,relapse"

// GenomicCodes are the Observation codes of the genomic prefetch and
// search: every code the FHIR mapper reads (Genotype, Haplotype, Variant,
// HLA class I typing, Therapeutic Implication).
var GenomicCodes = fhir.GenomicCodes

// prefetchTemplates use only what CDS Hooks 2.0 allows: instance reads by
// a context id, type-level searches with a patient reference, token
// equality (comma = or) and no other modifiers.
func prefetchTemplates() map[string]string {
	return map[string]string{
		KeyPatient:     "Patient/{{context.patientId}}",
		KeyGenomics:    "Observation?patient={{context.patientId}}&code=" + strings.Join(GenomicCodes, ","),
		KeyMedications: "MedicationRequest?patient={{context.patientId}}&status=active",
		KeyConditions:  "Condition?patient={{context.patientId}}&clinical-status=" + conditionStatuses,
	}
}

// searches are the FHIR queries run when a prefetch key is absent (the
// same queries as the templates).
func searchFor(key, patientID string) (resourceType string, q url.Values) {
	switch key {
	case KeyGenomics:
		return "Observation", url.Values{"patient": {patientID}, "code": {strings.Join(GenomicCodes, ",")}}
	case KeyMedications:
		return "MedicationRequest", url.Values{"patient": {patientID}, "status": {"active"}}
	case KeyConditions:
		return "Condition", url.Values{"patient": {patientID}, "clinical-status": {conditionStatuses}}
	}
	return "", nil
}

// requiredKeys are the data without which a check could mislead: a
// missing key with no FHIR server is a 412. Active medications only add
// context to a card.
var requiredKeys = []string{KeyPatient, KeyGenomics}

type cdsService struct {
	def ServiceDefinition
}

const usageRequirements = "Send the prefetch (patient, pgxObservations, activeMedications, conditions) or a fhirServer with " +
	"fhirAuthorization allowing patient/Patient.read, patient/Observation.read, patient/MedicationRequest.read and " +
	"patient/Condition.read; " +
	"without either the service answers 412. Calls carry a JWT signed by a trusted CDS client (aud = the service URL). " +
	"Cards follow CPIC guidelines from pgxsafety's knowledge base; they support, not replace, clinical judgement."

func services() (map[string]cdsService, Discovery) {
	defs := []ServiceDefinition{
		{
			Hook:  HookOrderSelect,
			Title: "Pharmacogenomic check of selected medication orders",
			Description: "Checks each selected draft medication order against the patient's genotype (FHIR Genomics " +
				"Reporting Observations) with CPIC guidelines: avoid or replace a drug the genotype makes unsafe or " +
				"ineffective, adjust a dose, or order a genotype test first.",
			ID:                ServiceOrderSelect,
			Prefetch:          prefetchTemplates(),
			UsageRequirements: usageRequirements,
		},
		{
			Hook:  HookOrderSign,
			Title: "Pharmacogenomic check of medication orders at signing",
			Description: "Checks every draft medication order being signed against the patient's genotype with CPIC " +
				"guidelines; cards the EHR reports as already shown at order-select are not repeated.",
			ID:                ServiceOrderSign,
			Prefetch:          prefetchTemplates(),
			UsageRequirements: usageRequirements,
		},
	}
	m := map[string]cdsService{}
	for _, d := range defs {
		m[d.ID] = cdsService{def: d}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID })
	return m, Discovery{Services: defs}
}
