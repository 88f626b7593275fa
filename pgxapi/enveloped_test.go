package pgxapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
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

// envelopeHeadWant is env as encoding/json encodes it with HTML escaping
// off, less its closing brace and newline.
func envelopeHeadWant(t testing.TB, env Envelope) string {
	t.Helper()
	b, err := jsonNoEscape(env)
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b, []byte("}")))
}

// TestEnvelopeHeadMatchesEncodingJSON: appendHead writes what
// encoding/json writes for the envelope (less its closing brace).
func TestEnvelopeHeadMatchesEncodingJSON(t *testing.T) {
	for _, env := range []Envelope{
		{},
		{APIVersion: APIVersion, RequestID: "req_0123", AuditLogID: "aud_X", Timestamp: "2026-01-02T03:04:05.000Z", LatencyMs: 7},
		{APIVersion: "1", RequestID: "req <1> & \u2028\"\\\x01\xff", AuditLogID: "a", AuditReceipt: "cmVjZWlwdA==", Timestamp: "t", LatencyMs: -3},
	} {
		got := string(env.appendHead([]byte("x")))
		if diff := cmp.Diff("x"+envelopeHeadWant(t, env), got); diff != "" {
			t.Errorf("appendHead (-encoding/json +got):\n%s", diff)
		}
	}
}

// FuzzEnvelopeHeadMatchesEncodingJSON is the differential test of
// appendHead against encoding/json.
func FuzzEnvelopeHeadMatchesEncodingJSON(f *testing.F) {
	f.Add("1.1.0", "req_1", "aud_1", "", "2026-01-02T03:04:05.000Z", int64(3))
	f.Add("<&>", "\u2028\u2029", "\xff\x00\"\\", "rcpt", "", int64(-1<<63))
	f.Fuzz(func(t *testing.T, v, req, id, rcpt, ts string, ms int64) {
		env := Envelope{APIVersion: v, RequestID: req, AuditLogID: id, AuditReceipt: rcpt, Timestamp: ts, LatencyMs: ms}
		if got, want := string(env.appendHead(nil)), envelopeHeadWant(t, env); got != want {
			t.Fatalf("appendHead %q, encoding/json %q", got, want)
		}
	})
}

// TestWriteEnvelopedAtMatchesWriteJSON: the answer written in place
// behind the room left for the envelope is byte for byte (headers
// included) what httpx.WriteJSON writes for CheckResponse, whether the
// envelope fits the room or not.
func TestWriteEnvelopedAtMatchesWriteJSON(t *testing.T) {
	res := Result{Drug: "clopidogrel <b>", Warnings: []string{"a & b"}, Alerts: []Alert{{Severity: "HIGH", Message: "x > y"}}}
	body, err := jsonNoEscape(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  Envelope
		room int
		body []byte
	}{
		{"fits", Envelope{APIVersion: APIVersion, RequestID: "req_1", AuditLogID: "aud_X", AuditReceipt: "cmVjZWlwdA==", Timestamp: "2026-01-02T03:04:05.000Z", LatencyMs: 7}, envelopeRoom, body},
		{"fits-exactly", Envelope{APIVersion: "1", RequestID: "r", AuditLogID: "a", Timestamp: "t"}, len(`{"api_version":"1","request_id":"r","audit_log_id":"a","timestamp":"t","latency_ms":0,`) - 1, body},
		{"too-long", Envelope{APIVersion: "1", RequestID: strings.Repeat("r", 3000), AuditLogID: "a", Timestamp: "t"}, envelopeRoom, body},
		{"no-room", Envelope{APIVersion: "1", RequestID: "r", AuditLogID: "a", Timestamp: "t"}, 0, body},
		{"empty-object", Envelope{APIVersion: "1", RequestID: "r", AuditLogID: "a", Timestamp: "t"}, 100, []byte(`{}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			var answer any = CheckResponse{Envelope: tc.env, Result: res}
			if string(tc.body) == `{}` {
				answer = tc.env
			}
			if err := httpx.WriteJSON(want, 200, answer); err != nil {
				t.Fatal(err)
			}
			buf := append(bytes.Repeat([]byte{'#'}, tc.room), tc.body...)
			got := httptest.NewRecorder()
			if err := writeEnvelopedAt(got, tc.env, buf, tc.room); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Body.String(), got.Body.String()); diff != "" {
				t.Errorf("body (-WriteJSON +writeEnvelopedAt):\n%s", diff)
			}
			if diff := cmp.Diff(want.Header(), got.Header()); diff != "" {
				t.Errorf("header (-WriteJSON +writeEnvelopedAt):\n%s", diff)
			}
		})
	}
	if err := writeEnvelopedAt(httptest.NewRecorder(), Envelope{}, []byte(`xx[]`), 2); err == nil {
		t.Error("writeEnvelopedAt accepted an answer that is not an object")
	}
}
