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
	Launch     string
	FHIRServer string
	Patient    string
	Encounter  string
	Scope      string
	AppContext string
	// CardDrug is the drug of the CDS card the app was launched from.
	CardDrug     string
	PatientState string
	// GenomicResults are every genomic Observation read, used or not.
	GenomicResults []ReviewResult
	// Medications are the active orders read.
	Medications []ReviewMedication
	Issues      []InputIssue
}

// ReviewResult is one genomic result as read from the EHR.
type ReviewResult struct {
	Ref       string
	Kind      string
	Gene      string
	Value     string
	Status    string
	Effective string
	Issued    string
	Performer string
	Used      bool
	Note      string
}

// ReviewMedication is one active order as read from the EHR.
type ReviewMedication struct {
	Ref   string
	Label string
	// Drugs are the covered drugs identified in it.
	Drugs      []string
	Identified bool
}

// ReviewInput is one view of the review page.
type ReviewInput struct {
	Record ReviewRecord
	// Genotype holds the patient's genotype and facts (its Drug is
	// ignored), for the per-gene table.
	Genotype engine.Request
	// Checks are one request per drug shown, in page order.
	Checks []engine.Request
}

// ReviewAnswer is what a review view shows.
type ReviewAnswer struct {
	Genotype         []engine.GenotypeCall
	GenotypeWarnings []string
	// GenotypeError says why the genotype could not be interpreted.
	GenotypeError string
	// Results are in the order of the checks.
	Results []ReviewCheck
}

// ReviewCheck is the result of one check, or why it could not be run.
type ReviewCheck struct {
	Result *engine.Result
	Error  string
}

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
	id, err := s.append(ctx, call, newReviewRecord(in, ans))
	if err != nil {
		return Audited[ReviewAnswer]{}, err
	}
	return audited(ans, id), nil
}
