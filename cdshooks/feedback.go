package cdshooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Feedback outcomes.
const (
	OutcomeAccepted   = "accepted"
	OutcomeOverridden = "overridden"
)

// feedbackPost stores the outcomes of cards (CDS Hooks 2.0 Feedback):
// each item is stored once, keyed by card uuid, outcome and outcome time;
// the post is written to the audit log in the same step (nothing is stored
// that is not audited). Answer: 200 with the counts.
func (s *Server) feedbackPost(w http.ResponseWriter, r *http.Request) (err error) {
	id := mux.Vars(r)["id"]
	if _, ok := s.services[id]; !ok {
		return &httpx.Error{Kind: httpx.KindCDSUnknown, Detail: "no CDS service has this id; see GET /cds-services"}
	}
	caller, err := s.authenticate(r)
	if err != nil {
		return err
	}
	defer func() { releaseUnanswered(r.Context(), caller, err) }()
	var in feedbackRequest
	if err := httpx.DecodeJSONExtensible(w, r, &in, FeedbackBodyLimit); err != nil {
		return err
	}
	times, err := validateFeedback(in)
	if err != nil {
		return err
	}
	principal := caller.principal()
	now := s.svc.Now()
	recs := make([]service.FeedbackItem, len(in.Feedback))
	rec := service.FeedbackRecord{Service: id, Feedback: make([]json.RawMessage, len(in.Feedback))}
	for i, f := range in.Feedback {
		item, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("encode feedback item: %w", err)
		}
		key := FeedbackKey(f.Card, f.Outcome, times[i])
		recs[i] = service.FeedbackItem{Key: key, Service: id, Card: f.Card, Outcome: f.Outcome, OutcomeTimestamp: times[i],
			Item: item, Issuer: principal.Issuer, ReceivedAt: now}
		rec.Feedback[i] = item
		rec.Keys = append(rec.Keys, key)
	}
	ctx := r.Context()
	call := service.Call{Principal: principal, Endpoint: endpoint(r.URL.Path), RequestID: httpx.RequestID(ctx)}
	res, err := s.svc.Feedback(ctx, call, rec, s.feedback, recs)
	if err != nil {
		return err
	}
	out := FeedbackResponse{Stored: res.Result.Stored, Duplicates: res.Result.Duplicates, AuditLogID: res.AuditID}
	w.Header().Set("Cache-Control", "no-store")
	httpx.SetReceipt(w, res.Receipt)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// validateFeedback checks each item: card and outcome required, outcome
// accepted (with acceptedSuggestions) or overridden (optionally with an
// overrideReason), outcomeTimestamp an RFC 3339 time.
func validateFeedback(in feedbackRequest) ([]time.Time, error) {
	var ps []httpx.Param
	if len(in.Feedback) == 0 {
		ps = append(ps, httpx.Param{Name: "feedback", Reason: "is required: an array of at least one item"})
	}
	if len(in.Feedback) > maxFeedbackItems {
		ps = append(ps, httpx.Param{Name: "feedback", Reason: fmt.Sprintf("has more than %d items", maxFeedbackItems)})
	}
	times := make([]time.Time, len(in.Feedback))
	for i, f := range in.Feedback {
		at := fmt.Sprintf("feedback[%d]", i)
		if strings.TrimSpace(f.Card) == "" || len(f.Card) > 128 {
			ps = append(ps, httpx.Param{Name: at + ".card", Reason: "is required: the uuid of the card"})
		}
		switch f.Outcome {
		case OutcomeAccepted:
			if len(f.AcceptedSuggestions) == 0 {
				ps = append(ps, httpx.Param{Name: at + ".acceptedSuggestions", Reason: "is required when the outcome is accepted"})
			}
			for j, s := range f.AcceptedSuggestions {
				if strings.TrimSpace(s.ID) == "" {
					ps = append(ps, httpx.Param{Name: fmt.Sprintf("%s.acceptedSuggestions[%d].id", at, j), Reason: "is required"})
				}
			}
			if f.OverrideReason != nil {
				ps = append(ps, httpx.Param{Name: at + ".overrideReason", Reason: "is only for the overridden outcome"})
			}
		case OutcomeOverridden:
			if len(f.AcceptedSuggestions) > 0 {
				ps = append(ps, httpx.Param{Name: at + ".acceptedSuggestions", Reason: "is only for the accepted outcome"})
			}
			if or := f.OverrideReason; or != nil && or.Reason != nil && strings.TrimSpace(or.Reason.Code) == "" {
				ps = append(ps, httpx.Param{Name: at + ".overrideReason.reason.code", Reason: "is required"})
			}
		default:
			ps = append(ps, httpx.Param{Name: at + ".outcome", Reason: "must be accepted or overridden"})
		}
		t, err := time.Parse(time.RFC3339Nano, f.OutcomeTimestamp)
		if err != nil {
			ps = append(ps, httpx.Param{Name: at + ".outcomeTimestamp", Reason: "is required: an RFC 3339 date-time"})
		}
		times[i] = t
	}
	if len(ps) > 0 {
		return nil, invalid(ps...)
	}
	return times, nil
}

// FeedbackKey is the idempotency key of a feedback item: SHA-256 of the
// card uuid, the outcome and the outcome time in UTC.
func FeedbackKey(card, outcome string, at time.Time) string {
	h := sha256.Sum256([]byte(card + "\x00" + outcome + "\x00" + at.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h[:])
}
