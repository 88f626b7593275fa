package service

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// HookRecord is the audited request of a CDS hook call: what was asked,
// where its data came from, what could not be read and what every drug
// was checked with (never the FHIR access token).
type HookRecord struct {
	Hook         string
	HookInstance string
	Service      string
	FHIRServer   string
	PatientID    string
	EncounterID  string
	UserID       string
	Selections   []string
	Data         map[string]HookData
	// Evaluations are filled by the service: one per HookChecker.Check.
	Evaluations []HookEvaluation
	Issues      []InputIssue
	ShownCards  []string
	Suppressed  []string
}

// HookData says where the data of one prefetch key came from.
type HookData struct {
	// Source is "prefetch", "fhir" or "none".
	Source string
	// Error says why the data could not be had.
	Error string
}

// InputIssue records a problem with one input resource of a hook call.
type InputIssue struct {
	Ref          string
	ResourceType string
	// Severity is "error", "warning" or "info".
	Severity string
	Message  string
	Genomic  bool
}

// HookEvaluation records what one drug of one order was checked with.
type HookEvaluation struct {
	Order   string
	Drug    string
	Via     string
	Request engine.Request
	Error   string
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
	id, err := s.append(ctx, call, newHookRecord(rec, body))
	if err != nil {
		return zero, err
	}
	return audited(resp, id), nil
}

// FeedbackRecord is the audited request of a CDS feedback post.
type FeedbackRecord struct {
	// Service is the CDS service id.
	Service string
	// Feedback holds the items as received (each a JSON object).
	Feedback []json.RawMessage
	// Keys are the storage keys of the items, in order.
	Keys []string
}

// FeedbackOutcome is what a feedback post stored.
type FeedbackOutcome struct {
	// Stored counts the items stored by this post; Duplicates those
	// already stored.
	Stored     int
	Duplicates int
}

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

// FeedbackStore stores feedback items together with the audit entry of
// their post.
type FeedbackStore interface {
	// AppendFeedback inserts the items not stored before and appends the
	// audit entry that entry builds from the counts (items stored,
	// duplicates), in one transaction: the rows and the entry commit
	// together or neither does. It returns the appended entry once it is
	// durable. A failure of the log wraps audit.ErrUnavailable.
	AppendFeedback(ctx context.Context, items []FeedbackItem, entry func(stored, duplicates int) (audit.Entry, error)) (audit.Entry, error)
}

// Feedback stores the items of a feedback post and its audit entry in one
// call to store, which commits both or neither.
func (s *Service) Feedback(ctx context.Context, call Call, rec FeedbackRecord, store FeedbackStore, items []FeedbackItem) (Audited[FeedbackOutcome], error) {
	var o FeedbackOutcome
	e, err := store.AppendFeedback(ctx, items, func(stored, duplicates int) (audit.Entry, error) {
		o = FeedbackOutcome{Stored: stored, Duplicates: duplicates}
		return s.entry(call, newFeedbackRecord(rec, o))
	})
	if err != nil {
		return Audited[FeedbackOutcome]{}, err
	}
	ref, err := s.ref(e)
	if err != nil {
		return Audited[FeedbackOutcome]{}, err
	}
	return audited(o, ref), nil
}
