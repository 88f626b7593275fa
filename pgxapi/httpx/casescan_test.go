package httpx

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// caseScanInner, caseScanEmbedded and caseScanTarget exercise every way
// CaseMismatch follows a type: pointers, slices, arrays, maps, embedded
// structs, interfaces and raw messages.
type caseScanInner struct {
	Sex   string            `json:"sex"`
	Age   *int              `json:"age_years"`
	Codes []string          `json:"codes"`
	Deep  map[string]*[]int `json:"deep"`
}

type caseScanEmbedded struct {
	Flag bool `json:"flag"`
}

type caseScanTarget struct {
	caseScanEmbedded
	Drug     string                     `json:"drug"`
	Patient  *caseScanInner             `json:"patient"`
	List     []caseScanInner            `json:"list"`
	Pair     [2]*caseScanInner          `json:"pair"`
	ByName   map[string]caseScanInner   `json:"by_name"`
	Any      any                        `json:"any"`
	Raw      json.RawMessage            `json:"raw"`
	Prefetch map[string]json.RawMessage `json:"prefetch"`
	Untagged string
	Skipped  string `json:"-"`
}

// caseScanTargets are the decoding targets of the differential test.
var caseScanTargets = []any{&caseScanTarget{}, &caseScanInner{}, &[]caseScanInner{}, &map[string]caseScanTarget{}, new(any), new(string)}

// oldIntake is what decodeJSON checked before the case check joined the
// duplicate-key scan: the duplicate first, then CaseMismatch.
func oldIntake(b []byte, dst any) (dup string, path, known string) {
	if k, ok := duplicateKey(b); ok {
		return k, "", ""
	}
	path, known, _ = CaseMismatch(b, dst)
	return "", path, known
}

// newIntake is decodeJSON's check now.
func newIntake(b []byte, dst any) (dup string, path, known string) {
	k, isDup, suspect := scanKeys(b, reflect.TypeOf(dst))
	if isDup {
		return k, "", ""
	}
	if suspect {
		path, known, _ = CaseMismatch(b, dst)
	}
	return "", path, known
}

func TestScanKeysCase(t *testing.T) {
	tests := []struct {
		in         string
		path, want string
	}{
		{`{"Drug":"x"}`, "Drug", "drug"},
		{`{"drug":"x","patient":{"SEX":"m"}}`, "patient.SEX", "sex"},
		{`{"list":[{"sex":"m"},{"Age_Years":3}]}`, "list[1].Age_Years", "age_years"},
		{`{"pair":[null,{"Codes":[]}]}`, "pair[1].Codes", "codes"},
		{`{"by_name":{"a":{"SEX":"m"}}}`, "by_name.a.SEX", "sex"},
		{`{"FLAG":true}`, "FLAG", "flag"},
		{`{"untagged":"x"}`, "untagged", "Untagged"},
		{`{"any":{"Drug":1},"raw":{"Drug":1},"prefetch":{"p":{"Drug":1}},"skipped":1,"other":{"Drug":1}}`, "", ""},
		{`{"patient":[{"SEX":1}],"list":{"SEX":1}}`, "", ""},
		{`{"Drug":"x","drug":"y","Drug":"z"}`, "", ""}, // the duplicate is reported instead
		{`{"Drug":`, "", ""},
	}
	for _, tt := range tests {
		_, path, known := newIntake([]byte(tt.in), &caseScanTarget{})
		if path != tt.path || known != tt.want {
			t.Errorf("%s: got (%q, %q), want (%q, %q)", tt.in, path, known, tt.path, tt.want)
		}
	}
}

// FuzzCaseScanMatchesCaseMismatch: on any body and for every target, the
// one-pass scan followed by CaseMismatch only when it saw a suspect key
// gives the same answer (duplicate, case mismatch, or nothing) as the
// duplicate scan followed by CaseMismatch on every body.
func FuzzCaseScanMatchesCaseMismatch(f *testing.F) {
	for _, s := range []string{
		`{"Drug":"x"}`, `{"drug":"x","patient":{"SEX":"m","age_years":3}}`,
		`{"list":[{"sex":"m"},{"Age_Years":3}],"pair":[null,{"Codes":[]}]}`,
		`{"by_name":{"a":{"SEX":"m"},"b":{"deep":{"x":[1]}}}}`, `{"FLAG":true,"untagged":1}`,
		`{"any":{"Drug":1},"raw":{"Drug":1},"prefetch":{"p":{"Drug":1}},"skipped":1}`,
		`{"patient":[{"SEX":1}],"list":{"SEX":1}}`, `[{"Sex":1}]`, `{"a":{"Sex":1}}`,
		`{"dru\u0047":1}`, `{"\u017fex":1}`, `{"drug":1,"drug":2,"Drug":3}`, `{"Drug":1} {"x"`,
		`{"patient":{"sex":"m"}`, `"x"`, `{"drug":"\"}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, dst := range caseScanTargets {
			od, op, ok := oldIntake(b, dst)
			nd, np, nk := newIntake(b, dst)
			if od != nd || op != np || ok != nk {
				t.Fatalf("%q into %T: new (%q, %q, %q), old (%q, %q, %q)", b, dst, nd, np, nk, od, op, ok)
			}
		}
	})
}

// caseScanHook has the shape of the CDS hook envelope (cdshooks'
// hookRequest): the prefetch values are raw messages.
type caseScanHook struct {
	Hook         *string                    `json:"hook"`
	HookInstance *string                    `json:"hookInstance"`
	Context      json.RawMessage            `json:"context"`
	Prefetch     map[string]json.RawMessage `json:"prefetch"`
	Extension    map[string]json.RawMessage `json:"extension"`
}

// BenchmarkIntakeScan: the checks decodeJSON makes before decoding, on the
// 37 KB order-sign body of BenchmarkDuplicateKey: the one-pass scan (new)
// against the duplicate scan followed by CaseMismatch (old).
func BenchmarkIntakeScan(b *testing.B) {
	body := orderSignBody()
	b.SetBytes(int64(len(body)))
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d, p, _ := newIntake(body, &caseScanHook{}); d != "" || p != "" {
				b.Fatal(d, p)
			}
		}
	})
	b.Run("old-dup-then-case", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if d, p, _ := oldIntake(body, &caseScanHook{}); d != "" || p != "" {
				b.Fatal(d, p)
			}
		}
	})
}

// FuzzExtensibleDecodeMatchesDecoder: for an extensible body, decoding in
// place (json.Unmarshal) and falling back to the json.Decoder only on
// failure gives the same value and the same error as the json.Decoder
// alone.
func FuzzExtensibleDecodeMatchesDecoder(f *testing.F) {
	for _, s := range []string{
		`{"hook":"order-sign","hookInstance":"x","context":{"a":1},"prefetch":{"p":{"resourceType":"Patient"}},"extension":{"e":[1]}}`,
		`{"hook":1}`, `{"prefetch":[]}`, `{"hook":"a"} {"hook":"b"}`, `{"hook":"a"} x`, `  {"hook":null}  `,
		`{"context":}`, `{`, ``, `   `, `[]`, `null`, `"s"`, `{"unknown":{"deep":[1,2]}}`, `{"hook":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want caseScanHook
		gerr := decodeInPlace(b, &got, 1<<20, false)
		werr := decodeValue(b, &want, 1<<20, false)
		if problemText(gerr) != problemText(werr) {
			t.Fatalf("%q: error %v, Decoder %v", b, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: value %+v, Decoder %+v", b, got, want)
		}
	})
}

// problemText is what the client sees of an intake error ("" for none).
func problemText(err error) string {
	if err == nil {
		return ""
	}
	p := ProblemFor(err)
	return fmt.Sprintf("%d %s %s %v", p.Kind.Status(), p.Kind.Type(), p.Detail, p.InvalidParams)
}

// BenchmarkExtensibleDecode: decoding the 37 KB order-sign body into the
// hook envelope, in place (json.Unmarshal) against the json.Decoder.
func BenchmarkExtensibleDecode(b *testing.B) {
	body := orderSignBody()
	b.SetBytes(int64(len(body)))
	for _, bm := range []struct {
		name string
		f    func([]byte, any, int64, bool) error
	}{{"in-place", decodeInPlace}, {"decoder", decodeValue}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var h caseScanHook
				if err := bm.f(body, &h, 1<<20, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
