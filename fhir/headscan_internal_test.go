package fhir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// resourcesReference is Resources as it was before the one-pass top-level
// scan: head and the Bundle decoded with encoding/json. It is the
// reference of FuzzResourcesMatchesReference.
func resourcesReference(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	h, err := headDecode(raw)
	if err != nil {
		return nil, err
	}
	switch h.ResourceType {
	case "OperationOutcome":
		return nil, outcomeError(raw)
	case "Bundle":
		var b bundle
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("Bundle: %s", clip(err.Error()))
		}
		return entryResources(b), nil
	}
	return []json.RawMessage{raw}, nil
}

// headScanSeeds are the edge cases of the scan: escapes, non-ASCII and
// folded keys, nested objects holding "id", duplicate keys, nulls, wrong
// types, entries and links of every shape, and invalid JSON.
var headScanSeeds = []string{
	`{"resourceType":"Observation","id":"a"}`,
	`{"id":"a","resourceType":"Patient","meta":{"id":"nested"},"contained":[{"resourceType":"Medication","id":"m"}]}`,
	`{"resourceType":"Obs\u0065rvation","i\u0064":"\u00e9\"x"}`,
	`{"resourceType":"Observation","id":"a","id":"b"}`,
	`{"resourceType":"Observation","id":"a","id":null}`,
	`{"ResourceType":"Observation","ID":"a","Id":"b"}`,
	`{"reſourceType":"Patient","\u212aid":"k"}`,
	`{"resourceType":"Patient","id":7}`,
	`{"resourceType":["Patient"],"id":"a"}`,
	`{"resourceType":"Patient","id":"a"`,
	`{"resourceType":"Patient","id":"a"} x`,
	`{"resourceType":"Patient","id":"a",}`,
	`{"resourceType":"Patient","x":01}`,
	`{"resourceType":"Patient","x":"\x01"}`,
	`{"resourceType":"Patient","x":"\ud800"}`,
	"{\"resourceType\":\"Pat\xffient\"}",
	`{"id":"a"}`, `[]`, `"x"`, `null`, ``, `  {"resourceType" : "Patient" , "id" : "p" }  `,
	`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"p"}},null,{"fullUrl":null,"resource":null},{}]}`,
	`{"resourceType":"Bundle","entry":[{"fullUrl":"urn:uuid:1","resource":{"resourceType":"Patient","id":"p"}},` +
		`{"resource":{"resourceType":"MedicationRequest","subject":{"reference":"urn:uuid:1"}}}]}`,
	`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient"},"Resource":{"resourceType":"Condition"}}]}`,
	`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient"}}],"entry":[{"fullUrl":"x"}]}`,
	`{"resourceType":"Bundle","entry":{"resource":{}}}`,
	`{"resourceType":"Bundle","entry":[1]}`,
	`{"resourceType":"Bundle","entry":[{"fullUrl":1}]}`,
	`{"resourceType":"Bundle","entry":null,"link":[{"relation":"next","url":"u"},null,{"url":null}]}`,
	`{"resourceType":"Bundle","link":[{"relation":1}]}`,
	`{"resourceType":"Bundle","link":{"relation":"self"}}`,
	`{"resourceType":"Bundle","ENTRY":[{"FULLURL":"urn:a","RESOURCE":{"resourceType":"Patient","id":"p"}}]}`,
	`{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"not-found","diagnostics":"gone"}]}`,
	`{"resourceType":"Patient","entry":5}`,
	`{"resourceType":"Patient","deep":[[[[{"id":[]}]]]]}`,
	`{"resourceType":"Patient","n":[-0,1.5e+3,2E-2,-12.0,0]}`,
	`{"resourceType":"Patient","n":[1.]}`, `{"resourceType":"Patient","n":[-]}`, `{"resourceType":"Patient","n":[1e]}`,
	`{"resourceType":"Patient","b":[true,false,nul]}`,
}

func addHeadScanSeeds(f *testing.F) {
	for _, s := range headScanSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "fhir", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

func TestHeadScan(t *testing.T) {
	type result struct {
		H   rawHead
		Err string
	}
	tests := []struct {
		in   string
		want result
	}{
		{`{"resourceType":"Observation","id":"a"}`, result{H: rawHead{"Observation", "a"}}},
		{`{"meta":{"id":"nested"},"resourceType":"Patient"}`, result{H: rawHead{ResourceType: "Patient"}}},
		{`{"resourceType":"Obs\u0065rvation","i\u0064":"\u00e9\"x"}`, result{H: rawHead{"Observation", "é\"x"}}},
		{`{"resourceType":"Observation","id":"a","ID":"b","id":null}`, result{H: rawHead{"Observation", "b"}}},
		{`{"reſourceType":"Patient"}`, result{H: rawHead{ResourceType: "Patient"}}},
		{`{"id":"a"}`, result{H: rawHead{ID: "a"}, Err: "no resourceType"}},
		{`{"resourceType":"Patient","id":7}`, result{H: rawHead{ResourceType: "Patient"},
			Err: "not a JSON object: json: cannot unmarshal number into Go struct field rawHead.id of type string"}},
		{`{"resourceType":"Patient"`, result{Err: "not a JSON object: unexpected end of JSON input"}},
	}
	for _, tt := range tests {
		h, err := head(json.RawMessage(tt.in))
		got := result{H: h}
		if err != nil {
			got.Err = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("head(%s) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// FuzzValidJSONMatchesEncodingJSON: the scan accepts exactly what
// json.Valid accepts.
func FuzzValidJSONMatchesEncodingJSON(f *testing.F) {
	addHeadScanSeeds(f)
	f.Add([]byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)))
	f.Add([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// TestValidJSONDepth: encoding/json's nesting limit (10000) holds in the
// scan, inside a resource too.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		b := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("depth %d: validJSON %v, json.Valid %v", n, got, want)
		}
		r := []byte(`{"resourceType":"Bundle","entry":[{"resource":` + strings.Repeat("[", n-3) + strings.Repeat("]", n-3) + `}]}`)
		gh, gerr := head(r)
		wh, werr := headDecode(r)
		if gh != wh || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("depth %d: head (%v, %v), headDecode (%v, %v)", n, gh, gerr, wh, werr)
		}
	}
}

// FuzzHeadMatchesDecode: head answers exactly as headDecode (the
// json.Unmarshal reader it replaced on the fast path): same head, same
// error text.
func FuzzHeadMatchesDecode(f *testing.F) {
	addHeadScanSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		gh, gerr := head(b)
		wh, werr := headDecode(b)
		if gh != wh || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%q: head (%+v, %v), headDecode (%+v, %v)", b, gh, gerr, wh, werr)
		}
	})
}

// FuzzResourcesMatchesReference: Resources gives the same resources (byte
// for byte) and the same error as the encoding/json implementation.
func FuzzResourcesMatchesReference(f *testing.F) {
	addHeadScanSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := Resources(b)
		want, werr := resourcesReference(b)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("%q: error %v, reference %v", b, gerr, werr)
		}
		var goe, woe *OutcomeError
		if errors.As(gerr, &goe) != errors.As(werr, &woe) {
			t.Fatalf("%q: OutcomeError %v, reference %v", b, gerr, werr)
		}
		if len(got) != len(want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: %d resources, reference %d", b, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: resource %d is %s, reference %s", b, i, got[i], want[i])
			}
		}
	})
}

// benchBundle is a searchset Bundle of 30 copies of the IG's Variant
// Observation (about 30 KB, the size of the CDS benchmark's genomics
// prefetch).
func benchBundle(b *testing.B) []byte {
	obs, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "Observation-variant-1-pgx-example.json"))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"resourceType":"Bundle","type":"searchset","entry":[`)
	for i := range 30 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"resource":`)
		buf.Write(bytes.TrimSpace(obs))
		buf.WriteByte('}')
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// BenchmarkHead: head on one Observation, the scan against the
// json.Unmarshal reader (decode).
func BenchmarkHead(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "Observation-variant-1-pgx-example.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		f    func(json.RawMessage) (rawHead, error)
	}{{"scan", head}, {"decode", headDecode}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bm.f(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResources: Resources on a 30-entry Bundle, the one-pass scan
// against the encoding/json implementation (reference).
func BenchmarkResources(b *testing.B) {
	raw := benchBundle(b)
	for _, bm := range []struct {
		name string
		f    func(json.RawMessage) ([]json.RawMessage, error)
	}{{"scan", Resources}, {"reference", resourcesReference}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if rs, err := bm.f(raw); err != nil || len(rs) != 30 {
					b.Fatal(len(rs), err)
				}
			}
		})
	}
}
