package pgxapi_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// encodingJSON is r as encoding/json encodes it: json.Marshal with
// escapeHTML, an Encoder with SetEscapeHTML(false) (less its newline)
// without.
func encodingJSON(r *pgxapi.Result, escapeHTML bool) ([]byte, error) {
	if escapeHTML {
		return json.Marshal(r)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compareEncodings fails t unless AppendJSON and encoding/json agree on
// r, byte for byte, in both forms (or both fail).
func compareEncodings(t *testing.T, r *pgxapi.Result) {
	t.Helper()
	for _, escapeHTML := range []bool{true, false} {
		want, wantErr := encodingJSON(r, escapeHTML)
		prefix := []byte("prefix")
		got, err := r.AppendJSON(prefix, escapeHTML)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("escapeHTML=%v: AppendJSON error %v, encoding/json error %v", escapeHTML, err, wantErr)
		}
		if !bytes.HasPrefix(got, prefix) {
			t.Fatalf("escapeHTML=%v: AppendJSON lost what dst held", escapeHTML)
		}
		if err != nil {
			if len(got) != len(prefix) {
				t.Fatalf("escapeHTML=%v: AppendJSON appended %q with an error", escapeHTML, got[len(prefix):])
			}
			continue
		}
		if diff := cmp.Diff(string(want), string(got[len(prefix):])); diff != "" {
			t.Fatalf("escapeHTML=%v: AppendJSON differs from encoding/json (-encoding/json +AppendJSON):\n%s", escapeHTML, diff)
		}
	}
}

// TestResultJSONMatchesEncodingJSONOnGoldens: real answers — the golden
// /pgx/check requests, and every drug of the knowledge with and without
// genotype and Indian context — encode the same both ways.
func TestResultJSONMatchesEncodingJSONOnGoldens(t *testing.T) {
	var reqs []engine.Request
	for _, body := range []string{clopidogrelPM, clopidogrelRsIDs} {
		var in pgxapi.CheckRequest
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, in.EngineRequest())
	}
	var allVariants []string
	zyg := map[string]engine.Zygosity{}
	for i, v := range kb.Variants {
		allVariants = append(allVariants, v.RsID)
		if i%2 == 0 {
			zyg[v.RsID] = "hom"
		}
	}
	contexts := []engine.Request{
		{},
		{State: "Tamil Nadu", Ethnicity: "Tamil", Indication: "acute coronary syndrome, PCI"},
		{Variants: allVariants, Zygosity: zyg, State: "Kerala", Ethnicity: "Nair", Indication: "epilepsy <&>"},
		{Variants: []string{"rs0", "rs4244285"}, State: "Atlantis", Ethnicity: "unknown \u2028"},
	}
	for _, d := range kb.Drugs {
		for _, c := range contexts {
			c.Drug = d.Name
			reqs = append(reqs, c)
		}
	}
	reqs = append(reqs, engine.Request{Drug: "clopidogrl"}, engine.Request{Drug: "aspirin + clopidogrel"}, engine.Request{Drug: "<b>not a drug</b>"})
	n := 0
	for _, req := range reqs {
		res, err := kb.Evaluate(req)
		if err != nil {
			continue
		}
		w := pgxapi.ResultOf(res)
		compareEncodings(t, &w)
		n++
	}
	if n < len(kb.Drugs) {
		t.Fatalf("only %d of %d requests evaluated", n, len(reqs))
	}
}

// filler populates a value from fuzz input: every field of every struct
// reachable from it, by reflection, so a field added to the wire types is
// filled (and AppendJSON, not knowing it, fails the comparison).
type filler struct{ in []byte }

func (f *filler) byte() byte {
	if len(f.in) == 0 {
		return 0
	}
	b := f.in[0]
	f.in = f.in[1:]
	return b
}

var fillerStrings = []string{
	"", "clopidogrel", "CYP2C19 *2/*2", `q"uo\te`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f\b\f",
	"<b>&amp;</b>", "ünïcödé ✓ 漢字 🧬", "\u2028\u2029", "bad\xffutf8\xc3", "\xed\xa0\x80surrogate", "a>b&c<d",
}

var fillerFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 0.0123, 1e-6, 1e-7, 9.99e-7, -1e-7, 1.5e-10, 1e20, 1e21, 1.2345e21, -1e21,
	123456789, 0.1 + 0.2, math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1e-100, 1e100,
}

func (f *filler) string() string {
	b := f.byte()
	if b < 0xc0 {
		return fillerStrings[int(b)%len(fillerStrings)]
	}
	// Raw bytes from the input: anything at all.
	n := int(f.byte() % 40)
	if n > len(f.in) {
		n = len(f.in)
	}
	s := string(f.in[:n])
	f.in = f.in[n:]
	return s
}

func (f *filler) float() float64 {
	b := f.byte()
	if b < 0xe0 {
		return fillerFloats[int(b)%len(fillerFloats)]
	}
	var raw [8]byte
	for i := range raw {
		raw[i] = f.byte()
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(raw[:]))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if b&1 == 0 {
			return v // both must fail
		}
		return 0.25
	}
	return v
}

func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.string())
	case reflect.Bool:
		v.SetBool(f.byte()&1 == 1)
	case reflect.Int:
		b := f.byte()
		switch b % 4 {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(int64(int8(f.byte())))
		case 2:
			v.SetInt(math.MinInt64 + int64(f.byte()))
		default:
			v.SetInt(math.MaxInt64 - int64(f.byte()))
		}
	case reflect.Float64:
		v.SetFloat(f.float())
	case reflect.Pointer:
		if f.byte()%3 == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		b := f.byte()
		switch {
		case b%5 == 0:
			v.SetZero()
		case b%5 == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := int(b>>3) % 4
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := 0; i < n; i++ {
				f.fill(s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f.fill(v.Field(i))
		}
	default:
		panic("filler: no rule for " + v.Type().String() + "; teach the filler and AppendJSON about it")
	}
}

// FuzzResultJSONMatchesEncodingJSON: for any value of the wire types
// (strings with control characters, HTML characters, U+2028, invalid
// UTF-8; nil and empty slices; nil and set pointers; floats of every
// magnitude), AppendJSON writes what encoding/json writes, in both
// escaping forms.
func FuzzResultJSONMatchesEncodingJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0x02, 0x13, 0x07}, 200))
	f.Add(bytes.Repeat([]byte{0xff, 0x0a, 0xe1, 1, 2, 3, 4, 5, 6, 7, 8}, 100))
	f.Add([]byte(strings.Repeat("<\u2028>&\xff\x00 a", 80)))
	for i := 0; i < 8; i++ {
		seed := make([]byte, 600)
		for j := range seed {
			seed[j] = byte(j*7 + i*31)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var r pgxapi.Result
		(&filler{in: in}).fill(reflect.ValueOf(&r).Elem())
		compareEncodings(t, &r)
	})
}

// BenchmarkEncodeResult compares encoding/json with AppendJSON on the
// answer of the README's clopidogrel request.
func BenchmarkEncodeResult(b *testing.B) {
	var in pgxapi.CheckRequest
	if err := json.Unmarshal([]byte(clopidogrelRsIDs), &in); err != nil {
		b.Fatal(err)
	}
	res, err := kb.Evaluate(in.EngineRequest())
	if err != nil {
		b.Fatal(err)
	}
	w := pgxapi.ResultOf(res)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(&w); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			var err error
			if dst, err = w.AppendJSON(dst[:0], false); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(dst)))
	})
}
