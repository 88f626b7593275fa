package service

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
)

// HookRecord is the audited request of a CDS hook call: what was asked,
// where its data came from, what could not be read and what every drug
// was checked with (never the FHIR access token).
type HookRecord struct {
	Hook         string              `json:"hook"`
	HookInstance string              `json:"hookInstance"`
	Service      string              `json:"service"`
	FHIRServer   string              `json:"fhirServer,omitempty"`
	PatientID    string              `json:"patientId"`
	EncounterID  string              `json:"encounterId,omitempty"`
	UserID       string              `json:"userId"`
	Selections   []string            `json:"selections,omitempty"`
	Data         map[string]HookData `json:"data"`
	// Evaluations are filled by the service: one per HookChecker.Check.
	Evaluations []HookEvaluation `json:"evaluations"`
	Issues      []InputIssue     `json:"issues,omitempty"`
	ShownCards  []string         `json:"shown_cards,omitempty"`
	Suppressed  []string         `json:"suppressed_cards,omitempty"`
}

// HookData says where the data of one prefetch key came from.
type HookData struct {
	// Source is "prefetch", "fhir" or "none".
	Source string `json:"source"`
	// Error says why the data could not be had.
	Error string `json:"error,omitempty"`
}

// InputIssue records a problem with one input resource of a hook call.
type InputIssue struct {
	Ref          string `json:"ref"`
	ResourceType string `json:"resource_type,omitempty"`
	// Severity is "error", "warning" or "info".
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Genomic  bool   `json:"genomic,omitempty"`
}

// HookEvaluation records what one drug of one order was checked with.
type HookEvaluation struct {
	Order   string         `json:"order"`
	Drug    string         `json:"drug"`
	Via     string         `json:"via"`
	Request engine.Request `json:"request"`
	Error   string         `json:"error,omitempty"`
}

// HookChecker evaluates the drugs of one hook call and records every
// evaluation in the call's audit record.
type HookChecker struct {
	s     *Service
	mu    sync.Mutex
	evals []HookEvaluation
}

// Check evaluates req for the drug of an order (order names it, via says
// how the drug was read) and records the evaluation.
func (c *HookChecker) Check(order, drug, via string, req engine.Request) (engine.Result, error) {
	res, err := c.s.kb.Evaluate(req)
	ev := HookEvaluation{Order: order, Drug: drug, Via: via, Request: req}
	if err != nil {
		ev.Error = err.Error()
	}
	c.mu.Lock()
	c.evals = append(c.evals, ev)
	c.mu.Unlock()
	return res, err
}

// hookRecord is the audit record of a hook call: the request record and
// the response (the cards) exactly as sent.
type hookRecord struct {
	request  HookRecord
	response json.RawMessage
}

func (r hookRecord) payloads() (any, any) { return r.request, r.response }

// EvaluateHook answers one CDS hook call. build reads the call's data,
// checks its drugs with the HookChecker and returns the call's record and
// the response; the service fills the record's evaluations, appends the
// audit entry and returns the response with its id.
func EvaluateHook[R any](ctx context.Context, s *Service, call Call, build func(*HookChecker) (HookRecord, R, error)) (Audited[R], error) {
	var zero Audited[R]
	chk := &HookChecker{s: s}
	rec, resp, err := build(chk)
	if err != nil {
		return zero, err
	}
	chk.mu.Lock()
	rec.Evaluations = chk.evals
	chk.mu.Unlock()
	if rec.Evaluations == nil {
		rec.Evaluations = []HookEvaluation{}
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return zero, err
	}
	id, err := s.append(ctx, call, hookRecord{request: rec, response: body})
	if err != nil {
		return zero, err
	}
	return Audited[R]{Result: resp, AuditID: id}, nil
}

// FeedbackRecord is the audited request of a CDS feedback post.
type FeedbackRecord struct {
	// Service is the CDS service id.
	Service string `json:"service"`
	// Feedback holds the items as received (each a JSON object).
	Feedback []json.RawMessage `json:"feedback"`
	// Keys are the storage keys of the items, in order.
	Keys []string `json:"keys"`
}

// FeedbackOutcome is what a feedback post stored.
type FeedbackOutcome struct {
	// Stored counts the items stored by this post; Duplicates those
	// already stored.
	Stored     int `json:"stored"`
	Duplicates int `json:"duplicates"`
}

// feedbackRecord is the audit record of a feedback post.
type feedbackRecord struct {
	request  FeedbackRecord
	response FeedbackOutcome
}

func (r feedbackRecord) payloads() (any, any) { return r.request, r.response }

// FeedbackItem is one CDS feedback item to store.
type FeedbackItem struct {
	// Key identifies the item: card uuid, outcome and outcome time.
	Key              string
	Service          string
	Card             string
	Outcome          string
	OutcomeTimestamp time.Time
	// Item is the feedback item as received (JSON).
	Item       []byte
	Issuer     string
	ReceivedAt time.Time
}

// FeedbackStore stores feedback items idempotently.
type FeedbackStore interface {
	// StoreFeedback inserts the items not stored before, in one
	// transaction, then calls audit with the counts; the transaction
	// commits only if audit succeeds, so nothing is stored that is not
	// audited.
	StoreFeedback(ctx context.Context, items []FeedbackItem, audit func(stored, duplicates int) error) (stored, duplicates int, err error)
}

// Feedback stores the items of a feedback post in store and audits the
// post in the same step: the audit entry is appended inside the store's
// transaction, which commits only once the entry is durable.
func (s *Service) Feedback(ctx context.Context, call Call, rec FeedbackRecord, store FeedbackStore, items []FeedbackItem) (Audited[FeedbackOutcome], error) {
	var out Audited[FeedbackOutcome]
	_, _, err := store.StoreFeedback(ctx, items, func(stored, duplicates int) error {
		o := FeedbackOutcome{Stored: stored, Duplicates: duplicates}
		id, err := s.append(ctx, call, feedbackRecord{request: rec, response: o})
		if err != nil {
			return err
		}
		out = Audited[FeedbackOutcome]{Result: o, AuditID: id}
		return nil
	})
	if err != nil {
		return Audited[FeedbackOutcome]{}, err
	}
	return out, nil
}
