package httpx

import (
	"bytes"
	"encoding/json"
	"testing"
)

// duplicateKeyReference is the json.Decoder.Token implementation duplicateKey
// replaced, kept as the reference of the differential fuzz test. It reports the first key that appears twice in one JSON
// object of b, with its path ("patient.sex"). Malformed JSON is left to the
// decoder, which reports it better.
func duplicateKeyReference(b []byte) (string, bool) {
	type frame struct {
		object    bool
		keys      map[string]bool
		expectKey bool
		path      string
		lastKey   string
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*frame
	childPath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if !top.object {
			return top.path
		}
		if top.path == "" {
			return top.lastKey
		}
		return top.path + "." + top.lastKey
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expectKey = true
				}
				if len(stack) == 0 {
					return "", false
				}
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				if top.path != "" {
					key = top.path + "." + key
				}
				return key, true
			}
			top.keys[key] = true
			top.lastKey = key
			top.expectKey = false
			continue
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, expectKey: true, path: childPath()})
			continue
		case '[':
			stack = append(stack, &frame{path: childPath()})
			continue
		case ']':
			stack = stack[:len(stack)-1]
		}
		// A value (or a closed array) completes a key/value pair.
		if len(stack) == 0 {
			return "", false
		}
		if t := stack[len(stack)-1]; t.object {
			t.expectKey = true
		}
	}
}

// FuzzDuplicateKeyMatchesReference: on every valid JSON body the byte
// scanner finds the same duplicate (or none) as the token-based scanner it
// replaced.
func FuzzDuplicateKeyMatchesReference(f *testing.F) {
	for _, s := range []string{
		`{"drug":"clopidogrel","drug":"codeine"}`,
		`{"patient":{"sex":"male","age_years":3,"sex":"female"}}`,
		`{"zygosity":{"rs1":"het"},"variants":["rs1"],"x":{"y":[{"z":1,"z":2}]}}`,
		`{"a":[{"x":1},{"x":2}],"b":{"x":1},"x":2}`,
		`{"a\u0062":1,"ab":2}`, `[1,{"a":{"b":[true,null,{"c":1,"c":2}]}}]`, `"x"`, `{}`, `{"a":"\"}"}`,
		`{"a":{"b":1},"b":2}`, `{ "a" : [ ] , "a" : 1 }`, `-1.5e3`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		gk, gok := duplicateKey(b)
		wk, wok := duplicateKeyReference(b)
		if gk != wk || gok != wok {
			t.Fatalf("%q: got (%q, %v), reference (%q, %v)", b, gk, gok, wk, wok)
		}
	})
}

// BenchmarkDuplicateKey scans a 37 KB CDS order-sign body (the
// reference is the json.Decoder.Token scanner it replaced).
func BenchmarkDuplicateKey(b *testing.B) {
	body := orderSignBody()
	b.SetBytes(int64(len(body)))
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, dup := duplicateKey(body); dup {
				b.Fatal("duplicate")
			}
		}
	})
	b.Run("reference-token", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, dup := duplicateKeyReference(body); dup {
				b.Fatal("duplicate")
			}
		}
	})
}

// orderSignBody is a 37 KB CDS order-sign body: 120 Observations in one
// prefetch Bundle.
func orderSignBody() []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"hook":"order-sign","prefetch":{"obs":{"entry":[`)
	for i := range 120 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"resource":{"resourceType":"Observation","id":"v","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"69548-6"}]},"component":[{"code":{"coding":[{"system":"http://loinc.org","code":"48018-6"}]},"valueCodeableConcept":{"text":"CYP2C9"}},{"valueQuantity":{"value":20,"comparator":">"}}]}}`)
	}
	buf.WriteString(`]}}}`)
	return buf.Bytes()
}
