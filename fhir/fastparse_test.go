package fhir

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/fhir/go/jsonformat"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	dpb "github.com/google/fhir/go/proto/google/fhir/proto/r4/core/datatypes_go_proto"
)

// corpusResources returns every FHIR resource (any JSON object with a
// resourceType, Bundles opened) in the repository's test data: the FHIR
// fixtures, the IG examples and the CDS Hooks requests' prefetch and
// draftOrders. Each is given as written and re-marshalled (keys sorted,
// as the CDS benchmark and resolveBundleRefs produce them).
func corpusResources(t testing.TB) map[string][]byte {
	t.Helper()
	var files []string
	for _, g := range []string{"fhir/*.json", "fhir/ig/*.json", "cds/requests/*.json"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", g))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d test data files found", len(files))
	}
	out := map[string][]byte{}
	var walk func(name string, raw json.RawMessage)
	walk = func(name string, raw json.RawMessage) {
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) > 0 && raw[0] == '{':
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return
			}
			if _, ok := obj["resourceType"]; ok {
				out[name] = raw
				var v any
				if json.Unmarshal(raw, &v) == nil {
					if b, err := json.Marshal(v); err == nil {
						out[name+" (re-marshalled)"] = b
					}
				}
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(name+"."+k, obj[k])
			}
		case len(raw) > 0 && raw[0] == '[':
			var arr []json.RawMessage
			if json.Unmarshal(raw, &arr) != nil {
				return
			}
			for i, e := range arr {
				walk(name+"["+string(rune('0'+i%10))+"]"+strings.Repeat("'", i/10), e)
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		walk(filepath.Base(f), b)
	}
	return out
}

// edgeCases are hand-made resources around the fast path's limits: each
// either declines or must equal google/fhir's result.
var edgeCases = []string{
	// The resource type guessed from the first "resourceType" bytes:
	// after other members (encoding/json's sorted keys), a string value
	// "resourceType" before the member, a nested member naming another
	// type first, the member repeated, members of another type before it.
	`{"code":{"text":"x"},"id":"o1","resourceType":"Observation","status":"final"}`,
	`{"code":{"text":"resourceType"},"resourceType":"Observation","status":"final"}`,
	`{"contained":[{"resourceType":"Patient","id":"p"}],"resourceType":"Observation","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Patient","resourceType":"Observation","status":"final","code":{"text":"x"}}`,
	`{"gender":"male","resourceType":"Observation","status":"final","code":{"text":"x"}}`,
	`{"status":"final","code":{"text":"x"},"resourceType":"Patient"}`,
	`{"status":"final","code":{"text":"x"},"resourceType":"Observation","resourceType":"Observation"}`,
	`{"status":"final","code":{"text":"x"},"resourceType" : "Observation" }`,
	`{"status":"final","code":{"text":"x"}}`,
	// Accepted shapes.
	`{"resourceType":"Patient","id":"p1","gender":"female","birthDate":"1980"}`,
	`{"resourceType":"Patient","id":"p1","gender":"female","birthDate":"1980-02"}`,
	`{"resourceType":"Patient","id":"p1","active":true,"name":[{"family":"Rao","given":["A","B"]}]}`,
	`{"resourceType":"Patient","id":"p1","active":false}`,
	`{"resourceType":"Patient","id":"p1","identifier":[{"system":"urn:oid:1.2.3","value":"123","use":"usual"}]}`,
	`  {"id":"p1" , "resourceType" : "Patient" ,"gender":"male"}  ` + "\n",
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00+05:30"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00.123-03:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00.1234567Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00-00:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"1969-12-31T23:59:59.999999Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"0001-01-01"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"-0001"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-02-30"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-02-00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T24:00:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00+14:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01T10:00:00+14:30"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020-01-01 10:00:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":" 2020"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectivePeriod":{"start":"2020","end":"2021-03-04T05:06:07Z"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveInstant":"2020-01-01T10:00:00.5+01:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveInstant":"2020-01-01"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"issued":"2020-01-01T10:00:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"issued":"2020-01-01T10:00:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"effectiveDateTime":"2020","effectiveInstant":"2020-01-01T10:00:00Z"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueString":"a","valueCodeableConcept":{"text":"b"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1.50,"unit":"mg","comparator":"<="}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":-0}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1e5}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1E+05}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":01}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":1.}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":"1.5"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"valueQuantity":{"value":123456789012345678901234567890.123456789}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"component":[{"code":{"text":"c"},"valueRange":{"low":{"value":55227976},"high":{"value":55227977}}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/1/_history/a b"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/1/_history/` + strings.Repeat("9", 65) + `"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/a b/_history/1"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"#a\u0001"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/1","type":"Patient","display":"P"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/1","identifier":{"value":"1"}}}`,
	`{"resourceType":"Patient","birthDate":"2020-13"}`,
	`{"resourceType":"Patient","birthDate":"-2020"}`,
	`{"resourceType":"Patient","birthDate":"-2020-01-01"}`,
	`{"resourceType":"Patient","birthDate":"20200"}`,
	`{"resourceType":"Patient","birthDate":"2020-01-01T"}`,
	`{"resourceType":"Patient","birthDate":"0000"}`,
	`{"resourceType":"Patient","birthDate":"2020-02-29"}`,
	`{"resourceType":"Patient","birthDate":"2021-02-29"}`,
	`{"resourceType":"Condition","onsetDateTime":"2020-01-01T00:00:00.000Z","recordedDate":"2020-06"}`,
	`{"resourceType":"Condition","onsetDateTime":"2020-01-01T00:00:00.000000001+01:00"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"\"start","coding":[{"display":"end\"","code":"a\\"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"\\"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x\u0041y\u00e9z\u20acw"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x\u00"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x\uD800\uDC00"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x\`,
	// Enum codes: case, dashes, original codes, unknown codes.
	`{"resourceType":"Observation","status":"FINAL","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"Final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"entered-in-error","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"entered_in_error","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final ","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"bogus","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"invalid_uninitialized","code":{"text":"x"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1"}}`,
	`{"resourceType":"MedicationRequest","status":"on-hold","intent":"original-order","medicationReference":{"reference":"#med1"},"subject":{"reference":"Patient/1"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/1/_history/2"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"http://x/Patient/1"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Nonsense/1"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"urn:uuid:1234"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","medicationCodeableConcept":{"text":"x"},"subject":{"reference":"Patient/a/b"}}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","authoredOn":"2024-01-15T08:00:00Z","reasonCode":[{"text":"x"}]}`,
	`{"resourceType":"Medication","id":"m","code":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"32968"}]},"status":"active"}`,
	`{"resourceType":"Condition","id":"c","clinicalStatus":{"coding":[{"code":"active"}]},"code":{"text":"x"},"onsetDateTime":"2020"}`,
	`{"resourceType":"Specimen","id":"s","type":{"text":"blood"},"subject":{"reference":"Patient/p"}}`,
	// Primitive validity: codes, ids, URIs, strings.
	`{"resourceType":"Observation","id":"a b","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","id":"` + strings.Repeat("a", 64) + `","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","id":"` + strings.Repeat("a", 65) + `","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"code":" 12"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"code":"a  b"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"code":"a b"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"code":"a\tb"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://a b"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://[::1"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"%zz"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"a\u0001"}]}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"tab\there"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"bell\u0007"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"nul\u0000"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"é ü — 漢字 😀 \u00e9 \/ \" \\ \n"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"surrogate \ud83d\ude00"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"lone \ud83d"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"bad \x"}}`,
	"{\"resourceType\":\"Observation\",\"status\":\"final\",\"code\":{\"text\":\"raw\x01ctl\"}}",
	"{\"resourceType\":\"Observation\",\"status\":\"final\",\"code\":{\"text\":\"bad utf8 \xff\"}}",
	`{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"1","display":"d","version":"2","userSelected":true}]}}`,
	`{"resourceType":"Observation","meta":{"profile":["http://x/y"],"lastUpdated":"2020-01-01T00:00:00Z","versionId":"1"},"status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","text":{"status":"generated","div":"<div xmlns=\"http://www.w3.org/1999/xhtml\">x</div>"},"status":"final","code":{"text":"x"}}`,
	// Extensions: simple ones are read, the rest declines.
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueRelatedArtifact":{"type":"citation","url":"https://cpicpgx.org/g)"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueRelatedArtifact":{"type":"Citation","label":"l","display":"d","citation":"c","resource":"http://r|1"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueRelatedArtifact":{"type":"bogus"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueRelatedArtifact":{}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueRelatedArtifact":{"document":{"url":"http://d"}}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueCodeableConcept":{"text":"y"}},{"url":"http://z","valueReference":{"reference":"Patient/1"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueBoolean":true},{"url":"http://x","valueCode":"a b"},{"url":"u","valueUri":"urn:x"},{"url":"u","valueDateTime":"2020-01"}]}`,
	`{"resourceType":"MedicationRequest","status":"active","intent":"order","extension":[{"url":"http://x","valueString":"y"}],"medicationCodeableConcept":{"text":"x"}}`,
	`{"resourceType":"Patient","extension":[{"url":"http://x","valueCodeableConcept":{"coding":[{"code":"c"}]}}],"gender":"male"}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://a b","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"%zz","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":"y","valueCode":"z"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":"y","url":"http://z"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueInteger":1}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueAnnotation":{"text":"a"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueBogus":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valuestring":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":""}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":null}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":{"url":"http://x","valueString":"y"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","extension":[{"url":"a","valueString":"y"}]}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":"y","extension":[{"url":"a","valueString":"y"}]}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"id":"e1","url":"http://x","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","_valueString":{"id":"a"}}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[{"url":"http://x","valueString":"y"}],"extension":[{"url":"http://x","valueString":"y"}]}`,
	// Shapes the fast path declines.
	`{"resourceType":"Observation","status":"final","_status":{"extension":[]},"code":{"text":"x"}}`,
	`{"resourceType":"Observation","_status":{"id":"s"},"code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"modifierExtension":[{"url":"http://x","valueString":"y"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"contained":[{"resourceType":"Patient","id":"p"}]}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"unknownElement":1}`,
	`{"resourceType":"Observation","Status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","Code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"category":{"text":"c"}}`,
	`{"resourceType":"Observation","status":"final","code":{"coding":{"code":"c"}}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":[{"reference":"Patient/1"}]}`,
	`{"resourceType":"Observation","status":null,"code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":null}`,
	`{"resourceType":"Observation","status":"final","code":{"text":5}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"category":[]}`,
	`{"resourceType":"Observation","status":"final","code":{}}`,
	`{"resourceType":"Observation","status":"","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":""}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":""}}`,
	`{"resourceType":"Observation","status":"final","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x","text":"y"}}`,
	`{"resourceType":"Observation","resourceType":"Observation","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","st\u0061tus":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observ\u0061tion","status":"final","code":{"text":"x"}}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"}} trailing`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"},}`,
	`{"resourceType":"Observation","status":"final","code":{"text":"x"}`,
	`{"resourceType":"Observation"}`,
	`{"resourceType":"Observation","valueQuantity":{"value":1.5}}`,
	`{"resourceType":"Patient","active":"true"}`,
	`{"resourceType":"Patient","active":truex}`,
	`{"resourceType":"Patient","birthDate":"1980-01-01T00:00:00Z"}`,
	`{"resourceType":"Patient","gender":"Male"}`,
	`{"resourceType":"Patient","gender":"mail"}`,
	`{"resourceType":"Encounter","id":"e"}`,
	`{"resourceType":5}`,
	`{"resourceType":"Bundle","entry":[]}`,
	`[]`,
	`null`,
	``,
}

// checkFast compares the fast path with google/fhir on one resource: the
// fast path either declines or gives the same proto (and head), and it
// never accepts what google/fhir rejects. It reports whether the fast
// path took the resource.
func checkFast(t *testing.T, p *Parser, name string, raw []byte) bool {
	t.Helper()
	fast, h, ok := p.fastParse(raw)
	want, err := p.u.UnmarshalR4(raw)
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%s: fast path accepted what google/fhir rejects (%v):\n%s", name, err, raw)
		return true
	}
	if d := cmp.Diff(want, fast, protocmp.Transform()); d != "" {
		t.Errorf("%s: fast path differs from google/fhir (-google +fast):\n%s", name, d)
	}
	wh, herr := head(raw)
	if herr != nil || wh != h {
		t.Errorf("%s: head %+v, want %+v (%v)", name, h, wh, herr)
	}
	return true
}

func TestFastParseMatchesGoogleFHIRCorpus(t *testing.T) {
	p, err := NewParser()
	if err != nil {
		t.Fatal(err)
	}
	corpus := corpusResources(t)
	names := make([]string, 0, len(corpus))
	for n := range corpus {
		names = append(names, n)
	}
	sort.Strings(names)
	took := 0
	for _, n := range names {
		if checkFast(t, p, n, corpus[n]) {
			took++
		}
	}
	t.Logf("%d corpus resources, %d on the fast path", len(corpus), took)
	if took == 0 {
		t.Error("no corpus resource took the fast path")
	}
}

func TestFastParseMatchesGoogleFHIREdgeCases(t *testing.T) {
	p, err := NewParser()
	if err != nil {
		t.Fatal(err)
	}
	took := 0
	for i, c := range edgeCases {
		if checkFast(t, p, "edge case "+string(rune('A'+i%26))+strings.Repeat("'", i/26), []byte(c)) {
			took++
		}
	}
	t.Logf("%d edge cases, %d on the fast path", len(edgeCases), took)
}

// TestFastPathTakesBenchmarkResources: the resources of the CDS order-sign
// benchmark (the Patient, the IG's Genotype and Variant, generated
// Variants and active MedicationRequests re-marshalled with sorted keys,
// the draft clopidogrel order, the IG's Therapeutic Implication with its
// relatedArtifact extension) take the fast path, so the speed-up cannot
// vanish silently.
func TestFastPathTakesBenchmarkResources(t *testing.T) {
	p, err := NewParser()
	if err != nil {
		t.Fatal(err)
	}
	corpus := corpusResources(t)
	variant := corpus["Observation-variant-1-pgx-example.json"]
	var m map[string]any
	if err := json.Unmarshal(variant, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = "var-rs4244285"
	m["subject"] = map[string]any{"reference": "Patient/CGPatientExample01"}
	m["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": "http://loinc.org", "code": "LA9634-2", "display": "Absent"}}}
	generated, _ := json.Marshal(m)
	med, _ := json.Marshal(map[string]any{
		"resourceType": "MedicationRequest", "id": "active-1", "status": "active", "intent": "order",
		"authoredOn":                "2024-01-15",
		"medicationCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": SystemRxNorm, "code": "1"}}},
		"subject":                   map[string]any{"reference": "Patient/CGPatientExample01"},
	})
	cases := map[string][]byte{
		"generated variant":  generated,
		"active medication":  med,
		"IG variant":         variant,
		"IG genotype":        corpus["Observation-Pgx-geno-1001.json"],
		"request patient":    corpus["order-sign-clopidogrel-cyp2c19-pm.json.prefetch.patient"],
		"request draft":      corpus["order-sign-clopidogrel-cyp2c19-pm.json.context.draftOrders.entry[0].resource"],
		"re-marshalled geno": corpus["Observation-Pgx-geno-1001.json (re-marshalled)"],
		"IG implication":     corpus["Observation-TxImp01.json"],
	}
	for name, raw := range cases {
		if len(raw) == 0 {
			t.Errorf("%s: not in the corpus", name)
			continue
		}
		if !checkFast(t, p, name, raw) {
			t.Errorf("%s: declined by the fast path", name)
		}
	}
}

// FuzzFastParseMatchesGoogleFHIR is the differential proof: on any input
// the fast path declines or builds exactly google/fhir's proto, and never
// accepts what google/fhir rejects.
func FuzzFastParseMatchesGoogleFHIR(f *testing.F) {
	for _, raw := range corpusResources(f) {
		f.Add(raw)
	}
	for _, c := range edgeCases {
		f.Add([]byte(c))
	}
	p, err := NewParser()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFast(t, p, "fuzz input", b)
	})
}

// TestPrimitiveChecksMatchRegexes: the hand-written checks of code, id and
// string agree with google/fhir's regexes (the value_regex annotations
// and jsonpbhelper's invalid string characters).
func TestPrimitiveChecksMatchRegexes(t *testing.T) {
	codeRE := valueRegex(&dpb.Code{})
	idRE := valueRegex(&dpb.Id{})
	invalidStringRE := regexp.MustCompile("[\x00-\x08\x0B\x0C\x0E-\x1F]")
	alphabet := []string{"a", "Z", "0", "-", ".", "_", " ", "\t", "\n", "\r", "\f", "\v", "\x00", "\x1f", "é", "\u00a0", "\u2003", "😀"}
	var inputs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, a := range alphabet {
			gen(prefix+a, n-1)
		}
	}
	gen("", 3)
	inputs = append(inputs, strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", maxFastStringSize+1))
	for _, in := range inputs {
		if got, want := validCode(in), codeRE.MatchString(in); got != want {
			t.Errorf("validCode(%q) = %v, regex %v", in, got, want)
		}
		if got, want := validID(in), idRE.MatchString(in); got != want {
			t.Errorf("validID(%q) = %v, regex %v", in, got, want)
		}
		if got, want := validString(in), len(in) <= maxFastStringSize && !invalidStringRE.MatchString(in); got != want {
			t.Errorf("validString(%q) = %v, want %v", in, got, want)
		}
	}
	if d := cmp.Diff([]bool{true, false}, []bool{validCode("a b"), validCode("a  b")}); d != "" {
		t.Error(d)
	}
}

// referenceCases are reference strings around normalizeReference's forms.
var referenceCases = []string{
	"", "#", "#frag", "#a/b", "Patient/1", "Patient/", "/1", "Patient", "Patient/1/_history/2",
	"Patient/1/_history/", "Patient/1/_history/a b", "Patient/1/_history/2/x", "Patient/1/history/2",
	"Patient/1/_history", "Patient/a/b", "Nonsense/1", "Nonsense/1/_history/2", "patient/1",
	"ProcedureRequest/1", "ReferralRequest/1/_history/1", "BodySite/1", "DeviceComponent/x",
	"http://x/Patient/1", "http://x", "urn:uuid:1234", "urn:oid:1.2.3", "Observation/Pgx-geno-1001",
	"Organization/ExampleOrg", "MedicationRequest/m", "Patient/" + strings.Repeat("9", 65) + "/_history/1",
	"Patient/1/_history/" + strings.Repeat("9", 65), "//", "///", "////", "a//b", "Patient//_history/1",
}

// googleNormalizeReference is the reference: jsonformat.NormalizeReference,
// then the id check of a "_history" version.
func googleNormalizeReference(r *dpb.Reference) bool {
	if jsonformat.NormalizeReference(r) != nil {
		return false
	}
	m := r.ProtoReflect()
	if f := m.WhichOneof(m.Descriptor().Oneofs().ByName("reference")); f != nil {
		if id, ok := m.Get(f).Message().Interface().(*dpb.ReferenceId); ok && id.GetHistory() != nil {
			return validID(id.GetHistory().GetValue())
		}
	}
	return true
}

// checkReference compares normalizeReference with the reference on uri.
func checkReference(t *testing.T, uri string) {
	t.Helper()
	got := &dpb.Reference{Reference: &dpb.Reference_Uri{Uri: &dpb.String{Value: uri}}, Display: &dpb.String{Value: "d"}}
	want := proto.Clone(got).(*dpb.Reference)
	gotOK, wantOK := normalizeReference(got), googleNormalizeReference(want)
	if gotOK != wantOK {
		t.Errorf("normalizeReference(%q) ok = %v, google %v", uri, gotOK, wantOK)
		return
	}
	if !gotOK {
		return
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("normalizeReference(%q) differs (-google +fast):\n%s", uri, d)
	}
}

func TestNormalizeReferenceMatchesGoogleFHIR(t *testing.T) {
	for _, c := range referenceCases {
		checkReference(t, c)
	}
	// Every R4 resource type, as Type/id and Type/id/_history/v.
	for typ := range referenceFields {
		checkReference(t, typ+"/x")
		checkReference(t, typ+"/x/_history/1")
	}
	if len(referenceFields) < 100 {
		t.Errorf("only %d reference types", len(referenceFields))
	}
}

// FuzzNormalizeReference: normalizeReference agrees with
// jsonformat.NormalizeReference on any reference string.
func FuzzNormalizeReference(f *testing.F) {
	for _, c := range referenceCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		checkReference(t, uri)
	})
}

// uriCases are URIs around plainURI's limits.
var uriCases = []string{
	"http://loinc.org", "https://cpicpgx.org/guidelines/guideline-for-clopidogrel-and-cyp2c19)", "urn:oid:1.2.3",
	"urn:uuid:e44fbe33-6084-4ae2-a95e-8bc451c63340", "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/therapeutic-implication",
	"http://www.nlm.nih.gov/research/umls/rxnorm", "http://x/y|1.0", "a:", "a:b", ":b", "1a:b", "a1+.-:b", "http://", "http:///x",
	"http://a b", "http://[::1", "http://[::1]/x", "http://h:80/x", "http://h:x/x", "http://u@h/x", "http://h/x?q=1#f", "%zz",
	"http://h/%zz", "http://h/%41", "a:b:c", "a/b:c", "a:/b", "a://h_x/", "a://h/p@q", "mailto:a@b", "x:\u0001", "x:é",
}

func TestPlainURIImpliesURLParse(t *testing.T) {
	for _, c := range uriCases {
		if _, err := url.Parse(c); plainURI(c) && err != nil {
			t.Errorf("plainURI(%q) true, url.Parse: %v", c, err)
		}
	}
	var got []bool
	for _, c := range []string{"http://loinc.org", "urn:oid:1.2.3", "http://hl7.org/fhir/uv/genomics-reporting/StructureDefinition/therapeutic-implication", "http://x/y|1.0", "http://a b"} {
		got = append(got, plainURI(c))
	}
	if d := cmp.Diff([]bool{true, true, true, false, false}, got); d != "" {
		t.Errorf("plainURI of common URIs (-want +got):\n%s", d)
	}
}

// FuzzPlainURI: url.Parse accepts every string plainURI accepts.
func FuzzPlainURI(f *testing.F) {
	for _, c := range uriCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := url.Parse(s); plainURI(s) && err != nil {
			t.Errorf("plainURI(%q) true, url.Parse: %v", s, err)
		}
	})
}
