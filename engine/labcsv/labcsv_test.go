package labcsv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// gotRecord is a record as the tests compare it.
type gotRecord struct {
	Line   int
	Fields []string
	Code   string
	Field  string
}

func readAll(t testing.TB, data string) ([]gotRecord, error) {
	t.Helper()
	lr := newLabCSVReader(strings.NewReader(data))
	var out []gotRecord
	for i := 0; ; i++ {
		if i > len(data)+10 {
			t.Fatalf("reader does not terminate on %q", data)
		}
		rec, err := lr.nextRecord()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		g := gotRecord{Line: rec.line}
		if rec.err != nil {
			g.Code, g.Field = rec.err.Code, rec.err.Field
		} else {
			g.Fields = append([]string(nil), rec.fields...)
		}
		out = append(out, g)
	}
}

func TestLabCSVRecords(t *testing.T) {
	long := strings.Repeat("x", MaxRecordBytes+10)
	tests := []struct {
		name string
		in   string
		want []gotRecord
	}{
		{name: "plain", in: "a,b\nc,d\n", want: []gotRecord{{Line: 1, Fields: []string{"a", "b"}}, {Line: 2, Fields: []string{"c", "d"}}}},
		{name: "BOM, CRLF, no final newline", in: "\xEF\xBB\xBFa,b\r\nc,d",
			want: []gotRecord{{Line: 1, Fields: []string{"a", "b"}}, {Line: 2, Fields: []string{"c", "d"}}}},
		{name: "surrounding white space trimmed", in: "  a ,\t b  , \" c \" \n",
			want: []gotRecord{{Line: 1, Fields: []string{"a", "b", "c"}}}},
		{name: "blank lines and comma lines skipped", in: "\n   \n,,,\r\n a,b\n\n",
			want: []gotRecord{{Line: 4, Fields: []string{"a", "b"}}}},
		{name: "quoted comma and doubled quote", in: "x,\"ACS, PCI \"\"urgent\"\"\",y\n",
			want: []gotRecord{{Line: 1, Fields: []string{"x", `ACS, PCI "urgent"`, "y"}}}},
		{name: "quoted line break", in: "x,\"line one\r\nline two\",y\nz,w\n",
			want: []gotRecord{{Line: 1, Fields: []string{"x", "line one\nline two", "y"}}, {Line: 3, Fields: []string{"z", "w"}}}},
		{name: "trailing comma", in: "\"a\",\n", want: []gotRecord{{Line: 1, Fields: []string{"a", ""}}}},
		{name: "bare quote fails alone", in: "a,5\" stent,c\nd,e\n",
			want: []gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "variants"}, {Line: 2, Fields: []string{"d", "e"}}}},
		{name: "text after closing quote fails alone", in: "a,b,c,d,\"ACS\" PCI,f\ng\n",
			want: []gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "indication"}, {Line: 2, Fields: []string{"g"}}}},
		{name: "unterminated quote at end of file fails alone", in: "a,\"open\nb,c\nd,e\n",
			want: []gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "variants"},
				{Line: 2, Fields: []string{"b", "c"}}, {Line: 3, Fields: []string{"d", "e"}}}},
		{name: "unterminated quote closed by a later quote fails alone", in: "a,b,c,d,\"ACS,r1\nx,,s,,\"PCI, stent\",r2\ny,z\n",
			want: []gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "indication"},
				{Line: 2, Fields: []string{"x", "", "s", "", "PCI, stent", "r2"}}, {Line: 3, Fields: []string{"y", "z"}}}},
		{name: "unterminated quote limited to the record line cap", in: "a,\"open\n" + strings.Repeat("r,s\n", MaxRecordLines+2),
			want: append([]gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "variants"}}, repeatRecords(2, MaxRecordLines+2, "r", "s")...)},
		{name: "line too long", in: "a,b\n" + long + "\nc,d\n",
			want: []gotRecord{{Line: 1, Fields: []string{"a", "b"}}, {Line: 2, Code: RowErrTooLong, Field: "record"}, {Line: 3, Fields: []string{"c", "d"}}}},
		{name: "long line inside an open quote", in: "a,\"open\n" + long + "\nc,d\n",
			want: []gotRecord{{Line: 1, Code: RowErrBadQuoting, Field: "variants"}, {Line: 2, Code: RowErrTooLong, Field: "record"}, {Line: 3, Fields: []string{"c", "d"}}}},
		{name: "lone CR at end of file", in: "\"a\",\"b\"\r", want: []gotRecord{{Line: 1, Fields: []string{"a", "b"}}}},
		{name: "empty", in: "", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func repeatRecords(firstLine, n int, fields ...string) []gotRecord {
	out := make([]gotRecord, n)
	for i := range out {
		out[i] = gotRecord{Line: firstLine + i, Fields: fields}
	}
	return out
}

func TestLabCSVHeader(t *testing.T) {
	tests := []struct {
		name, in   string
		wantField  string // "" means accepted
		wantReason string
	}{
		{name: "exact", in: Header + "\n"},
		{name: "case, spaces, BOM, CRLF", in: "\xEF\xBB\xBF Drug ,VARIANTS, state,Ethnicity , INDICATION,Patient_Ref\r\n"},
		{name: "quoted names", in: `"drug","variants","state","ethnicity","indication","patient_ref"` + "\n"},
		{name: "empty file", in: "", wantField: "file", wantReason: "is empty"},
		{name: "blank lines only", in: "\n\r\n  \n", wantField: "file", wantReason: "is empty"},
		{name: "wrong order", in: "variants,drug,state,ethnicity,indication,patient_ref\n", wantField: "header", wantReason: Header},
		{name: "missing column", in: "drug,variants,state,ethnicity,indication\n", wantField: "header", wantReason: Header},
		{name: "extra column", in: Header + ",dose\n", wantField: "header", wantReason: Header},
		{name: "semicolon separated", in: "drug;variants;state;ethnicity;indication;patient_ref\n", wantField: "header", wantReason: Header},
		{name: "UTF-16", in: "\xFF\xFEd\x00r\x00", wantField: "file", wantReason: "UTF-16"},
		{name: "bad quoting", in: "drug,\"variants,state\n", wantField: "header", wantReason: Header},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := newLabCSVReader(strings.NewReader(tc.in)).readHeader()
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("header rejected: %v", err)
				}
				return
			}
			var ve *engine.ValidationError
			if !errors.As(err, &ve) || len(ve.Fields) != 1 {
				t.Fatalf("err = %v, want one field error", err)
			}
			if ve.Fields[0].Field != tc.wantField || !strings.Contains(ve.Fields[0].Reason, tc.wantReason) {
				t.Errorf("field error = %+v, want field %q with reason containing %q", ve.Fields[0], tc.wantField, tc.wantReason)
			}
		})
	}
}

// encodingCSV parses data as one whole file with encoding/csv (the
// reference) and returns its non-blank records, trimmed. ok is false when
// encoding/csv rejects the file.
func encodingCSV(data []byte) (recs [][]string, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, true
		}
		if err != nil {
			return nil, false
		}
		blank := true
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
			if rec[i] != "" {
				blank = false
			}
		}
		if !blank {
			recs = append(recs, rec)
		}
	}
}

// checkAgainstEncodingCSV is the reader's contract: on a file encoding/csv
// accepts (within the record limits), it returns exactly encoding/csv's
// records; on any input it terminates with increasing line numbers.
func checkAgainstEncodingCSV(t *testing.T, data []byte) {
	t.Helper()
	got, err := readAll(t, string(data))
	if err != nil {
		if errors.Is(err, errUTF16) {
			return
		}
		t.Fatalf("read: %v", err)
	}
	last := 0
	for _, g := range got {
		if g.Line <= last {
			t.Fatalf("line numbers not increasing: %+v", got)
		}
		last = g.Line
		if g.Code != "" && g.Field == "" {
			t.Fatalf("error record without a field: %+v", g)
		}
	}
	if bytes.HasPrefix(data, []byte("\xFF\xFE")) || bytes.HasPrefix(data, []byte("\xFE\xFF")) ||
		len(data) >= MaxRecordBytes || bytes.Count(data, []byte("\n")) >= MaxRecordLines {
		return
	}
	want, ok := encodingCSV(data)
	if !ok {
		return
	}
	var fields [][]string
	for _, g := range got {
		if g.Code != "" {
			t.Fatalf("encoding/csv accepts %q but the reader failed line %d: %s %s", data, g.Line, g.Code, g.Field)
		}
		fields = append(fields, g.Fields)
	}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Fatalf("records of %q differ from encoding/csv (-csv +reader):\n%s", data, diff)
	}
}

func TestLabCSVMatchesEncodingCSV(t *testing.T) {
	for _, in := range []string{
		"a,b\n\"c\nd\",e\n",
		"a,\"\"\"\",b\r\n",
		" \"a\" ,b\n",
		"a,b\r\n\r\nc\r",
		"\"\"\n\"x\"\"y\",\n",
		"\u00a0\"a\",b\n",
	} {
		checkAgainstEncodingCSV(t, []byte(in))
	}
}

// testdataCSVs returns the lab CSVs under testdata/csv.
func testdataCSVs(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "csv", "*.csv"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata CSVs: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// FuzzLabCSV feeds arbitrary files to the reader and the whole processor.
// The reader must agree with encoding/csv on files it accepts; the
// processor must never panic, count every row once (succeeded + failed =
// total, rows numbered 1..n in order) and give every failure a code and a
// field. Seeds: the header and first rows of each testdata CSV, and small
// edge cases. Seeds stay small (a few hundred bytes): a 57 KB seed had the
// fuzzer spend its whole run minimising it (11 executions in 60 s).
func FuzzLabCSV(f *testing.F) {
	for _, b := range testdataCSVs(f) {
		f.Add(firstLines(b, 4))
	}
	for _, s := range []string{
		Header + "\nclopidogrel,rs4244285,Tamil Nadu,,\"ACS, PCI\",r1\n",
		Header + "\n\"unterminated,x\nwarfarin,,,,,r2\n",
		Header + "\r\n,,,,,\r\nx,y\r\n",
		"\xEF\xBB\xBF" + Header + "\ncodeine,RS3892097;;rs1065852 ,Bihar,,pain,\"r\"\"3\"\n",
		Header + "\nclopidogrel,rs4244285,Tamil Nadu,,5\" stent,r4\n",
		"\xFF\xFE",
	} {
		f.Add([]byte(s))
	}
	kb, err := knowledge.Default()
	if err != nil {
		f.Fatal(err)
	}
	proc := NewProcessor(kb, Options{Workers: 2, ChunkRows: 7, MaxRows: 500, Wire: func(r engine.Result) any { return r }})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstEncodingCSV(t, data)
		next := 1
		var succeeded, failed int
		st, err := proc.Run(context.Background(), bytes.NewReader(data), func(c *Chunk) error {
			for _, r := range c.Rows {
				if r.Row != next {
					t.Fatalf("row %d emitted where %d was expected", r.Row, next)
				}
				next++
				switch {
				case r.OK && (len(r.Result) == 0 || r.ResultDigest == "" || r.Error != nil):
					t.Fatalf("row %d ok without a result: %+v", r.Row, r)
				case !r.OK && (r.Error == nil || r.Error.Code == "" || r.Error.Field == ""):
					t.Fatalf("row %d failed without code and field: %+v", r.Row, r)
				case r.OK:
					succeeded++
				default:
					failed++
				}
				if r.OK && !json.Valid(r.Result) {
					t.Fatalf("row %d: invalid result JSON %s", r.Row, r.Result)
				}
			}
			return nil
		})
		var ve *engine.ValidationError
		var rle *RowLimitError
		if err != nil && !errors.As(err, &ve) && !errors.As(err, &rle) {
			t.Fatalf("Run: %v", err)
		}
		if err == nil && (st.Rows != next-1 || st.Succeeded != succeeded || st.Failed != failed || st.Rows != st.Succeeded+st.Failed) {
			t.Fatalf("stats %+v, emitted %d rows (%d ok, %d failed)", st, next-1, succeeded, failed)
		}
	})
}

func TestSplitVariants(t *testing.T) {
	tests := map[string][]string{
		"":                      nil,
		" ; ;":                  nil,
		"rs1":                   {"rs1"},
		" RS1 ; rs2;; rs3 ;":    {"RS1", "rs2", "rs3"},
		"rs1,rs2":               {"rs1,rs2"},
		"rs4244285;rs12769205;": {"rs4244285", "rs12769205"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitVariants(in)); diff != "" {
			t.Errorf("splitVariants(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// firstLines returns the first n lines of b (each with its line ending).
func firstLines(b []byte, n int) []byte {
	end := 0
	for i := 0; i < n && end < len(b); i++ {
		j := bytes.IndexByte(b[end:], '\n')
		if j < 0 {
			return b
		}
		end += j + 1
	}
	return b[:end]
}

// TestVariantsZygosity: the variants column takes a zygosity per rsID
// (rs116855232:hom → two NUDT15 no-function alleles), and an rsID repeated in one row is an
// error naming it, not a silent merge into one copy.
func TestVariantsZygosity(t *testing.T) {
	kb, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	data := Header + "\n" +
		"mercaptopurine,rs116855232:hom,,,,hom\n" +
		"mercaptopurine,rs116855232;rs116855232,,,,repeated\n" +
		"mercaptopurine,rs116855232,,,,het\n" +
		"mercaptopurine,rs116855232:twice,,,,bad zygosity\n" +
		"mercaptopurine,RS116855232:HOM,,,,capitals\n"
	var rows []Row
	_, err = NewProcessor(kb, Options{Workers: 1, Wire: func(r engine.Result) any { return r }}).Run(context.Background(), strings.NewReader(data), func(c *Chunk) error {
		rows = append(rows, c.Rows...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	call := func(r Row) engine.GenotypeCall {
		t.Helper()
		if !r.OK {
			t.Fatalf("row %d failed: %+v", r.Row, r.Error)
		}
		var res engine.Result
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, g := range res.Genotype {
			if g.Gene == "NUDT15" {
				return g
			}
		}
		return engine.GenotypeCall{}
	}
	// Two copies of the no-function variant: both alleles non-reference
	// (the matcher names the allele; *3 and *2 share rs116855232), poor
	// metabolizer. One copy: intermediate.
	for _, i := range []int{0, 4} {
		g := call(rows[i])
		if strings.Contains(g.Diplotype, "*1") || g.Phenotype != "Poor Metabolizer" {
			t.Errorf("row %d (hom): NUDT15 %s %s, want two no-function alleles, Poor Metabolizer", rows[i].Row, g.Diplotype, g.Phenotype)
		}
	}
	if g := call(rows[2]); !strings.HasPrefix(g.Diplotype, "*1/") || g.Phenotype != "Intermediate Metabolizer" {
		t.Errorf("bare rs116855232: NUDT15 %s %s, want *1/x Intermediate Metabolizer", g.Diplotype, g.Phenotype)
	}
	for _, i := range []int{1, 3} {
		r := rows[i]
		if r.OK || r.Error == nil || r.Error.Field != "variants" || !strings.Contains(r.Error.Detail, "rs116855232") {
			t.Errorf("row %d: want a variants error naming rs116855232, got ok=%v %+v", r.Row, r.OK, r.Error)
		}
	}
}

// FuzzParseVariants: the variants column parser never panics, and what it
// accepts holds each rsID once with a valid zygosity.
func FuzzParseVariants(f *testing.F) {
	for _, s := range []string{"", "rs1", "rs1:hom;rs2", "rs1;rs1", "rs1:x", " RS1 : Hemi ;", ":;:", "rs1:hom:het"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vs, zyg, rerr := parseVariants(s)
		if rerr != nil {
			if rerr.Field != "variants" {
				t.Fatalf("error field %q", rerr.Field)
			}
			return
		}
		seen := map[string]bool{}
		for _, v := range vs {
			k, _ := calling.NormaliseRsID(v)
			if seen[k] {
				t.Fatalf("%q accepted twice in %q", v, s)
			}
			seen[k] = true
		}
		for rs, z := range zyg {
			if z != engine.Het && z != engine.Hom && z != engine.Hemi {
				t.Fatalf("zygosity %q of %s", z, rs)
			}
		}
	})
}

// TestNoDigest: Options.NoDigest changes nothing but ResultDigest, which
// is empty; without it every result's digest is the SHA-256 of its bytes.
func TestNoDigest(t *testing.T) {
	kb, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	data := Header + "\nclopidogrel,rs4244285,Tamil Nadu,,PCI,p1\nwarfarin,,Kerala,,,p2\n,,,,,p3\ncodeine,rs3892097:hom,,,pain,p4\n"
	run := func(noDigest bool) []Row {
		var rows []Row
		proc := NewProcessor(kb, Options{Workers: 2, ChunkRows: 2, NoDigest: noDigest, Wire: func(r engine.Result) any { return r }})
		if _, err := proc.Run(context.Background(), strings.NewReader(data), func(c *Chunk) error {
			rows = append(rows, c.Rows...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	with, without := run(false), run(true)
	for i := range with {
		r := &with[i]
		if r.OK {
			sum := sha256.Sum256(r.Result)
			if want := "sha256:" + hex.EncodeToString(sum[:]); r.ResultDigest != want {
				t.Errorf("row %d: digest %q, want %q", r.Row, r.ResultDigest, want)
			}
		}
		if without[i].ResultDigest != "" {
			t.Errorf("row %d: digest %q with NoDigest", r.Row, without[i].ResultDigest)
		}
		r.ResultDigest = ""
	}
	if diff := cmp.Diff(with, without); diff != "" {
		t.Errorf("rows differ beyond the digest (-with +without):\n%s", diff)
	}
}
