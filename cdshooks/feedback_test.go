package cdshooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
)

const feedbackPath = "/cds-services/pgx-order-select/feedback"

func specFeedback(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataCD, "spec", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFeedbackStoredAndAudited: the spec's feedback examples are stored
// once each (a repeat is a duplicate, not a second row) and every post is
// audited; replayed tokens are refused here too.
func TestFeedbackStoredAndAudited(t *testing.T) {
	e := newEnv(t)
	posts := []struct {
		file      string
		card      string
		stored    int
		duplicate int
	}{
		{"spec-2.0.1_feedback-accepted.json", "4e0a3a1e-3283-4575-ab82-028d55fe2719", 1, 0},
		{"spec-2.0.1_feedback-overridden.json", "f6b95768-b1c8-40dc-8385-bf3504b82ffb", 1, 0},
		{"spec-2.0.1_feedback-overridden-with-reason.json", "9368d37b-283f-44a0-93ea-547cebab93ed", 1, 0},
		{"spec-2.0.1_feedback-accepted.json", "4e0a3a1e-3283-4575-ab82-028d55fe2719", 0, 1},
	}
	store := e.store
	for i, p := range posts {
		rec := e.post(feedbackPath, specFeedback(t, p.file), &token{})
		if rec.Code != http.StatusOK {
			t.Fatalf("post %d: %d %s", i, rec.Code, rec.Body)
		}
		var got cdshooks.FeedbackResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got.Stored != p.stored || got.Duplicates != p.duplicate || got.AuditLogID == "" {
			t.Errorf("post %d (%s): %+v, want stored %d duplicates %d", i, p.file, got, p.stored, p.duplicate)
		}
		if n, err := store.Count(context.Background(), p.card); err != nil || n != 1 {
			t.Errorf("card %s stored %d times (%v), want 1", p.card, n, err)
		}
	}
	var endpoints []string
	for _, en := range e.auditEntries() {
		endpoints = append(endpoints, en.Endpoint)
	}
	want := []string{feedbackPath, feedbackPath, feedbackPath, feedbackPath}
	for i := range want {
		want[i] = "POST " + want[i]
	}
	if diff := cmp.Diff(want, endpoints); diff != "" {
		t.Errorf("audit endpoints (-want +got):\n%s", diff)
	}

	// A replayed token is refused at the feedback endpoint as well.
	tok := &token{rawToken: (&token{}).sign(t, feedbackPath)}
	body := specFeedback(t, "spec-2.0.1_feedback-overridden.json")
	if rec := e.post(feedbackPath, body, tok); rec.Code != http.StatusOK {
		t.Fatalf("first use: %d", rec.Code)
	}
	problemOf(t, e.post(feedbackPath, body, tok), http.StatusUnauthorized)
	// A token minted for the hook is not valid for the feedback endpoint.
	problemOf(t, e.post(feedbackPath, body, &token{audPath: selectPath}), http.StatusUnauthorized)
}

func TestFeedbackInvalid(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		body  string
		param string
	}{
		{"no items", `{"feedback":[]}`, "feedback"},
		{"bad outcome", `{"feedback":[{"card":"c","outcome":"ignored","outcomeTimestamp":"2021-12-11T10:05:31Z"}]}`, "feedback[0].outcome"},
		{"accepted without suggestions", `{"feedback":[{"card":"c","outcome":"accepted","outcomeTimestamp":"2021-12-11T10:05:31Z"}]}`, "feedback[0].acceptedSuggestions"},
		{"accepted with an override reason", `{"feedback":[{"card":"c","outcome":"accepted","acceptedSuggestions":[{"id":"s"}],"overrideReason":{"userComment":"x"},"outcomeTimestamp":"2021-12-11T10:05:31Z"}]}`, "feedback[0].overrideReason"},
		{"no card", `{"feedback":[{"outcome":"overridden","outcomeTimestamp":"2021-12-11T10:05:31Z"}]}`, "feedback[0].card"},
		{"bad time", `{"feedback":[{"card":"c","outcome":"overridden","outcomeTimestamp":"yesterday"}]}`, "feedback[0].outcomeTimestamp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := problemOf(t, e.post(feedbackPath, []byte(tc.body), &token{}), http.StatusBadRequest)
			for _, ip := range p.InvalidParams {
				if ip.Name == tc.param {
					return
				}
			}
			t.Errorf("invalid_params %+v does not name %s", p.InvalidParams, tc.param)
		})
	}
	problemOf(t, e.post("/cds-services/unknown/feedback", specFeedback(t, "spec-2.0.1_feedback-accepted.json"), &token{}), http.StatusNotFound)
}

// TestFeedbackNotStoredWhenAuditFails: with the audit log down the post is
// refused (503) and nothing is stored.
func TestFeedbackNotStoredWhenAuditFails(t *testing.T) {
	store := audittest.NewMemory()
	store.Fail(errors.New("disk full"))
	e := newEnvWith(t, t.TempDir(), store)
	rec := e.post(feedbackPath, specFeedback(t, "spec-2.0.1_feedback-accepted.json"), &token{})
	problemOf(t, rec, http.StatusServiceUnavailable)
	if n, _ := store.Count(context.Background(), "4e0a3a1e-3283-4575-ab82-028d55fe2719"); n != 0 {
		t.Errorf("%d items stored without an audit entry", n)
	}
}
