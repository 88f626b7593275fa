package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`{"drug":"clopidogrel","drug":"codeine"}`, "drug"},
		{`{"patient":{"sex":"male","age_years":3,"sex":"female"}}`, "patient.sex"},
		{`{"zygosity":{"rs1":"het"},"variants":["rs1"],"x":{"y":[{"z":1,"z":2}]}}`, "x.y.z"},
		{`{"a":[{"x":1},{"x":2}],"b":{"x":1},"x":2}`, ""},
		{`{"a":{"b":1},"b":2}`, ""},
		{`{"a":[[1,2],[3]],"c":{}}`, ""},
		{`{"a":1,`, ""}, // malformed: left to the decoder
	}
	for _, tt := range tests {
		got, ok := duplicateKey([]byte(tt.in))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("duplicateKey(%s) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

// FuzzDuplicateKey: the scanner never panics on any input.
func FuzzDuplicateKey(f *testing.F) {
	f.Add(`{"drug":"clopidogrel","variants":["rs4244285"],"patient":{"sex":"male"}}`)
	f.Add(`{"a":{"a":{"a":[{"a":1}]}}}`)
	f.Add(`[1,{"x":[{}]},"s"]`)
	f.Fuzz(func(t *testing.T, s string) {
		duplicateKey([]byte(s))
	})
}

// TestDecodeJSONDuplicateKey: DecodeJSON answers 400 naming the key.
func TestDecodeJSONDuplicateKey(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/pgx/check", strings.NewReader(`{"drug":"clopidogrel","drug":"codeine"}`))
	r.Header.Set("Content-Type", "application/json")
	var dst struct {
		Drug string `json:"drug"`
	}
	err := DecodeJSON(httptest.NewRecorder(), r, &dst, 1<<16)
	var he *Error
	if !errors.As(err, &he) || he.Kind != KindMalformed || len(he.InvalidParams) != 1 || he.InvalidParams[0].Name != "drug" {
		t.Fatalf("err = %#v", err)
	}
}
