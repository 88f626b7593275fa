package httpx

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKinds: every kind has its status, problem type and title, and a
// problem of that kind is written with exactly them.
func TestKinds(t *testing.T) {
	want := map[Kind]Problem{
		KindInternal:              {Status: 500, Type: "urn:pgxsafety:problem:internal", Title: "Internal Server Error"},
		KindMalformed:             {Status: 400, Type: "urn:pgxsafety:problem:malformed-request", Title: "Bad Request"},
		KindInvalidParams:         {Status: 422, Type: "urn:pgxsafety:problem:invalid-params", Title: "Unprocessable Entity"},
		KindInvalidVCF:            {Status: 422, Type: "urn:pgxsafety:problem:invalid-vcf", Title: "Unprocessable Entity"},
		KindTooLarge:              {Status: 413, Type: "urn:pgxsafety:problem:payload-too-large", Title: "Request Entity Too Large"},
		KindUnsupportedMedia:      {Status: 415, Type: "urn:pgxsafety:problem:unsupported-media-type", Title: "Unsupported Media Type"},
		KindNotFound:              {Status: 404, Type: "urn:pgxsafety:problem:not-found", Title: "Not Found"},
		KindMethodNotAllowed:      {Status: 405, Type: "urn:pgxsafety:problem:method-not-allowed", Title: "Method Not Allowed"},
		KindUnauthorized:          {Status: 401, Type: "urn:pgxsafety:problem:unauthorized", Title: "Unauthorized"},
		KindForbidden:             {Status: 403, Type: "urn:pgxsafety:problem:forbidden", Title: "Forbidden"},
		KindRateLimited:           {Status: 429, Type: "urn:pgxsafety:problem:rate-limited", Title: "Too Many Requests"},
		KindClientClosed:          {Status: 499, Type: "urn:pgxsafety:problem:client-closed-request", Title: ""},
		KindAuditUnavailable:      {Status: 503, Type: "urn:pgxsafety:problem:audit-unavailable", Title: "Service Unavailable"},
		KindTimeout:               {Status: 503, Type: "urn:pgxsafety:problem:timeout", Title: "Service Unavailable"},
		KindIdentityUnavailable:   {Status: 503, Type: "urn:pgxsafety:problem:identity-unavailable", Title: "Service Unavailable"},
		KindShuttingDown:          {Status: 503, Type: "urn:pgxsafety:problem:shutting-down", Title: "Service Unavailable"},
		KindClassifierUnavailable: {Status: 503, Type: "urn:pgxsafety:problem:classifier-unavailable", Title: "Service Unavailable"},
		KindNotReady:              {Status: 503, Type: "urn:pgxsafety:problem:not-ready", Title: "Service Unavailable"},
		KindBusy:                  {Status: 503, Type: "urn:pgxsafety:problem:busy", Title: "Service Unavailable"},
		KindUpstream:              {Status: 502, Type: "urn:pgxsafety:problem:upstream-failed", Title: "Bad Gateway"},
		KindCDSUnauthorized:       {Status: 401, Type: "urn:pgxsafety:problem:cds-unauthorized", Title: "Unauthorized"},
		KindCDSPrecondition:       {Status: 412, Type: "urn:pgxsafety:problem:cds-prefetch-missing", Title: "Precondition Failed"},
		KindCDSUnknown:            {Status: 404, Type: "urn:pgxsafety:problem:cds-unknown-service", Title: "Not Found"},
		KindReplayCheck:           {Status: 503, Type: "urn:pgxsafety:problem:cds-replay-check-unavailable", Title: "Service Unavailable"},
	}
	if len(want) != int(kindCount) {
		t.Fatalf("the test covers %d kinds, the table has %d", len(want), kindCount)
	}
	types := map[string]Kind{}
	for k := range kindCount {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %d is not covered", k)
			continue
		}
		if other, dup := types[k.Type()]; dup {
			t.Errorf("kinds %d and %d share the problem type %s", other, k, k.Type())
		}
		types[k.Type()] = k
		got := Problem{Status: k.Status(), Type: k.Type(), Title: k.Title()}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("kind %d (-want +got):\n%s", k, d)
		}
		if got.Status < 400 || got.Status > 599 || !strings.HasPrefix(got.Type, "urn:pgxsafety:problem:") {
			t.Errorf("kind %d: %d %s is not an error response", k, got.Status, got.Type)
		}
		rec := httptest.NewRecorder()
		WriteProblem(rec, httptest.NewRequest(http.MethodGet, "/x", nil), &Error{Kind: k, Detail: "d"})
		var body Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		w.Detail = "d"
		if d := cmp.Diff(w, body); d != "" || rec.Code != w.Status {
			t.Errorf("kind %d written as %d (-want +got):\n%s", k, rec.Code, d)
		}
	}
	if k := kindCount + 1; k.Status() != 500 || k.Type() != TypeInternal {
		t.Errorf("a kind outside the table is %d %s, want internal", k.Status(), k.Type())
	}
}
