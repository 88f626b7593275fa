package cdshooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// ExtensionShownCards is the request extension through which an EHR tells
// order-sign which card uuids the same ordering session already showed at
// order-select: an array of strings. Those cards are not repeated
// (docs/cds-hooks.md §4, de-duplication).
const ExtensionShownCards = "org.pgxsafety.shown-cards"

// principalResult is the caller of a call.
type principalResult struct {
	p   audit.Principal
	dev bool
	// release forgets the token's jti claim (nil when none was made).
	release func(context.Context) error
}

// releaseUnanswered forgets the caller's jti claim when the call ends with
// err and no answer for a reason on the server's side (5xx: the audit log,
// the replay cache, the FHIR server), so the client's retry with the same
// token is accepted. A 4xx is an answer: the token stays spent.
func releaseUnanswered(ctx context.Context, caller principalResult, err error) {
	if err == nil || caller.release == nil || httpx.ProblemFor(err).Status() < 500 {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if rerr := caller.release(rctx); rerr != nil {
		httpx.Logger(ctx).Warn("CDS call failed and its token's jti could not be released: the client's retry will be refused as a replay", zap.Error(rerr))
	}
}

func (pr principalResult) principal() audit.Principal {
	if pr.dev {
		return audit.Principal{Subject: devPrincipalSubject, Issuer: "none (" + EnvDevUnauthenticated + ")"}
	}
	return pr.p
}

// hookCall is a validated hook request.
type hookCall struct {
	service     string
	hook        string
	instance    string
	fhirServer  string
	token       string // fhirAuthorization.access_token; never logged or audited
	userID      string
	patientID   string
	encounterID string
	selections  []string
	draftOrders json.RawMessage
	// drafts and draftsErr are context.draftOrders read (fhir.Resources).
	drafts     []json.RawMessage
	draftsErr  error
	prefetch   map[string]json.RawMessage
	shownCards map[string]bool
}

// endpoint names the call in audit entries.
func endpoint(path string) string { return "POST " + path }

func (s *Server) hook(w http.ResponseWriter, r *http.Request) (err error) {
	id := mux.Vars(r)["id"]
	svc, ok := s.services[id]
	if !ok {
		return &httpx.Error{Kind: httpx.KindCDSUnknown, Detail: "no CDS service has this id; see GET /cds-services"}
	}
	caller, err := s.authenticate(r)
	if err != nil {
		return err
	}
	defer func() { releaseUnanswered(r.Context(), caller, err) }()
	var in hookRequest
	if err := httpx.DecodeJSONExtensible(w, r, &in, HookBodyLimit); err != nil {
		return err
	}
	call, err := validateHook(svc.def, in)
	if err != nil {
		return err
	}
	if err := readDrafts(call); err != nil {
		return err
	}
	ctx := r.Context()
	data, err := s.resolve(ctx, call)
	if err != nil {
		return err
	}
	if err := checkCallSize(call, data); err != nil {
		return err
	}
	auditCall := service.Call{Principal: caller.principal(), Endpoint: endpoint(r.URL.Path), RequestID: httpx.RequestID(ctx)}
	var rec *callRecord
	answer, err := service.EvaluateHook(ctx, s.svc, auditCall, func(chk *service.HookChecker) (service.HookRecord, Response, error) {
		var out Response
		out, rec = s.evaluate(ctx, call, data, chk)
		if call.hook == HookOrderSign && len(call.shownCards) > 0 {
			kept := out.Cards[:0]
			for _, c := range out.Cards {
				if call.shownCards[c.UUID] {
					rec.Suppressed = append(rec.Suppressed, c.UUID)
					continue
				}
				kept = append(kept, c)
			}
			out.Cards = kept
		}
		if out.Cards == nil {
			out.Cards = []Card{}
		}
		return rec.auditRecord(), out, nil
	})
	if err != nil {
		return err
	}
	logIssues(httpx.Logger(ctx), rec)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Audit-Log-ID", answer.AuditID)
	httpx.SetReceipt(w, answer.Receipt)
	return httpx.WriteJSON(w, http.StatusOK, answer.Result)
}

func invalid(params ...httpx.Param) error {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return &httpx.Error{Kind: httpx.KindMalformed,
		Detail:        "the request is invalid: " + strings.Join(names, ", "),
		InvalidParams: params}
}

// validateHook checks the envelope and the order-select / order-sign
// context.
func validateHook(def ServiceDefinition, in hookRequest) (*hookCall, error) {
	var ps []httpx.Param
	req := func(name string, v *string) string {
		if v == nil || strings.TrimSpace(*v) == "" {
			ps = append(ps, httpx.Param{Name: name, Reason: "is required"})
			return ""
		}
		return strings.TrimSpace(*v)
	}
	call := &hookCall{service: def.ID, prefetch: in.Prefetch}
	call.hook = req("hook", in.Hook)
	if call.hook != "" && call.hook != def.Hook {
		ps = append(ps, httpx.Param{Name: "hook", Reason: fmt.Sprintf("must be %s for service %s", def.Hook, def.ID)})
	}
	call.instance = req("hookInstance", in.HookInstance)
	if len(call.instance) > 256 {
		ps = append(ps, httpx.Param{Name: "hookInstance", Reason: "is longer than 256 characters"})
	}
	if in.FHIRServer != nil && strings.TrimSpace(*in.FHIRServer) != "" {
		if _, err := fhir.CheckServerURL(*in.FHIRServer); err != nil {
			ps = append(ps, httpx.Param{Name: "fhirServer", Reason: err.Error()})
		}
		call.fhirServer = strings.TrimSpace(*in.FHIRServer)
	}
	if a := in.FHIRAuthorization; a != nil {
		if call.fhirServer == "" {
			ps = append(ps, httpx.Param{Name: "fhirServer", Reason: "is required with fhirAuthorization"})
		}
		if strings.TrimSpace(a.AccessToken) == "" {
			ps = append(ps, httpx.Param{Name: "fhirAuthorization.access_token", Reason: "is required"})
		}
		if !strings.EqualFold(a.TokenType, "Bearer") {
			ps = append(ps, httpx.Param{Name: "fhirAuthorization.token_type", Reason: "must be Bearer"})
		}
		call.token = strings.TrimSpace(a.AccessToken)
	}
	ctxRaw := bytes.TrimSpace(in.Context)
	if len(ctxRaw) == 0 || bytes.Equal(ctxRaw, []byte("null")) {
		ps = append(ps, httpx.Param{Name: "context", Reason: "is required"})
		return nil, invalid(ps...)
	}
	var oc orderContext
	if err := json.Unmarshal(ctxRaw, &oc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			ps = append(ps, httpx.Param{Name: "context." + te.Field, Reason: "has the wrong type"})
		} else {
			ps = append(ps, httpx.Param{Name: "context", Reason: "must be an object"})
		}
		return nil, invalid(ps...)
	}
	call.userID = req("context.userId", oc.UserID)
	call.patientID = req("context.patientId", oc.PatientID)
	if oc.EncounterID != nil {
		call.encounterID = strings.TrimSpace(*oc.EncounterID)
	}
	do := bytes.TrimSpace(oc.DraftOrders)
	if len(do) == 0 || bytes.Equal(do, []byte("null")) {
		ps = append(ps, httpx.Param{Name: "context.draftOrders", Reason: "is required (a Bundle of the draft orders)"})
	} else if do[0] != '{' {
		ps = append(ps, httpx.Param{Name: "context.draftOrders", Reason: "must be a Bundle"})
	}
	call.draftOrders = do
	if def.Hook == HookOrderSelect {
		if len(oc.Selections) == 0 {
			ps = append(ps, httpx.Param{Name: "context.selections", Reason: "is required (the orders selected)"})
		}
		call.selections = oc.Selections
	}
	if raw, ok := in.Extension[ExtensionShownCards]; ok {
		var ids []string
		if err := json.Unmarshal(raw, &ids); err != nil {
			ps = append(ps, httpx.Param{Name: "extension." + ExtensionShownCards, Reason: "must be an array of card uuids"})
		}
		call.shownCards = map[string]bool{}
		for _, id := range ids {
			call.shownCards[id] = true
		}
	}
	if len(ps) > 0 {
		return nil, invalid(ps...)
	}
	return call, nil
}

// keyData is what one prefetch key gave.
type keyData struct {
	// Source is "prefetch", "fhir" or "none" (neither, for optional keys).
	Source string `json:"source"`
	// Error says why the data could not be had (an OperationOutcome in
	// the prefetch, a FHIR server failure), for the audit entry and the
	// log.
	Error string `json:"error,omitempty"`
	// Shown says the same in words fit for a card: never the server's
	// or the EHR's own error text.
	Shown string `json:"-"`
	raws  []json.RawMessage
}

// resolve gets the data of every prefetch key: the prefetch when present
// (null means no data), else the FHIR server; 412 when a required key has
// neither. An OperationOutcome in the prefetch or a failing FHIR server
// makes the key's data unavailable (a card says so), not the call fail.
func (s *Server) resolve(ctx context.Context, call *hookCall) (map[string]*keyData, error) {
	var client *fhir.Client
	if call.fhirServer != "" {
		c, err := fhir.NewClient(call.fhirServer, call.token, s.cfg.FHIR)
		if err != nil {
			return nil, invalid(httpx.Param{Name: "fhirServer", Reason: err.Error()})
		}
		client = c
	}
	out := map[string]*keyData{}
	var missing []string
	type fetch struct{ key string }
	var fetches []fetch
	for _, key := range []string{KeyPatient, KeyGenomics, KeyMedications, KeyConditions} {
		raw, present := call.prefetch[key]
		if present {
			rs, err := fhir.Resources(raw)
			if tooLarge := entriesTooMany("prefetch."+key, err); tooLarge != nil {
				return nil, tooLarge
			}
			if err == nil {
				out[key] = &keyData{Source: "prefetch", raws: rs}
				continue
			}
			kd := &keyData{Source: "prefetch", Error: "the prefetch value is an error: " + err.Error(),
				Shown: "the EHR sent an error in place of them"}
			var oe *fhir.OutcomeError
			if !errors.As(err, &oe) {
				kd.Error = "the prefetch value is not a FHIR resource: " + err.Error()
				kd.Shown = "the EHR sent something other than FHIR resources in place of them"
			}
			httpx.Logger(ctx).Warn("CDS prefetch value unusable", zap.String("key", key), zap.String("error", kd.Error))
			out[key] = kd
			if client == nil {
				continue
			}
		}
		if client == nil {
			if isRequired(key) {
				missing = append(missing, key)
			} else {
				out[key] = &keyData{Source: "none"}
			}
			continue
		}
		fetches = append(fetches, fetch{key})
	}
	if len(missing) > 0 {
		return nil, &httpx.Error{Kind: httpx.KindCDSPrecondition,
			Detail: fmt.Sprintf("prefetch %s missing and no fhirServer was given to query instead; send the prefetch "+
				"or fhirServer with fhirAuthorization", strings.Join(missing, " and ")),
			InvalidParams: paramsFor(missing)}
	}
	if len(fetches) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DataTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, f := range fetches {
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			kd := &keyData{Source: "fhir"}
			var err error
			switch key {
			case KeyPatient:
				var raw json.RawMessage
				raw, err = client.Read(ctx, "Patient", call.patientID)
				if raw != nil {
					kd.raws = []json.RawMessage{raw}
				}
			default:
				typ, q := searchFor(key, call.patientID)
				kd.raws, err = client.Search(ctx, typ, q)
			}
			if err != nil {
				kd.raws = nil
				kd.Error = "the FHIR server query failed: " + safeError(err)
				kd.Shown = fetchFailure(err)
				httpx.Logger(ctx).Warn("CDS data could not be fetched from the FHIR server", zap.String("key", key), zap.String("error", kd.Error))
			}
			mu.Lock()
			out[key] = kd
			mu.Unlock()
		}(f.key)
	}
	wg.Wait()
	return out, nil
}

func isRequired(key string) bool {
	for _, k := range requiredKeys {
		if k == key {
			return true
		}
	}
	return false
}

func paramsFor(keys []string) []httpx.Param {
	out := make([]httpx.Param, len(keys))
	for i, k := range keys {
		out[i] = httpx.Param{Name: "prefetch." + k, Reason: "is missing and no fhirServer was given"}
	}
	return out
}

// safeError describes a FHIR client error for the audit entry and the log
// (cards say fetchFailure instead). The client's errors never contain the
// access token.
func safeError(err error) string {
	var se *fhir.StatusError
	if errors.As(err, &se) {
		return se.Error()
	}
	if errors.Is(err, fhir.ErrFHIRServer) {
		return err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer in time"
	}
	return "the query could not be made"
}

// callRecord is what a hook call was asked and what it was evaluated
// with (never the FHIR access token); it becomes the call's audit record.
type callRecord struct {
	Hook         string
	HookInstance string
	Service      string
	FHIRServer   string
	PatientID    string
	EncounterID  string
	UserID       string
	Selections   []string
	Data         map[string]*keyData
	Issues       []fhir.Issue
	ShownCards   []string
	Suppressed   []string
}

// auditRecord is the service layer's record of the call (the service adds
// the evaluations).
func (rec *callRecord) auditRecord() service.HookRecord {
	out := service.HookRecord{
		Hook: rec.Hook, HookInstance: rec.HookInstance, Service: rec.Service, FHIRServer: rec.FHIRServer,
		PatientID: rec.PatientID, EncounterID: rec.EncounterID, UserID: rec.UserID, Selections: rec.Selections,
		Data: make(map[string]service.HookData, len(rec.Data)), ShownCards: rec.ShownCards, Suppressed: rec.Suppressed,
	}
	for k, d := range rec.Data {
		if d != nil {
			out.Data[k] = service.HookData{Source: d.Source, Error: d.Error}
		}
	}
	for _, is := range rec.Issues {
		out.Issues = append(out.Issues, service.InputIssue{Ref: is.Ref, ResourceType: is.ResourceType,
			Severity: string(is.Severity), Message: is.Message, Genomic: is.Genomic})
	}
	return out
}

func logIssues(log *zap.Logger, rec *callRecord) {
	if len(rec.Issues) == 0 {
		return
	}
	counts := map[fhir.IssueSeverity]int{}
	for _, is := range rec.Issues {
		counts[is.Severity]++
	}
	// Resource ids and contents are not logged (they may identify the
	// patient); the audit entry holds the issues.
	log.Info("CDS hook input had problems", zap.Int("errors", counts[fhir.IssueError]),
		zap.Int("warnings", counts[fhir.IssueWarning]), zap.Int("infos", counts[fhir.IssueInfo]))
	// Deviations from FHIR R4 that were tolerated: element names only.
	var tolerated []string
	for _, is := range rec.Issues {
		for _, el := range is.Tolerated {
			tolerated = append(tolerated, is.ResourceType+"."+el)
		}
	}
	if len(tolerated) > 0 {
		sort.Strings(tolerated)
		log.Info("CDS hook input deviated from FHIR R4 and was read anyway: array elements sent as one object",
			zap.Strings("elements", slices.Compact(tolerated)))
	}
}

// evaluate reads the data, checks every drug of the orders concerned and
// builds the cards.
func (s *Server) evaluate(ctx context.Context, call *hookCall, data map[string]*keyData, chk *service.HookChecker) (Response, *callRecord) {
	rec := &callRecord{
		Hook: call.hook, HookInstance: call.instance, Service: call.service, FHIRServer: call.fhirServer,
		PatientID: call.patientID, EncounterID: call.encounterID, UserID: call.userID,
		Selections: call.selections, Data: data,
	}
	for id := range call.shownCards {
		rec.ShownCards = append(rec.ShownCards, id)
	}
	sort.Strings(rec.ShownCards)

	var resolve fhir.ResolveFunc
	if call.fhirServer != "" {
		if c, err := fhir.NewClient(call.fhirServer, call.token, s.cfg.FHIR); err == nil {
			resolve = func(ref string) (json.RawMessage, error) {
				raw, err := c.ReadReference(ctx, ref)
				if err != nil {
					// The reason becomes part of an issue and a card: the
					// client's error goes to the log only.
					httpx.Logger(ctx).Warn("CDS medication reference could not be read from the FHIR server", zap.String("error", safeError(err)))
					return nil, errors.New(fetchFailure(err))
				}
				return raw, nil
			}
		}
	}
	b := &cardBuilder{s: s, call: call, data: data}

	// Patient.
	if kd := data[KeyPatient]; kd != nil && len(kd.raws) > 0 {
		b.patient = s.mapper.ReadPatient(kd.raws[0], s.svc.Now())
		if strings.HasPrefix(b.patient.Ref, "Patient/") && b.patient.Ref != "Patient/"+call.patientID {
			b.patient.Issues = append(b.patient.Issues, fhir.Issue{Ref: b.patient.Ref, ResourceType: "Patient", Severity: fhir.IssueError,
				Message: "it is not the patient of this call; its sex, age and state were not used"})
			b.patient = fhir.PatientFacts{Issues: b.patient.Issues}
		}
		rec.Issues = append(rec.Issues, b.patient.Issues...)
	}
	// Genomics.
	if kd := data[KeyGenomics]; kd != nil {
		b.genomics = s.mapper.ReadGenomics(kd.raws, call.patientID, KeyGenomics)
		rec.Issues = append(rec.Issues, b.genomics.Issues...)
	}
	// Active medications.
	if kd := data[KeyMedications]; kd != nil && len(kd.raws) > 0 {
		b.active = s.mapper.ActiveMedications(kd.raws, KeyMedications, nil)
		rec.Issues = append(rec.Issues, b.active.Issues...)
	}
	// Active conditions.
	if kd := data[KeyConditions]; kd != nil && len(kd.raws) > 0 {
		var issues []fhir.Issue
		b.conditions, issues = s.mapper.ActiveConditions(kd.raws, call.patientID, KeyConditions)
		rec.Issues = append(rec.Issues, issues...)
	}
	// Draft orders.
	raws, err := call.drafts, call.draftsErr
	if err != nil {
		rec.Issues = append(rec.Issues, fhir.Issue{Ref: "context.draftOrders", Severity: fhir.IssueError, Message: err.Error()})
		b.unreadableDrafts = append(b.unreadableDrafts, fhir.Issue{Ref: "context.draftOrders", Severity: fhir.IssueError, Message: err.Error()})
	}
	orders := s.mapper.MedicationOrders(raws, "draftOrders", resolve)
	rec.Issues = append(rec.Issues, orders.Issues...)
	// At order-select a draft with no medication yet (no drug chosen) is
	// not an error: there is nothing to check, and no card.
	noDrugYet := map[string]bool{}
	for _, o := range orders.Medications {
		if call.hook == HookOrderSelect && o.NoMedication {
			noDrugYet[orderName(o)] = true
		}
	}
	for _, is := range orders.Issues {
		if noDrugYet[is.Ref] {
			continue
		}
		if is.Severity == fhir.IssueError && (is.ResourceType == "MedicationRequest" || is.ResourceType == "") {
			b.unreadableDrafts = append(b.unreadableDrafts, is)
		}
	}
	meds := dedupeOrders(orders.Medications, rec)
	var sels []selection
	if call.hook == HookOrderSelect {
		sels = parseSelections(call.selections)
		b.unmatched = unmatchedSelections(sels, meds, orders.Other, b.unreadableDrafts)
		for _, o := range meds {
			if o.ID == "" {
				b.idlessChecked++
			}
		}
		for _, sel := range b.unmatched {
			rec.Issues = append(rec.Issues, fhir.Issue{Ref: "context.selections", Severity: fhir.IssueError,
				Message: fmt.Sprintf("the selected order %q matches no draft order pgxsafety could read; it was not checked", sel)})
		}
	}
	for _, o := range meds {
		// At order-select only the selected orders are checked; a draft
		// with no id cannot be matched to a selection, so it is checked
		// (its cards say so) rather than silently skipped.
		if call.hook == HookOrderSelect && o.ID != "" && !selectedOrder(sels, "MedicationRequest", o.ID) {
			continue
		}
		if o.Subject != "" && o.Subject != "Patient/"+call.patientID && !strings.HasSuffix(o.Subject, "/Patient/"+call.patientID) {
			is := fhir.Issue{Ref: orderName(o), ResourceType: "MedicationRequest", Severity: fhir.IssueError,
				Message: fmt.Sprintf("its subject %s is not the patient of this call; it was not checked", o.Subject)}
			rec.Issues = append(rec.Issues, is)
			b.unreadableDrafts = append(b.unreadableDrafts, is)
			continue
		}
		if !o.Identified {
			if noDrugYet[orderName(o)] {
				continue
			}
			if !hasIssueFor(b.unreadableDrafts, orderName(o)) {
				b.unreadableDrafts = append(b.unreadableDrafts, fhir.Issue{Ref: orderName(o), ResourceType: "MedicationRequest",
					Severity: fhir.IssueError, Message: "nothing names its medication; it was not checked"})
			}
			continue
		}
		if len(o.Drugs) == 0 {
			if hasIssueFor(b.unreadableDrafts, orderName(o)) {
				continue // its card says why (an unresolved reference)
			}
			// A medication that names no drug of the knowledge was not
			// checked: a card says so, never an empty answer.
			rec.Issues = append(rec.Issues, fhir.Issue{Ref: orderName(o), ResourceType: "MedicationRequest", Severity: fhir.IssueError,
				Message: fmt.Sprintf("its medication %q names no drug of the knowledge; it was not checked", quote(o.Label, MaxQuotedDetailRunes))})
			b.unidentified = append(b.unidentified, o)
			continue
		}
		if len(o.Unread) > 0 {
			rec.Issues = append(rec.Issues, fhir.Issue{Ref: orderName(o), ResourceType: "MedicationRequest", Severity: fhir.IssueError,
				Message: fmt.Sprintf("part of its medication names no drug of the knowledge and was not checked: %s", quote(strings.Join(o.Unread, ", "), MaxQuotedDetailRunes))})
			b.partlyRead = append(b.partlyRead, o)
		}
		for _, d := range o.Drugs {
			req := engine.Request{Drug: d.Drug, State: b.patient.State, Indication: b.indication(o), IndicationCodes: b.indicationCodes(o)}
			b.genomics.Apply(&req)
			if b.patient.Sex != "" || b.patient.AgeYears != nil {
				req.Patient = &engine.Patient{Sex: b.patient.Sex, AgeYears: b.patient.AgeYears}
			}
			res, err := chk.Check(orderName(o), d.Drug, d.Via, req)
			if err != nil {
				b.failed = append(b.failed, failedCheck{order: o, drug: d, err: err})
			} else {
				b.results = append(b.results, checked{order: o, drug: d, req: req, res: res})
			}
		}
	}
	return Response{Cards: b.build()}, rec
}

// selection is one entry of context.selections, read tolerantly:
// "MedicationRequest/abc", a bare id "abc" (typ empty), or an absolute URL
// ending in "/MedicationRequest/abc"; a "/_history/n" suffix is ignored.
type selection struct {
	raw string
	typ string
	id  string
}

func parseSelections(raw []string) []selection {
	var out []selection
	seen := map[string]bool{}
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" || seen[r] {
			continue
		}
		seen[r] = true
		s := selection{raw: r}
		ref := r
		if i := strings.Index(ref, "/_history/"); i >= 0 {
			ref = ref[:i]
		}
		ref = strings.TrimSuffix(ref, "/")
		parts := strings.Split(ref, "/")
		s.id = parts[len(parts)-1]
		if len(parts) >= 2 {
			s.typ = parts[len(parts)-2]
		}
		out = append(out, s)
	}
	return out
}

// matches reports whether the selection names the resource typ/id.
func (s selection) matches(typ, id string) bool {
	return id != "" && s.id == id && (s.typ == "" || s.typ == typ)
}

func selectedOrder(sels []selection, typ, id string) bool {
	for _, s := range sels {
		if s.matches(typ, id) {
			return true
		}
	}
	return false
}

// unmatchedSelections returns the selections that name no draft order:
// neither a MedicationRequest read, nor another order (not checked by
// pgxsafety, which has no guidance for it), nor a draft that could not be
// read (it has its own card).
func unmatchedSelections(sels []selection, meds []fhir.MedicationOrder, other []string, unreadable []fhir.Issue) []string {
	var out []string
	for _, s := range sels {
		found := false
		for _, o := range meds {
			if s.matches("MedicationRequest", o.ID) {
				found = true
			}
		}
		for _, ref := range append(append([]string(nil), other...), issueRefs(unreadable)...) {
			typ, id, ok := strings.Cut(ref, "/")
			if ok && s.matches(typ, id) {
				found = true
			}
		}
		if !found {
			out = append(out, s.raw)
		}
	}
	return out
}

func issueRefs(is []fhir.Issue) []string {
	out := make([]string, len(is))
	for i, x := range is {
		out[i] = x.Ref
	}
	return out
}

// dedupeOrders drops a draft order that repeats an earlier one: the same
// reference with the same content (as read), or, without an id, the same
// content. Two different orders sharing an id are both kept (an EHR error
// that must not hide a drug). Each dropped duplicate is recorded as an
// issue in the audit entry.
func dedupeOrders(meds []fhir.MedicationOrder, rec *callRecord) []fhir.MedicationOrder {
	seen := map[string]string{}
	var out []fhir.MedicationOrder
	for _, o := range meds {
		c := o
		c.Place = ""
		b, _ := json.Marshal(c)
		key := string(b)
		if first, ok := seen[key]; ok {
			rec.Issues = append(rec.Issues, fhir.Issue{Ref: orderName(o), ResourceType: "MedicationRequest", Severity: fhir.IssueInfo,
				Message: "it repeats " + first + "; it was checked once"})
			continue
		}
		seen[key] = orderName(o)
		out = append(out, o)
	}
	return out
}

func hasIssueFor(is []fhir.Issue, ref string) bool {
	for _, i := range is {
		if i.Ref == ref {
			return true
		}
	}
	return false
}

// orderName names an order in cards and issues.
func orderName(o fhir.MedicationOrder) string {
	if o.Ref != "" {
		return o.Ref
	}
	return "MedicationRequest (" + o.Place + ")"
}

// readDrafts reads context.draftOrders once; more than MaxDraftOrders
// resources (or a Bundle over fhir.MaxBundleEntries) is a 413 naming the
// limit, before any is mapped or checked. An unreadable Bundle is kept
// as draftsErr: the answer says the drafts could not be read.
func readDrafts(call *hookCall) error {
	call.drafts, call.draftsErr = fhir.Resources(call.draftOrders)
	if err := entriesTooMany("context.draftOrders", call.draftsErr); err != nil {
		return err
	}
	if n := len(call.drafts); n > MaxDraftOrders {
		return tooManyResources("context.draftOrders", fmt.Sprintf("holds %d draft orders; at most %d are checked per call", n, MaxDraftOrders))
	}
	return nil
}

// checkCallSize refuses (413) a call whose prefetch key holds more than
// MaxKeyResources resources or whose resources, draft orders included,
// are more than MaxCallResources.
func checkCallSize(call *hookCall, data map[string]*keyData) error {
	total := len(call.drafts)
	for _, key := range []string{KeyPatient, KeyGenomics, KeyMedications, KeyConditions} {
		kd := data[key]
		if kd == nil {
			continue
		}
		if n := len(kd.raws); n > MaxKeyResources {
			return tooManyResources("prefetch."+key, fmt.Sprintf("holds %d resources; at most %d are read per key", n, MaxKeyResources))
		}
		total += len(kd.raws)
	}
	if total > MaxCallResources {
		return tooManyResources("prefetch", fmt.Sprintf("the prefetch and draft orders hold %d resources; at most %d are read per call", total, MaxCallResources))
	}
	return nil
}

// entriesTooMany turns fhir's refusal of a Bundle over MaxBundleEntries
// into a 413 naming field; other errors give nil.
func entriesTooMany(field string, err error) error {
	var te *fhir.TooManyEntriesError
	if !errors.As(err, &te) {
		return nil
	}
	return tooManyResources(field, fmt.Sprintf("is a Bundle of %d entries; at most %d are read", te.Entries, fhir.MaxBundleEntries))
}

func tooManyResources(field, reason string) error {
	return &httpx.Error{Kind: httpx.KindTooLarge, Detail: field + " " + reason + "; split the call",
		InvalidParams: []httpx.Param{{Name: field, Reason: reason}}}
}
