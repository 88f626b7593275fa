package smart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// EndpointReview names the review view in audit entries.
const EndpointReview = "GET /smart/review"

// fetched is what the FHIR server gave for one view.
type fetched struct {
	patient  json.RawMessage
	patErr   error
	genomics []json.RawMessage
	genErr   error
	meds     []json.RawMessage
	medErr   error
}

// fetch reads the patient, the genomic Observations and the active
// MedicationRequests concurrently (the queries of the CDS prefetch).
func (s *Server) fetch(ctx context.Context, c *fhir.Client, patient string) fetched {
	var f fetched
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		f.patient, f.patErr = c.Read(ctx, "Patient", patient)
	}()
	go func() {
		defer wg.Done()
		f.genomics, f.genErr = c.Search(ctx, "Observation", url.Values{"patient": {patient}, "code": {strings.Join(cdshooks.GenomicCodes, ",")}})
	}()
	go func() {
		defer wg.Done()
		f.meds, f.medErr = c.Search(ctx, "MedicationRequest", url.Values{"patient": {patient}, "status": {"active"}})
	}()
	wg.Wait()
	return f
}

// fhirFailure turns a FHIR read failure into the page that says so.
func fhirFailure(what string, err error) error {
	var se *fhir.StatusError
	if errors.As(err, &se) && se.Unauthorized() {
		return &pageError{Kind: httpx.KindUnauthorized, Title: "The EHR no longer accepts this session",
			Detail: fmt.Sprintf("The EHR's FHIR server refused the access token while reading %s (HTTP %d). Launch the review again from the EHR.", what, se.Status), Err: err}
	}
	detail := "the query could not be made"
	switch {
	case se != nil:
		detail = se.Error()
	case errors.Is(err, fhir.ErrFHIRServer):
		detail = err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		detail = "no answer in time"
	}
	return &pageError{Kind: httpx.KindUpstream, Title: "The patient's data could not be read",
		Detail: fmt.Sprintf("Reading %s from the EHR's FHIR server failed (%s). No review is shown, because a review without them could miss a finding. Try again, or launch again from the EHR.", what, clip(detail, 300)), Err: err}
}

// review renders the review page of one session: it reads the data with
// the session's access token, has the application layer evaluate and
// audit it, and renders the answer.
func (s *Server) review(w http.ResponseWriter, r *http.Request) error {
	sid := mux.Vars(r)["id"]
	ss, err := s.store.session(r.Context(), sid, existingBrowserID(r))
	if err != nil {
		return lookupFailure(r.Context(), err, "session", &pageError{Kind: httpx.KindUnauthorized, Title: "This review session has ended",
			Detail: "The review session does not exist for this browser or has expired. Launch the review again from the EHR.", Link: PathIndex})
	}
	ctx, cancel := context.WithTimeout(r.Context(), dataTimeout)
	defer cancel()
	client, err := fhir.NewClient(ss.iss, ss.accessToken, s.cfg.FHIR)
	if err != nil {
		return &pageError{Kind: httpx.KindUpstream, Title: "The EHR's FHIR server cannot be used", Detail: err.Error()}
	}
	f := s.fetch(ctx, client, ss.patient)
	if f.genErr != nil {
		return fhirFailure("the genomic results", f.genErr)
	}
	if f.medErr != nil {
		return fhirFailure("the active medications", f.medErr)
	}
	if f.patErr != nil {
		var se *fhir.StatusError
		if errors.As(f.patErr, &se) && se.Unauthorized() {
			return fhirFailure("the patient", f.patErr)
		}
	}
	now := s.now()
	rec := service.ReviewRecord{Launch: "ehr", FHIRServer: ss.iss, Patient: ss.patient, Encounter: ss.encounter,
		Scope: ss.scope, AppContext: ss.appContext, CardDrug: ss.cardDrug}
	if ss.standalone {
		rec.Launch = "standalone"
	}
	var pf fhir.PatientFacts
	var patientProblem string
	switch {
	case f.patErr != nil:
		patientProblem = "The Patient resource could not be read; sex, age and state were not used."
	case f.patient == nil:
		patientProblem = "The EHR has no Patient resource for this id; sex, age and state were not used."
	default:
		pf = s.mapper.ReadPatient(f.patient, now)
		if pf.Ref != "" && pf.Ref != "Patient/"+ss.patient {
			pf = fhir.PatientFacts{Issues: append(pf.Issues, fhir.Issue{Ref: pf.Ref, ResourceType: "Patient", Severity: fhir.IssueError,
				Message: "it is not the patient of this launch; its sex, age and state were not used"})}
		}
		rec.Issues = append(rec.Issues, inputIssues(pf.Issues)...)
	}
	rec.PatientState = pf.State
	g := s.mapper.ReadGenomics(f.genomics, ss.patient, "genomics")
	rec.Issues = append(rec.Issues, inputIssues(g.Issues)...)
	rec.GenomicResults = reviewResults(g.Results)
	resolve := func(ref string) (json.RawMessage, error) { return client.ReadReference(ctx, ref) }
	meds := s.mapper.ActiveMedications(f.meds, "medications", resolve)
	rec.Issues = append(rec.Issues, inputIssues(meds.Issues)...)
	rec.Medications = reviewMedications(meds.Medications)

	base := engine.Request{State: pf.State}
	if pf.Sex != "" || pf.AgeYears != nil {
		base.Patient = &engine.Patient{Sex: pf.Sex, AgeYears: pf.AgeYears}
	}
	g.Apply(&base)
	rows := planRows(ss.cardDrug, meds.Medications, ss.patient)
	req := service.ReviewInput{Record: rec, Genotype: base}
	for _, row := range rows {
		if row.drug == "" {
			continue
		}
		q := base
		q.Drug = row.drug
		q.Indication = row.indication
		req.Checks = append(req.Checks, q)
	}
	audited, err := s.svc.ReviewView(ctx, service.Call{Principal: ss.principal, Endpoint: EndpointReview, RequestID: httpx.RequestID(ctx)}, req)
	if err != nil {
		return err
	}
	ans := audited.Result
	if len(ans.Results) != len(req.Checks) {
		return errors.New("smart: the review answered a different number of checks")
	}
	name := ""
	if pf.Ref != "" {
		name = patientName(f.patient)
	}
	page := s.buildPage(ss, pf, name, patientProblem, g, rows, req.Checks, ans, audited.AuditID)
	w.Header().Set("X-Audit-Log-ID", audited.AuditID)
	httpx.SetReceipt(w, audited.Receipt)
	return s.render(w, http.StatusOK, "review", page)
}

// row is one line of the medication list: a drug checked, or an order
// that could not be.
type row struct {
	drug       string // "" when nothing could be checked
	fromCard   bool
	orders     []string // labels of the active orders for the drug
	indication string
	// problem says why an order was not checked.
	problem string
	label   string
}

// planRows lists the drugs to check: the card's drug first (it may be a
// draft order, not yet active), then each covered drug of the active
// orders once; then the orders that name no covered drug or nothing at
// all (shown, never silently dropped).
func planRows(cardDrug string, orders []fhir.MedicationOrder, patient string) []row {
	var out []row
	idx := map[string]int{}
	if cardDrug != "" {
		idx[drugnames.NormaliseDrugName(cardDrug)] = 0
		out = append(out, row{drug: cardDrug, fromCard: true})
	}
	var problems []row
	for _, o := range orders {
		label := firstNonEmpty(o.Label, o.Ref, o.Place)
		if o.Subject != "" && o.Subject != "Patient/"+patient && !strings.HasSuffix(o.Subject, "/Patient/"+patient) {
			problems = append(problems, row{label: label, problem: "its subject is not this patient; it was not checked"})
			continue
		}
		if !o.Identified {
			problems = append(problems, row{label: label, problem: "could not interpret — review: nothing names its medication (no code, no text, or a reference that could not be read); it was not checked"})
			continue
		}
		if len(o.Drugs) == 0 {
			problems = append(problems, row{label: label, problem: "not in pgxsafety's knowledge: no pharmacogenomic guidance was checked, which does not mean it is safe — review"})
			continue
		}
		if len(o.Unread) > 0 {
			problems = append(problems, row{label: label, problem: "partly not in pgxsafety's knowledge: " + strings.Join(o.Unread, ", ") +
				" was not checked, which does not mean it is safe — review"})
		}
		for _, d := range o.Drugs {
			key := drugnames.NormaliseDrugName(d.Drug)
			if i, ok := idx[key]; ok {
				out[i].orders = append(out[i].orders, label)
				if out[i].indication == "" {
					out[i].indication = o.Indication
				}
				continue
			}
			idx[key] = len(out)
			out = append(out, row{drug: d.Drug, orders: []string{label}, indication: o.Indication})
		}
	}
	return append(out, problems...)
}

// sortRows keeps the card's drug first, then orders by severity (highest
// first) and name; rows that could not be checked come last.
func sortRows(ms []medView) {
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.FromCard != b.FromCard {
			return a.FromCard
		}
		if (a.Problem == "") != (b.Problem == "") {
			return a.Problem == ""
		}
		if a.rank != b.rank {
			return a.rank > b.rank
		}
		return a.Drug < b.Drug
	})
}

// inputIssues converts the mapping's issues for the audit record.
func inputIssues(is []fhir.Issue) []service.InputIssue {
	var out []service.InputIssue
	for _, i := range is {
		out = append(out, service.InputIssue{Ref: i.Ref, ResourceType: i.ResourceType, Severity: string(i.Severity), Message: i.Message, Genomic: i.Genomic})
	}
	return out
}

// reviewResults converts the genomic results read for the audit record.
func reviewResults(rs []fhir.GenomicResult) []service.ReviewResult {
	out := []service.ReviewResult{}
	for _, r := range rs {
		out = append(out, service.ReviewResult{Ref: r.Ref, Kind: r.Kind, Gene: r.Gene, Value: r.Value, Status: r.Status,
			Effective: r.Effective, Issued: r.Issued, Performer: r.Performer, Used: r.Used, Note: r.Note})
	}
	return out
}

// reviewMedications converts the active orders read for the audit record.
func reviewMedications(ms []fhir.MedicationOrder) []service.ReviewMedication {
	out := []service.ReviewMedication{}
	for _, m := range ms {
		rm := service.ReviewMedication{Ref: firstNonEmpty(m.Ref, m.Place), Label: m.Label, Identified: m.Identified}
		for _, d := range m.Drugs {
			rm.Drugs = append(rm.Drugs, d.Drug)
		}
		out = append(out, rm)
	}
	return out
}
