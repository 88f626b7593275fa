package pgxapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// TestWriteEnvelopedMatchesWriteJSON: the /pgx/check answer written from
// the service's encoding is byte for byte (headers included) what
// httpx.WriteJSON writes for CheckResponse.
func TestWriteEnvelopedMatchesWriteJSON(t *testing.T) {
	env := Envelope{APIVersion: APIVersion, RequestID: "req <1> & \u2028", AuditLogID: "aud_X", Timestamp: "2026-01-02T03:04:05.000Z", LatencyMs: 7}
	for _, res := range []Result{
		{},
		{Drug: "clopidogrel <b>", Warnings: []string{"a & b", "\xff"}, Alerts: []Alert{{Severity: "HIGH", Message: "x > y"}}},
	} {
		want := httptest.NewRecorder()
		if err := httpx.WriteJSON(want, 200, CheckResponse{Envelope: env, Result: res}); err != nil {
			t.Fatal(err)
		}
		body, err := jsonNoEscape(res)
		if err != nil {
			t.Fatal(err)
		}
		got := httptest.NewRecorder()
		if err := writeEnveloped(got, env, body); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Body.String(), got.Body.String()); diff != "" {
			t.Errorf("body (-WriteJSON +writeEnveloped):\n%s", diff)
		}
		if diff := cmp.Diff(want.Header(), got.Header()); diff != "" {
			t.Errorf("header (-WriteJSON +writeEnveloped):\n%s", diff)
		}
	}
	if err := writeEnveloped(httptest.NewRecorder(), env, []byte(`[]`)); err == nil {
		t.Error("writeEnveloped accepted an answer that is not an object")
	}
}

// jsonNoEscape is v as service.CheckEncoded encodes an answer.
func jsonNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
