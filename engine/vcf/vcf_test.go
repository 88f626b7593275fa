package vcf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// readAll reads every record and the error that ended the reading (nil at EOF).
func readAll(t *testing.T, in []byte, opt Options) ([]string, []Record, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(in), opt)
	if err != nil {
		return nil, nil, err
	}
	var recs []Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r.Samples(), recs, nil
		}
		if err != nil {
			// The error is sticky.
			if _, again := r.Next(); again != err {
				t.Errorf("second Next after %v returned %v", err, again)
			}
			return r.Samples(), recs, err
		}
		recs = append(recs, rec)
	}
}

const head = "##fileformat=VCFv4.2\n" +
	"##contig=<ID=chr1,length=248956422,assembly=GRCh38.p13,species=\"Homo sapiens\">\n" +
	"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n"

func gz(members ...string) []byte {
	var out bytes.Buffer
	for _, m := range members {
		w := gzip.NewWriter(&out)
		w.Write([]byte(m))
		w.Close()
	}
	return out.Bytes()
}

func TestReaderRecords(t *testing.T) {
	body := "chr1\t100\trs1;chr1_100_A_G\tA\tG\t50\tPASS\tAC=1\tGT\t0/1\t1|1\n" +
		"chr1\t100\t.\tTG\tT,<*>\t.\tLowQual;PCATxINDEL\t.\tGT:DP\t./.:3\t0|2\n" +
		"chr1\t200\trs2\tcat\tcatat,c\t.\t.\t.\tDP:GT\t5:2/1\t7\n" +
		"10\t5\t.\tC\t.\t.\t.\t.\tGT\t0\t.\n" +
		"10\t6\t.\tC\tT\t.\t.\t.\tGT\t|0|1\t/1|.\n" +
		"10\t7\t.\tC\tT\t.\t.\t.\tDP\t3\t4\n"
	want := []Record{
		{Line: 4, Chrom: "chr1", Pos: 100, End: 100, IDs: []string{"rs1", "chr1_100_A_G"}, Ref: "A", Alts: []string{"G"}, Filter: []string{"PASS"},
			Calls: []Call{{Alleles: []int{0, 1}}, {Alleles: []int{1, 1}, Phased: true}}},
		{Line: 5, Chrom: "chr1", Pos: 100, End: 101, Ref: "TG", Alts: []string{"T", "<*>"}, Filter: []string{"LowQual", "PCATxINDEL"},
			Calls: []Call{{Alleles: []int{-1, -1}, DP: Number{3, true}}, {Alleles: []int{0, 2}, Phased: true}}},
		{Line: 6, Chrom: "chr1", Pos: 200, End: 202, IDs: []string{"rs2"}, Ref: "CAT", Alts: []string{"CATAT", "C"},
			Calls: []Call{{Alleles: []int{2, 1}, DP: Number{5, true}}, {Alleles: []int{-1}, DP: Number{7, true}}}}, // a missing trailing GT reads as '.'
		{Line: 7, Chrom: "10", Pos: 5, End: 5, Ref: "C",
			Calls: []Call{{Alleles: []int{0}}, {Alleles: []int{-1}}}},
		{Line: 8, Chrom: "10", Pos: 6, End: 6, Ref: "C", Alts: []string{"T"},
			Calls: []Call{{Alleles: []int{0, 1}, Phased: true}, {Alleles: []int{1, -1}}}},
		{Line: 9, Chrom: "10", Pos: 7, End: 7, Ref: "C", Alts: []string{"T"},
			Calls: []Call{{DP: Number{3, true}}, {DP: Number{4, true}}}},
	}
	plain := []byte(head + body)
	for name, in := range map[string][]byte{
		"plain":                plain,
		"CRLF":                 []byte(strings.ReplaceAll(string(plain), "\n", "\r\n")),
		"no final newline":     bytes.TrimSuffix(plain, []byte("\n")),
		"gzip":                 gz(string(plain)),
		"BGZF-like members":    gz(head, body[:50], body[50:], ""),
		"blank lines skipped":  []byte(head + "\n" + body + "\n\n"),
		"member split in line": gz(string(plain[:len(head)+7]), string(plain[len(head)+7:])),
	} {
		t.Run(name, func(t *testing.T) {
			samples, got, err := readAll(t, in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"S1", "S2"}, samples); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
			w := want
			if name == "blank lines skipped" {
				w = nil
				for _, r := range want {
					r.Line++
					w = append(w, r)
				}
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderKeepAndSelect(t *testing.T) {
	in := []byte(head +
		"chr1\t100\t.\tA\tG\t.\t.\t.\tGT\t0/1\tnonsense\n" + // bad GT, but skipped by Keep
		"chr1\t150\t.\tA\tG\t.\t.\t.\tGT\t0/1\t1/1\n" +
		"1x\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\n" + // too few samples, but skipped by Keep
		"X\t9\t.\tA\tG\t.\t.\t.\tGT\t1\t0/1\n")
	var asked []string
	keep := func(chrom string, pos, _ int) bool {
		asked = append(asked, chrom)
		return pos == 150 || chrom == "chrX"
	}
	samples, got, err := readAll(t, in, Options{Keep: keep, SelectSample: func(i int, name string) bool { return name == "S2" }})
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Line: 5, Chrom: "chr1", Pos: 150, End: 150, Ref: "A", Alts: []string{"G"}, Calls: []Call{{Alleles: []int{1, 1}}}},
		{Line: 7, Chrom: "X", Pos: 9, End: 9, Ref: "A", Alts: []string{"G"}, Calls: []Call{{Alleles: []int{0, 1}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"S2"}, samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"chr1", "chr1", "1x", "chrX"}, asked); diff != "" {
		t.Errorf("Keep saw (-want +got):\n%s", diff)
	}
	// An unselected sample column is not parsed, but it must be there.
	_, _, err = readAll(t, []byte(head+"chr1\t1\t.\tA\tG\t.\t.\t.\tGT\t0/1\n"), Options{SelectSample: func(i int, _ string) bool { return i == 0 }})
	wantErr := &ParseError{Line: 4, Field: "line", Reason: "the header names 2 sample(s) but this record has 1 sample column(s)"}
	if diff := cmp.Diff(wantErr, err); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestReaderLenience(t *testing.T) {
	in := []byte(head +
		"chr1\t100\t\tA\tG\t\t\t\tGT\t0/1\t0/0\n" + // empty ID, QUAL, FILTER, INFO read as '.'
		"chr1\t90\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n" +
		"chr2\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n" +
		"chr1\t95\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n")
	_, got, err := readAll(t, in, Options{AllowUnsorted: true})
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, r := range got {
		where = append(where, fmt.Sprintf("%s:%d %v %v", r.Chrom, r.Pos, r.IDs, r.Filter))
	}
	if diff := cmp.Diff([]string{"chr1:100 [] []", "chr1:90 [] []", "chr2:5 [] []", "chr1:95 [] []"}, where); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if _, _, err := readAll(t, in, Options{}); err == nil || err.Error() != "line 5: POS: the file is not sorted: chr1:90 comes after chr1:100" {
		t.Errorf("without AllowUnsorted: %v", err)
	}
}

func TestReaderRefusals(t *testing.T) {
	rec := "chr1\t100\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n"
	long := strings.Repeat("x", 200)
	tests := []struct {
		name string
		in   string
		opt  Options
		want *ParseError
	}{
		{"empty", "", Options{}, &ParseError{Line: 1, Field: "##fileformat", Reason: "the file is empty"}},
		{"not a VCF", "CHROM,POS\n", Options{}, &ParseError{Line: 1, Field: "##fileformat", Reason: `the first line must be ##fileformat=VCFv4.x; got "CHROM,POS"`}},
		{"VCF 3", "##fileformat=VCFv3.3\n", Options{}, &ParseError{Line: 1, Field: "##fileformat", Reason: `the first line must be ##fileformat=VCFv4.x; got "##fileformat=VCFv3.3"`}},
		{"BCF", "BCF\x02\x02rest", Options{}, &ParseError{Line: 1, Field: "##fileformat", Reason: "this is BCF (binary VCF); send VCF text, plain or bgzip-compressed"}},
		{"no #CHROM", "##fileformat=VCFv4.2\n##source=x\n", Options{}, &ParseError{Line: 2, Field: "#CHROM", Reason: "the header has no #CHROM line"}},
		{"data before #CHROM", "##fileformat=VCFv4.2\n" + rec, Options{}, &ParseError{Line: 2, Field: "#CHROM", Reason: `expected a ## meta line or the #CHROM line; got "chr1\t100\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0"`}},
		{"space-separated #CHROM", "##fileformat=VCFv4.2\n#CHROM POS ID REF ALT QUAL FILTER INFO FORMAT S1\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: "needs the tab-separated columns #CHROM POS ID REF ALT QUAL FILTER INFO; got 1 column(s)"}},
		{"misnamed column", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTERS\tINFO\tFORMAT\tS1\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: `column 7 must be FILTER; got "FILTERS"`}},
		{"sites only", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: "no FORMAT column and no samples: the file holds no genotypes to call"}},
		{"FORMAT without samples", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: "no sample columns: the file holds no genotypes to call"}},
		{"duplicate sample", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\tB\tA\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: `sample name "A" appears twice (columns 10 and 12)`}},
		{"empty sample name", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\t\n", Options{},
			&ParseError{Line: 2, Field: "#CHROM", Reason: `sample 2 has an empty name or one with surrounding spaces ("")`}},
		{"hg19 reference", "##fileformat=VCFv4.2\n##reference=file:///ref/hg19.fa\n" + head[21:] + rec, Options{},
			&ParseError{Line: 2, Field: "##reference", Reason: `"file:///ref/hg19.fa" names GRCh37/hg19: only GRCh38 is read`}},
		{"GRCh37 reference", "##fileformat=VCFv4.2\n##reference=GRCh37\n" + head[21:] + rec, Options{},
			&ParseError{Line: 2, Field: "##reference", Reason: `"GRCh37" names GRCh37/hg19: only GRCh38 is read`}},
		{"b37 g1k reference", "##fileformat=VCFv4.2\n##source=x\n##reference=human_g1k_v37.fasta\n", Options{},
			&ParseError{Line: 3, Field: "##reference", Reason: `"human_g1k_v37.fasta" names GRCh37/hg19: only GRCh38 is read`}},
		{"T2T reference", "##fileformat=VCFv4.2\n##reference=chm13v2.0.fa\n", Options{},
			&ParseError{Line: 2, Field: "##reference", Reason: `"chm13v2.0.fa" names T2T-CHM13: only GRCh38 is read`}},
		{"ambiguous reference", "##fileformat=VCFv4.2\n##reference=hg19_to_hg38.fa\n", Options{},
			&ParseError{Line: 2, Field: "##reference", Reason: `"hg19_to_hg38.fa" names GRCh38 and GRCh37/hg19: the genome build is ambiguous; only GRCh38 is read`}},
		{"GRCh37 contig length", "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=249250621>\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: "contig chr1 has length 249250621, its length in GRCh37/hg19 (GRCh38: 248956422): only GRCh38 is read"}},
		{"GRCh37 contig length, Ensembl name", "##fileformat=VCFv4.2\n##contig=<ID=X,length=155270560>\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: "contig X has length 155270560, its length in GRCh37/hg19 (GRCh38: 156040895): only GRCh38 is read"}},
		{"other contig length", "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=248387328>\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: "contig chr1 has length 248387328, not its GRCh38 length 248956422: the file is on another genome build; only GRCh38 is read"}},
		{"contig assembly b37", "##fileformat=VCFv4.2\n##contig=<ID=1,assembly=b37,length=249250621>\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: `"b37" names GRCh37/hg19: only GRCh38 is read`}},
		{"contig not structured", "##fileformat=VCFv4.2\n##contig=chr1\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: `"chr1" is not of the form <ID=...,...>`}},
		{"contig bad length", "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=big>\n", Options{},
			&ParseError{Line: 2, Field: "##contig", Reason: `length "big" of contig "chr1" is not a number`}},
		{"header line too long", "##fileformat=VCFv4.2\n##source=" + long + "\n", Options{MaxLineBytes: 100},
			&ParseError{Line: 2, Field: "line", Reason: "longer than 100 bytes"}},
		{"record too long", head + "chr1\t1\t" + long + "\tA\tG\t.\t.\t.\tGT\t0/1\t0/1\n", Options{MaxLineBytes: 150},
			&ParseError{Line: 4, Field: "line", Reason: "longer than 150 bytes"}},
		{"input too large", head + rec + rec, Options{MaxBytes: int64(len(head) + len(rec) + 3)},
			&ParseError{Line: 5, Field: "file", Reason: fmt.Sprintf("larger than %d bytes once decompressed", len(head)+len(rec)+3)}},
		{"unsorted", head + rec + "chr1\t99\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n", Options{},
			&ParseError{Line: 5, Field: "POS", Reason: "the file is not sorted: chr1:99 comes after chr1:100"}},
		{"unsorted even when not kept", head + rec + "chr1\t99\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n", Options{Keep: func(string, int, int) bool { return false }},
			&ParseError{Line: 5, Field: "POS", Reason: "the file is not sorted: chr1:99 comes after chr1:100"}},
		{"contig split", head + rec + strings.Replace(rec, "chr1", "chr2", 1) + strings.Replace(rec, "100", "300", 1), Options{},
			&ParseError{Line: 6, Field: "CHROM", Reason: "the file is not sorted: contig chr1 appears again after other contigs (its records began on line 4)"}},
		{"header line after #CHROM", head + rec + "##INFO=<ID=X>\n", Options{}, &ParseError{Line: 5, Field: "line", Reason: "a header line after the #CHROM line"}},
		{"no tabs", head + "chr1 100 . A G\n", Options{}, &ParseError{Line: 4, Field: "line", Reason: "a record needs tab-separated columns; this line has none"}},
		{"bad POS", head + "chr1\t1e5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "POS", Reason: `"1e5" is not a position`}},
		{"negative POS", head + "chr1\t-5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "POS", Reason: `"-5" is not a position`}},
		{"too few columns", head + "chr1\t5\t.\tA\tG\n", Options{}, &ParseError{Line: 4, Field: "line", Reason: "a record needs at least 8 tab-separated columns (CHROM to INFO); this line has 5"}},
		{"no FORMAT", head + "chr1\t5\t.\tA\tG\t.\t.\t.\n", Options{}, &ParseError{Line: 4, Field: "line", Reason: "the header names 2 sample(s) but this record has no FORMAT column"}},
		{"no sample columns", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\n", Options{}, &ParseError{Line: 4, Field: "line", Reason: "the header names 2 sample(s) but this record has no sample columns"}},
		{"too many samples", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/1\t1/1\n", Options{}, &ParseError{Line: 4, Field: "line", Reason: "the header names 2 sample(s) but this record has more sample columns"}},
		{"empty column", head + "chr1\t5\t.\t\tG\t.\t.\t.\tGT\t0/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "REF", Reason: "empty column (use '.' for a missing value)"}},
		{"bad REF", head + "chr1\t5\t.\tAX\tG\t.\t.\t.\tGT\t0/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "REF", Reason: `"AX" is not a sequence of bases A, C, G, T, N`}},
		{"bad ALT", head + "chr1\t5\t.\tA\tG,,T\t.\t.\t.\tGT\t0/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "ALT", Reason: `"" is not an alternate allele`}},
		{"bad GT letter", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/x\t0/1\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S1": "0/x" is not a genotype`}},
		{"GT allele beyond ALT", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/2\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S2": "0/2" names allele 2 but the record has 1 ALT allele(s)`}},
		{"END before POS", head + "chr1\t5\t.\tA\t<NON_REF>\t.\t.\tEND=4\tGT\t0/0\t0/0\n", Options{}, &ParseError{Line: 4, Field: "INFO", Reason: `END="4" is not a position at or after POS 5`}},
		{"bad GQ", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT:GQ\t0/1:high\t0/1:3\n", Options{}, &ParseError{Line: 4, Field: "GQ", Reason: `sample "S1": "high" is not a non-negative integer`}},
		{"bad MIN_DP", head + "chr1\t5\t.\tA\t<NON_REF>\t.\t.\tEND=9\tGT:MIN_DP\t0/0:1\t0/0:-2\n", Options{}, &ParseError{Line: 4, Field: "MIN_DP", Reason: `sample "S2": "-2" is not a non-negative integer`}},
		{"triploid GT", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1/1\t0/1\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S1": "0/1/1" has more than two alleles; only haploid and diploid calls are read`}},
		{"empty GT", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT:DP\t:5\t0/1\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S1": empty GT`}},
		{"trailing separator GT", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/\t0/1\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S1": "0/" is not a genotype`}},
		{"empty sample column", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t\t0/1\n", Options{}, &ParseError{Line: 4, Field: "GT", Reason: `sample "S1": empty column (use '.' for a missing value)`}},
		{"corrupt gzip", string(gz(head + rec)[:30]) + "garbage-garbage-garbage", Options{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(t, []byte(tt.in), tt.opt)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if tt.want == nil {
				return
			}
			if diff := cmp.Diff(tt.want, pe); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderGzipFailures(t *testing.T) {
	whole := gz(head + "chr1\t100\t.\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n")
	corrupt := append([]byte(nil), whole...)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32
	tests := []struct {
		name string
		in   []byte
		want *ParseError
	}{
		{"truncated", whole[:len(whole)-10], &ParseError{Line: 5, Field: "file", Reason: "the gzip/BGZF data ends early (truncated file)"}},
		{"bad checksum", corrupt, &ParseError{Line: 5, Field: "file", Reason: "the gzip/BGZF data is corrupt (gzip: invalid checksum)"}},
		{"bad header", []byte{0x1f, 0x8b, 0, 0, 0}, &ParseError{Line: 1, Field: "file", Reason: "the gzip/BGZF data ends early (truncated file)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(t, tt.in, Options{})
			if diff := cmp.Diff(tt.want, err); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	err := &ParseError{Line: 12, Field: "GT", Reason: "bad"}
	if got, want := err.Error(), "line 12: GT: bad"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestNormChrom(t *testing.T) {
	for in, want := range map[string]string{
		"10": "chr10", "chr10": "chr10", "Chr10": "chr10", "CHR7": "chr7", "1": "chr1", "22": "chr22",
		"X": "chrX", "chrX": "chrX", "x": "chrX", "Y": "chrY", "chrY": "chrY",
		"MT": "chrM", "M": "chrM", "chrM": "chrM", "chrMT": "chrM",
		"23": "23", "0": "0", "01": "01", "chr": "chr", "": "",
		"chr1_KI270706v1_random": "chr1_KI270706v1_random", "GL000192.1": "GL000192.1", "HLA-A*01:01:01:01": "HLA-A*01:01:01:01",
	} {
		if got := NormChrom(in); got != want {
			t.Errorf("NormChrom(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRecordDoesNotPinLine: REF and ALT are copies, not substrings of the
// line, so a record kept by the caller does not keep its (possibly very
// long) line reachable. Substrings of "REF\tALT" would lie len(REF)+1
// bytes apart; separate 20-byte allocations never do (size class 24).
func TestRecordDoesNotPinLine(t *testing.T) {
	ref, alt := strings.Repeat("A", 20), strings.Repeat("C", 20)
	_, recs, err := readAll(t, []byte(head+"chr1\t100\trs1\t"+ref+"\t"+alt+"\t.\tPASS\t.\tGT\t0/1\t0/0\n"), Options{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v, %d records", err, len(recs))
	}
	r := recs[0]
	if r.Ref != ref || r.Alts[0] != alt {
		t.Fatalf("record %+v", r)
	}
	if uintptr(unsafe.Pointer(unsafe.StringData(r.Alts[0])))-uintptr(unsafe.Pointer(unsafe.StringData(r.Ref))) == uintptr(len(ref)+1) {
		t.Error("REF and ALT are substrings of the line")
	}
}

// TestReaderGenomicVCF: a GATK gVCF reference block is kept by Keep when it
// covers a position of interest although it starts before it, and its END,
// GQ, DP and MIN_DP are read; a variant record's physical phasing (PGT, PID)
// and phase set (PS) are kept per call; '.' and absent values are not Known.
func TestReaderGenomicVCF(t *testing.T) {
	in := head +
		"chr1\t90\t.\tG\t<NON_REF>\t.\t.\tEND=99\tGT:DP:GQ:MIN_DP:PL\t0/0:44:81:43:0,81,1215\t0/0:3:0:0:0,0,0\n" +
		"chr1\t100\t.\tG\t<NON_REF>\t.\t.\tEND=120\tGT:DP:GQ:MIN_DP:PL\t0/0:30:60:28:0,60,900\t./.:0:0:0:0,0,0\n" +
		"chr1\t130\t.\tCAT\tC,<NON_REF>\t50\tLowQual\tDP=9\tGT:AD:DP:GQ:PGT:PID:PL\t0/1:5,4,0:9:12:0|1:130_CAT_C:1,2,3,4,5,6\t0/0:9,0,0:9:.:.:.:0,1,2,3,4,5\n" +
		"chr1\t140\t.\tA\tT\t.\tPASS\t.\tGT:PS\t1|0:130\t0|1:.\n"
	keep := func(_ string, start, end int) bool { return start <= 110 && 110 <= end || start >= 130 }
	_, got, err := readAll(t, []byte(in), Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	n := func(v int) Number { return Number{Value: v, Known: true} }
	want := []Record{
		{Line: 5, Chrom: "chr1", Pos: 100, End: 120, Ref: "G", Alts: []string{"<NON_REF>"},
			Calls: []Call{{Alleles: []int{0, 0}, GQ: n(60), DP: n(30), MinDP: n(28)}, {Alleles: []int{-1, -1}, GQ: n(0), DP: n(0), MinDP: n(0)}}},
		{Line: 6, Chrom: "chr1", Pos: 130, End: 132, Ref: "CAT", Alts: []string{"C", "<NON_REF>"}, Filter: []string{"LowQual"},
			Calls: []Call{{Alleles: []int{0, 1}, GQ: n(12), DP: n(9), PGT: "0|1", PID: "130_CAT_C"}, {Alleles: []int{0, 0}, DP: n(9)}}},
		{Line: 7, Chrom: "chr1", Pos: 140, End: 140, Ref: "A", Alts: []string{"T"}, Filter: []string{"PASS"},
			Calls: []Call{{Alleles: []int{1, 0}, Phased: true, PS: "130"}, {Alleles: []int{0, 1}, Phased: true}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
