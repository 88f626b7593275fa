package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// unescaped is v as httpx.WriteJSON encodes it, without the newline.
func unescaped(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestCheckEncodedAuditsAsCheck: CheckEncoded writes the audit entry Check
// writes, byte for byte, and returns the answer's bytes as sent; answers
// holding characters that json.Marshal escapes for HTML (echoed input)
// included.
func TestCheckEncodedAuditsAsCheck(t *testing.T) {
	svc, log := newService(t)
	wire := func(r engine.Result) engine.Result { return r }
	for _, req := range []engine.Request{
		{Drug: "clopidogrel", Variants: []string{"rs4244285"}},
		{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}, State: "<Tamil & Nadu>"},
		{Drug: "<b>clopidogrel</b> & co", Ethnicity: "a\u2028b"},
		{Drug: "warfarin", Indication: "AF > 65 & <script>"},
	} {
		t.Run(req.Drug, func(t *testing.T) {
			plain, err := service.Check(context.Background(), svc, call, req, wire)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			enc, err := service.CheckEncoded(context.Background(), svc, call, req, wire)
			if err != nil {
				t.Fatalf("CheckEncoded: %v", err)
			}
			want, _ := log.byID(plain.AuditID)
			got, _ := log.byID(enc.AuditID)
			strip := func(e audit.Entry) audit.Entry { e.ID, e.Sequence = "", 0; return e }
			if diff := cmp.Diff(strip(want), strip(got)); diff != "" {
				t.Errorf("audit entry (-Check +CheckEncoded):\n%s", diff)
			}
			t.Logf("answer holds HTML characters: %v", bytes.ContainsAny(enc.Result.JSON, "<>&"))
			if diff := cmp.Diff(string(unescaped(t, plain.Result)), string(enc.Result.JSON)); diff != "" {
				t.Errorf("sent bytes (-WriteJSON form +CheckEncoded):\n%s", diff)
			}
			if diff := cmp.Diff(string(unescaped(t, plain.Result)), string(unescaped(t, enc.Result.Value))); diff != "" {
				t.Errorf("answer (-Check +CheckEncoded):\n%s", diff)
			}
		})
	}
}

// FuzzEncodedMatchesMarshal is the differential test of the single
// encoding: the unescaped form, HTML-escaped, is json.Marshal's form.
func FuzzEncodedMatchesMarshal(f *testing.F) {
	f.Add("clopidogrel", "<b>a & b</b>", "\u2028\u2029\xff\x00")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		v := struct {
			A string         `json:"a"`
			B []string       `json:"b"`
			C map[string]any `json:"c,omitempty"`
		}{A: a, B: []string{b, c}, C: map[string]any{a: b, c: 1.5}}
		want, err := json.Marshal(v)
		if err != nil {
			t.Skip()
		}
		got, err := service.EncodeAnswerForTest(v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got.Audited)); diff != "" {
			t.Errorf("audited (-json.Marshal +encodeAnswer):\n%s", diff)
		}
		if diff := cmp.Diff(string(unescaped(t, v)), string(got.Sent)); diff != "" {
			t.Errorf("sent (-Encoder +encodeAnswer):\n%s", diff)
		}
	})
}

// nopLog accepts every entry and keeps none.
type nopLog struct{}

func (nopLog) Append(_ context.Context, e audit.Entry) (audit.Entry, error) { return e, nil }

// BenchmarkCheckAnswer measures a check answered and audited (to a log
// that keeps nothing) and encoded for sending: "twice" is Check followed
// by the surface's own encoding (the answer encoded twice, as before
// CheckEncoded), "once" is CheckEncoded.
func BenchmarkCheckAnswer(b *testing.B) {
	base, err := knowledge.DefaultBase()
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(base.Evaluator, nil, nopLog{}, fixedClock)
	req := engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285", "rs4986893"}, Indication: "acute coronary syndrome, PCI"}
	wire := func(r engine.Result) engine.Result { return r }
	b.Run("twice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, err := service.Check(context.Background(), svc, call, req, wire)
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(a.Result); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := service.CheckEncoded(context.Background(), svc, call, req, wire); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// appending is an answer that encodes itself (as pgxapi.Result does); with
// fail set, AppendJSON fails and encoding/json is asked instead.
type appending struct {
	A    string  `json:"a"`
	F    float64 `json:"f"`
	fail bool
}

func (a *appending) AppendJSON(dst []byte, escapeHTML bool) ([]byte, error) {
	if a.fail {
		return dst, errors.New("cannot")
	}
	if escapeHTML {
		return json.Marshal(a)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// TestEncodeAnswerAppender: an answer that encodes itself gives the same
// two forms as encoding/json; where AppendJSON fails, encoding/json's
// result (or error) is returned.
func TestEncodeAnswerAppender(t *testing.T) {
	for _, v := range []*appending{
		{A: "plain", F: 1.5},
		{A: "<b> & \u2028", F: 1e-7},
		{A: "<b>", fail: true},
		{A: "nan", F: math.NaN(), fail: true},
	} {
		want, wantErr := json.Marshal(v)
		got, err := service.EncodeAnswerForTest(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%+v: encodeAnswer error %v, json.Marshal error %v", v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff(string(want), string(got.Audited)); diff != "" {
			t.Errorf("audited (-json.Marshal +encodeAnswer):\n%s", diff)
		}
		if diff := cmp.Diff(string(unescaped(t, v)), string(got.Sent)); diff != "" {
			t.Errorf("sent (-Encoder +encodeAnswer):\n%s", diff)
		}
	}
}

// preEncoded is an answer that encodes itself by copying bytes encoded
// beforehand: it isolates what encodeAnswer does around AppendJSON.
type preEncoded struct{ plain, escaped []byte }

func (p *preEncoded) AppendJSON(dst []byte, escapeHTML bool) ([]byte, error) {
	if escapeHTML {
		return append(dst, p.escaped...), nil
	}
	return append(dst, p.plain...), nil
}

// BenchmarkEncodeAnswer measures encodeAnswer on a real answer (the
// clopidogrel answer, whose citation URLs hold '&'): through encoding/json
// (engine.Result) and for an answer that encodes itself (its AppendJSON a
// copy, so the figure is encodeAnswer's own work around it).
func BenchmarkEncodeAnswer(b *testing.B) {
	base, err := knowledge.DefaultBase()
	if err != nil {
		b.Fatal(err)
	}
	res, err := base.Evaluator.Evaluate(engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, GenesTested: []string{"CYP2C19"}, Indication: "ACS PCI"})
	if err != nil {
		b.Fatal(err)
	}
	escaped, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		b.Fatal(err)
	}
	plain := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if bytes.Equal(plain, escaped) {
		b.Fatal("the answer holds no HTML character")
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := service.EncodeAnswerForTest(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appender", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		p := &preEncoded{plain: plain, escaped: escaped}
		for b.Loop() {
			if _, err := service.EncodeAnswerForTest(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCheckEncodedAppend: CheckEncodedAppend writes the audit entry Check
// writes and returns the buffer given followed by the bytes CheckEncoded
// returns; the entry keeps its bytes when the buffer is reused.
func TestCheckEncodedAppend(t *testing.T) {
	svc, log := newService(t)
	wire := func(r engine.Result) engine.Result { return r }
	for _, req := range []engine.Request{
		{Drug: "clopidogrel", Variants: []string{"rs4244285"}},
		{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}, State: "<Tamil & Nadu>"},
		{Drug: "<b>clopidogrel</b> & co", Ethnicity: "a\u2028b"},
	} {
		t.Run(req.Drug, func(t *testing.T) {
			plain, err := service.CheckEncoded(context.Background(), svc, call, req, wire)
			if err != nil {
				t.Fatalf("CheckEncoded: %v", err)
			}
			buf := make([]byte, 5, 1<<16)
			copy(buf, "head:")
			got, err := service.CheckEncodedAppend(context.Background(), svc, call, req, wire, buf)
			if err != nil {
				t.Fatalf("CheckEncodedAppend: %v", err)
			}
			if diff := cmp.Diff("head:"+string(plain.Result.JSON), string(got.Result.JSON)); diff != "" {
				t.Errorf("JSON (-head and CheckEncoded +CheckEncodedAppend):\n%s", diff)
			}
			want, _ := log.byID(plain.AuditID)
			entry, _ := log.byID(got.AuditID)
			strip := func(e audit.Entry) audit.Entry { e.ID, e.Sequence = "", 0; return e }
			if diff := cmp.Diff(strip(want), strip(entry)); diff != "" {
				t.Errorf("audit entry (-CheckEncoded +CheckEncodedAppend):\n%s", diff)
			}
			clear(got.Result.JSON) // the adapter reuses its buffer
			entry, _ = log.byID(got.AuditID)
			if diff := cmp.Diff(strip(want), strip(entry)); diff != "" {
				t.Errorf("audit entry after the buffer is reused (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEncodeAnswerAppend: encodeAnswerAppend appends what encodeAnswer
// sends and audits what it audits, for an answer that encodes itself (or
// fails to) and one encoding/json encodes; the audited bytes never share
// the buffer.
func TestEncodeAnswerAppend(t *testing.T) {
	for _, v := range []any{
		&appending{A: "plain", F: 1.5},
		&appending{A: "<b> & \u2028", F: 1e-7},
		&appending{A: "<b>", fail: true},
		&appending{A: "nan", F: math.NaN(), fail: true},
		map[string]string{"a": "x > y"},
	} {
		want, wantErr := service.EncodeAnswerForTest(v)
		buf := make([]byte, 3, 4096)
		copy(buf, "ab:")
		out, audited, err := service.EncodeAnswerAppendForTest(buf, v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%+v: encodeAnswerAppend error %v, encodeAnswer error %v", v, err, wantErr)
		}
		if err != nil {
			continue
		}
		if diff := cmp.Diff("ab:"+string(want.Sent), string(out)); diff != "" {
			t.Errorf("%+v: appended (-encodeAnswer +encodeAnswerAppend):\n%s", v, diff)
		}
		clear(out)
		if diff := cmp.Diff(string(want.Audited), string(audited)); diff != "" {
			t.Errorf("%+v: audited after the buffer is cleared (-encodeAnswer +encodeAnswerAppend):\n%s", v, diff)
		}
	}
}
