package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeJSONReference is decodeJSON as it was before the one-pass intake
// (decodeSpans), kept as the reference of FuzzIntakeMatchesReference:
// scanKeys, CaseMismatch, then encoding/json over the whole body.
func decodeJSONReference(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64, strict bool) error {
	if err := requireJSON(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if r.Body == nil || r.Body == http.NoBody {
		return emptyBody()
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(maxBytes)
		}
		return &Error{Kind: KindMalformed, Detail: "the request body could not be read"}
	}
	key, dup, caseSuspect := scanKeys(raw, reflect.TypeOf(dst))
	if dup {
		return &Error{Kind: KindMalformed,
			Detail:        fmt.Sprintf("the key %q appears more than once in one object", key),
			InvalidParams: []Param{{Name: key, Reason: "duplicate key"}}}
	}
	if caseSuspect {
		if path, known, ok := CaseMismatch(raw, dst); ok {
			return CaseError(path, known)
		}
	}
	if !strict && json.Unmarshal(raw, dst) == nil {
		return nil
	}
	return decodeValue(raw, dst, maxBytes, strict)
}

// The shapes the intake is compared on. hookShape and feedbackShape are
// the CDS Hooks envelope and feedback types (cdshooks' hookRequest and
// feedbackRequest); oddShape holds what the span plan must not take.
type (
	hookShape struct {
		Hook              *string                    `json:"hook"`
		HookInstance      *string                    `json:"hookInstance"`
		FHIRServer        *string                    `json:"fhirServer"`
		FHIRAuthorization *authShape                 `json:"fhirAuthorization"`
		Context           json.RawMessage            `json:"context"`
		Prefetch          map[string]json.RawMessage `json:"prefetch"`
		Extension         map[string]json.RawMessage `json:"extension"`
	}
	authShape struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
		Scope       string      `json:"scope"`
		Subject     string      `json:"subject"`
		Patient     string      `json:"patient"`
	}
	feedbackShape struct {
		Feedback []struct {
			Card                string `json:"card"`
			Outcome             string `json:"outcome"`
			AcceptedSuggestions []struct {
				ID string `json:"id"`
			} `json:"acceptedSuggestions,omitempty"`
			OverrideReason *struct {
				Reason *struct {
					Code    string `json:"code"`
					System  string `json:"system,omitempty"`
					Display string `json:"display,omitempty"`
				} `json:"reason,omitempty"`
				UserComment string `json:"userComment,omitempty"`
			} `json:"overrideReason,omitempty"`
			OutcomeTimestamp string `json:"outcomeTimestamp"`
		} `json:"feedback"`
	}
	oddEmbedded struct {
		Context json.RawMessage            `json:"context"`
		X       map[string]json.RawMessage `json:"x"`
	}
	oddShape struct {
		oddEmbedded
		X   json.RawMessage            `json:"x"` // hides oddEmbedded.X
		D   json.RawMessage            // untagged "D" and a tag "D": neither is decoded
		D2  map[string]json.RawMessage `json:"D"`
		Raw json.RawMessage            // untagged: "Raw"
		N   int                        `json:"n"`
		S   []string                   `json:"s"`
		M   map[string]json.RawMessage `json:"m,omitempty"`
		P   *oddShape                  `json:"p"`
	}
	// selfShape decodes itself: the plan must leave it alone.
	selfShape struct {
		Context json.RawMessage `json:"context"`
		Seen    string
	}
)

func (s *selfShape) UnmarshalJSON(b []byte) error {
	s.Seen = string(b)
	return nil
}

var intakeShapes = []func() any{
	func() any { return new(hookShape) },
	func() any { return new(feedbackShape) },
	func() any { return new(oddShape) },
	func() any { return new(selfShape) },
}

// intakeSeeds are real hook and feedback bodies and the irregular ones the
// intake must answer as before.
func intakeSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, glob := range []string{
		filepath.Join("..", "..", "testdata", "cds", "requests", "*.json"),
		filepath.Join("..", "..", "cmd", "pgxsafety", "benchdata", "*.json"),
	} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	if len(seeds) < 5 {
		t.Fatalf("only %d real bodies found", len(seeds))
	}
	seeds = append(seeds, orderSignBody())
	for _, s := range []string{
		`{"feedback":[{"card":"c1","outcome":"accepted","acceptedSuggestions":[{"id":"s1"}],"outcomeTimestamp":"2024-01-01T00:00:00Z"}]}`,
		`{"feedback":[{"card":"c1","outcome":"overridden","overrideReason":{"reason":{"code":"x","system":"y"},"userComment":"z"},"outcomeTimestamp":"t"}]}`,
		`{"hook":"order-sign","hookInstance":"i","context":{"userId":"u"},"prefetch":{"a":null,"b":{"resourceType":"Bundle"}},"extension":{"e":[1,2]}}`,
		`{"hook":"order-sign","prefetch":null,"extension":null,"context":null}`,
		`{"prefetch":{},"extension":{}}`,
		`{"hook":"a","hook":"b"}`,
		`{"prefetch":{"p":{"x":1,"x":2}}}`,
		`{"prefetch":{"p":1,"p":2}}`,
		`{"Hook":"order-sign"}`, `{"PREFETCH":{}}`, `{"prefetcH":null,"prefetch":{}}`, `{"conteXt":1}`,
		`{"fhirAuthorization":{"Access_token":"x"}}`,
		`{"hook":1}`, `{"prefetch":[]}`, `{"prefetch":"x"}`, `{"prefetch":{"a":1}}`, `{"fhirAuthorization":{"expires_in":"x"}}`,
		`{"fhirAuthorization":{"expires_in":1e999999}}`, `{"n":1e400}`, `{"n":123456789012345678901234567890}`, `{"context":-0.0e-0}`,
		`{"context":1}x`, `{"context":1} {}`, `{"context":1}   `, ` {"context":1}`, `{}`, `[]`, `null`, `"x"`, `1`, ``, `   `,
		`{"context":tru}`, `{"context":01}`, `{"context":1.}`, `{"context":-}`, `{"context":"\x01"}`, `{"context":"\q"}`,
		`{"context":"\u12"}`, `{"context":"\ud800"}`, `{"a":1,}`, `{,"a":1}`, `[1,,2]`, `{"a" 1}`, `{"a":}`, `{"a":1"b":2}`,
		"{\"context\":\"\xff\xfe\"}", "{\"\xff\":1,\"\xfe\":2}", "{\"prefetch\":{\"\xff\":1,\"\xfe\":2}}", "\xef\xbb\xbf{}",
		`{"con\u0074ext":{"a":1}}`, `{"pre\u0066etch":{"k\u0065y":{}}}`, `{"\u0070refetch":{"a":1},"prefetch":{}}`,
		`{"context":{"a":"\"}"},"prefetch":{"\"":"}"}}`,
		`{"x":{"a":1},"D":[],"Raw":1,"hide":2,"context":{},"n":3,"s":["a"],"m":{"k":null},"p":{"x":2,"m":{}}}`,
		`{"n":"x","m":{}}`, `{"D":{"a":1}}`, `{"d":{}}`, `{"X":1}`, `{"raw":1}`, `{"context":1,"Context":2}`, `{"ſ":1}`, `{"K":1}`,
		strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
		`{"context":` + strings.Repeat(`[`, 9998) + strings.Repeat(`]`, 9998) + `}`,
		`{"context":` + strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500) + `}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// intakeOutcome runs one intake and describes its result for comparison.
func intakeOutcome(decode func(http.ResponseWriter, *http.Request, any, int64) error, body []byte, ct string, contentLength, limit int64, dst any) error {
	r := httptest.NewRequest(http.MethodPost, "/cds-services/x", bytes.NewReader(body))
	r.ContentLength = contentLength
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	return decode(httptest.NewRecorder(), r, dst, limit)
}

// sameIntakeError reports whether two intake errors are the same answer:
// kind, detail, invalid params, headers and the wrapped cause's text.
func sameIntakeError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ea, eb *Error
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return a.Error() == b.Error()
	}
	return ea.Kind == eb.Kind && ea.Detail == eb.Detail && reflect.DeepEqual(ea.InvalidParams, eb.InvalidParams) &&
		reflect.DeepEqual(ea.Header, eb.Header) && fmt.Sprint(ea.Err) == fmt.Sprint(eb.Err)
}

// FuzzIntakeMatchesReference: for any body, content type, declared length
// and limit,
// DecodeJSONExtensible gives exactly the reference's error, or no error
// and the same decoded value, on the hook and feedback shapes and on one
// the span plan must not take.
//
//	go test ./pgxapi/httpx -run '^$' -fuzz FuzzIntakeMatchesReference -fuzztime 2m
func FuzzIntakeMatchesReference(f *testing.F) {
	for _, s := range intakeSeeds(f) {
		f.Add(s, uint8(0))
	}
	f.Add([]byte(`{"context":{}}`), uint8(1))
	f.Add([]byte(`{"context":{}}`), uint8(2))
	f.Add([]byte(`{"context":{}}`), uint8(3))
	f.Add([]byte(`{"context":{"a":[1,2,3]}}`), uint8(1<<3))
	f.Add([]byte(`{"context":{"a":[1,2,3]}}`), uint8(2<<3))
	f.Add([]byte(`{"context":{"a":[1,2,3]}}`), uint8(3<<3))
	f.Add([]byte(`{"context":{"a":[1,2,3]}}`), uint8(3<<3|1))
	reference := func(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64) error {
		return decodeJSONReference(w, r, dst, maxBytes, false)
	}
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		limit := int64(1 << 20)
		if sel&1 != 0 {
			limit = int64(len(body)) / 2 // too large (when not empty)
		}
		ct := "application/json"
		switch sel >> 1 & 3 {
		case 1:
			ct = "application/json; charset=UTF-8"
		case 2:
			ct = "text/plain"
		case 3:
			ct = ""
		}
		// The declared length: true, unknown (chunked), short or long.
		cl := int64(len(body))
		switch sel >> 3 & 3 {
		case 1:
			cl = -1
		case 2:
			cl /= 3
		case 3:
			cl = 2*cl + 1
		}
		for _, shape := range intakeShapes {
			got, want := shape(), shape()
			gerr := intakeOutcome(DecodeJSONExtensible, body, ct, cl, limit, got)
			werr := intakeOutcome(reference, body, ct, cl, limit, want)
			if !sameIntakeError(gerr, werr) {
				t.Fatalf("%T %q: error %v, reference %v", got, body, gerr, werr)
			}
			if gerr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%T %q: decoded %+v, reference %+v", got, body, got, want)
			}
		}
	})
}

// TestDecodeSpansTakesHookBodies: the real hook bodies are decoded by the
// one pass (their context and prefetch values are the body's bytes, not
// copies), and the irregular ones are not.
func TestDecodeSpansTakesHookBodies(t *testing.T) {
	inBody := func(sub, body []byte) bool {
		if len(sub) == 0 {
			return false
		}
		// Some occurrence of its text in body is sub itself.
		for off := 0; ; {
			k := bytes.Index(body[off:], sub)
			if k < 0 {
				return false
			}
			if &body[off+k] == &sub[0] {
				return cap(sub) == len(sub)
			}
			off += k + 1
		}
	}
	taken := 0
	for _, body := range intakeSeeds(t)[:7] {
		var in hookShape
		if !decodeSpans(body, &in) {
			t.Errorf("%.60q: not taken", body)
			continue
		}
		taken++
		if !inBody(in.Context, body) {
			t.Errorf("%.60q: context is not the body's bytes", body)
		}
		for k, v := range in.Prefetch {
			if v != nil && !inBody(v, body) {
				t.Errorf("%.60q: prefetch %q is not the body's bytes", body, k)
			}
		}
		var ref hookShape
		if err := json.Unmarshal(body, &ref); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, ref) {
			t.Errorf("%.60q: decoded %+v, encoding/json %+v", body, in, ref)
		}
	}
	if taken == 0 {
		t.Fatal("no body taken")
	}
	for _, s := range []string{
		`{"hook":"a","hook":"b"}`, `{"Hook":"x"}`, `{"context":1}x`, `{"context":tru}`, `{"hook":1}`,
		`{"prefetch":[]}`, `{"context":"\q"}`, `[]`, `null`, ``, `{"a":1,}`,
	} {
		var in hookShape
		if decodeSpans([]byte(s), &in) {
			t.Errorf("%q: taken", s)
		}
		if !reflect.ValueOf(in).IsZero() {
			t.Errorf("%q: target left %+v", s, in)
		}
	}
	// A type that decodes itself, or a target already holding values, is
	// left to encoding/json.
	if decodeSpans([]byte(`{"context":{}}`), new(selfShape)) {
		t.Error("selfShape taken")
	}
	if decodeSpans([]byte(`{"context":{}}`), &hookShape{Context: json.RawMessage(`1`)}) {
		t.Error("a non-zero target taken")
	}
}
