package vcf

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes (plain or gzip) to the reader: it must
// never panic, must end with io.EOF or a *ParseError (the input is in
// memory, so no other error can occur), and every record it returns must be
// consistent with the header and the options.
func FuzzReader(f *testing.F) {
	rec := "chr1\t100\trs1\tA\tG,T\t.\tPASS\t.\tGT:DP\t0/1:3\t2|.\n"
	for _, seed := range []string{
		"",
		head,
		head + rec,
		head + rec + "chr1\t99\t.\tA\tG\t.\t.\t.\tGT\t0\t1\n",
		head + "chr1\t5\t.\tA\t<DEL>,*\t.\t.\t.\tGT\t|0|2\t./.\n",
		"##fileformat=VCFv4.2\n##contig=<ID=chr1,length=249250621>\n",
		"##fileformat=VCFv4.2\n##reference=hg19\n",
		"##fileformat=VCFv4.3\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\n1\t1\t.\tN\t.\t.\t.\t.\t.\t.\n",
		string(gz(head+rec, rec)),
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, keepOdd bool) {
		opt := Options{MaxLineBytes: 4096}
		if keepOdd {
			opt.Keep = func(_ string, pos, _ int) bool { return pos%2 == 1 }
		}
		r, err := NewReader(bytes.NewReader(in), opt)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("NewReader: %v (%T) is not a *ParseError", err, err)
			}
			return
		}
		samples := r.Samples()
		if len(samples) == 0 {
			t.Fatal("a reader without samples")
		}
		lastLine := 0
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Next: %v (%T) is not a *ParseError", err, err)
				}
				return
			}
			if rec.Line <= lastLine {
				t.Fatalf("line %d after line %d", rec.Line, lastLine)
			}
			lastLine = rec.Line
			if keepOdd && rec.Pos%2 != 1 {
				t.Fatalf("record at %d kept against Keep", rec.Pos)
			}
			if rec.End < rec.Pos+len(rec.Ref)-1 {
				t.Fatalf("record at %d with REF %q ends at %d", rec.Pos, rec.Ref, rec.End)
			}
			if rec.Chrom == "" || rec.Ref == "" || !isBases(rec.Ref) {
				t.Fatalf("record %+v has an empty contig or a bad REF", rec)
			}
			if len(rec.Calls) != len(samples) {
				t.Fatalf("%d calls for %d samples", len(rec.Calls), len(samples))
			}
			for _, c := range rec.Calls {
				if len(c.Alleles) > 2 {
					t.Fatalf("call %v has more than two alleles", c)
				}
				for _, a := range c.Alleles {
					if a < -1 || a > len(rec.Alts) {
						t.Fatalf("allele %d outside -1..%d", a, len(rec.Alts))
					}
				}
			}
		}
	})
}

// FuzzParseGT checks the genotype parser alone: allele indexes stay in
// range and a call has one or two alleles.
func FuzzParseGT(f *testing.F) {
	for _, s := range []string{"0/1", "1|0", "./.", ".", "0", "|0|1", "/1|.", "0/1/2", "12/3", "0/", "01/1", ""} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, gt string, nAlts int) {
		if nAlts < 0 || nAlts > 1000 {
			return
		}
		got, _, err := parseGT(nil, gt, nAlts)
		if err != nil {
			return
		}
		if len(got) < 1 || len(got) > 2 {
			t.Fatalf("%q → %v", gt, got)
		}
		for _, a := range got {
			if a < -1 || a > nAlts {
				t.Fatalf("%q → allele %d outside -1..%d", gt, a, nAlts)
			}
		}
	})
}
