package service

import (
	"context"

	"github.com/pgxsafety/pgxsafety/engine"
)

// ReviewRecord is the audited request of one view of the SMART review
// page: who launched it how, for which patient, and what the page was
// built from (never the access token).
type ReviewRecord struct {
	// Launch is "ehr" or "standalone".
	Launch     string `json:"launch"`
	FHIRServer string `json:"fhir_server"`
	Patient    string `json:"patient"`
	Encounter  string `json:"encounter,omitempty"`
	Scope      string `json:"scope,omitempty"`
	AppContext string `json:"app_context,omitempty"`
	// CardDrug is the drug of the CDS card the app was launched from.
	CardDrug     string `json:"card_drug,omitempty"`
	PatientState string `json:"patient_state,omitempty"`
	// GenomicResults are every genomic Observation read, used or not.
	GenomicResults []ReviewResult `json:"genomic_results"`
	// Medications are the active orders read.
	Medications []ReviewMedication `json:"medications"`
	Issues      []InputIssue       `json:"issues,omitempty"`
}

// ReviewResult is one genomic result as read from the EHR.
type ReviewResult struct {
	Ref       string `json:"ref"`
	Kind      string `json:"kind"`
	Gene      string `json:"gene,omitempty"`
	Value     string `json:"value,omitempty"`
	Status    string `json:"status,omitempty"`
	Effective string `json:"effective,omitempty"`
	Issued    string `json:"issued,omitempty"`
	Performer string `json:"performer,omitempty"`
	Used      bool   `json:"used"`
	Note      string `json:"note,omitempty"`
}

// ReviewMedication is one active order as read from the EHR.
type ReviewMedication struct {
	Ref   string `json:"ref,omitempty"`
	Label string `json:"label,omitempty"`
	// Drugs are the covered drugs identified in it.
	Drugs      []string `json:"drugs,omitempty"`
	Identified bool     `json:"identified"`
}

// ReviewInput is one view of the review page.
type ReviewInput struct {
	Record ReviewRecord `json:"record"`
	// Genotype holds the patient's genotype and facts (its Drug is
	// ignored), for the per-gene table.
	Genotype engine.Request `json:"genotype"`
	// Checks are one request per drug shown, in page order.
	Checks []engine.Request `json:"checks"`
}

// ReviewAnswer is what a review view shows.
type ReviewAnswer struct {
	Genotype         []engine.GenotypeCall `json:"genotype"`
	GenotypeWarnings []string              `json:"genotype_warnings,omitempty"`
	// GenotypeError says why the genotype could not be interpreted.
	GenotypeError string `json:"genotype_error,omitempty"`
	// Results are in the order of the checks.
	Results []ReviewCheck `json:"results"`
}

// ReviewCheck is the result of one check, or why it could not be run.
type ReviewCheck struct {
	Result *engine.Result `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// reviewRecord is the audit record of a review view.
type reviewRecord struct {
	in  ReviewInput
	ans ReviewAnswer
}

func (r reviewRecord) payloads() (any, any) { return r.in, r.ans }

// ReviewView answers one view of the SMART review page: it interprets the
// genotype, evaluates every check (a check that cannot be run is
// answered with its error, never dropped), and appends the view's audit
// entry — the principal is the clinician viewing — before returning.
func (s *Service) ReviewView(ctx context.Context, call Call, in ReviewInput) (Audited[ReviewAnswer], error) {
	ans := ReviewAnswer{Results: make([]ReviewCheck, 0, len(in.Checks))}
	calls, warnings, err := s.kb.GenotypeCalls(in.Genotype)
	if err != nil {
		ans.GenotypeError = err.Error()
	}
	ans.Genotype, ans.GenotypeWarnings = calls, warnings
	if ans.Genotype == nil {
		ans.Genotype = []engine.GenotypeCall{}
	}
	for _, c := range in.Checks {
		res, err := s.kb.Evaluate(c)
		if err != nil {
			ans.Results = append(ans.Results, ReviewCheck{Error: err.Error()})
			continue
		}
		ans.Results = append(ans.Results, ReviewCheck{Result: &res})
	}
	id, err := s.append(ctx, call, reviewRecord{in: in, ans: ans})
	if err != nil {
		return Audited[ReviewAnswer]{}, err
	}
	return Audited[ReviewAnswer]{Result: ans, AuditID: id}, nil
}
