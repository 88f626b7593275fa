package vcfcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// FuzzRunChecks runs arbitrary VCF text through calling and a drug check:
// no panic; the run ends without error or with a refusal of the file; and
// every genotype the reader accepts becomes valid position calls, so no
// check fails (a check that could not be made would carry an error), the
// only exception being alleles longer than the calls' 200-base limit.
func FuzzRunChecks(f *testing.F) {
	kb := loadKB(f)
	f.Add(threeSamples)
	f.Add("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n" +
		"chr10\t94781859\trs4244285\tG\tA,<*>,*\t.\tPASS\t.\tGT:DP\t2|1:3\t.\n" +
		"chr13\t48045719\t.\tC\t.\t.\t.\t.\tGT\t0\t1/.\n")
	f.Fuzz(func(t *testing.T, text string) {
		opened := 0
		_, err := vcfcall.Run(context.Background(), kb, memOpener([]byte(text), &opened),
			vcfcall.Options{Drugs: []string{"clopidogrel"}, Wire: func(r engine.Result) any { return r.OverallSeverity }, MaxLineBytes: 1 << 16},
			func(c *vcfcall.Chunk) error {
				for _, s := range c.Samples {
					var res vcfcall.SampleResult
					if err := json.Unmarshal(s.Result, &res); err != nil {
						t.Fatal(err)
					}
					if len(res.Checks) != 1 {
						t.Fatalf("%d checks for one drug", len(res.Checks))
					}
					if e := res.Checks[0].Error; e != "" && !longAllele(text) {
						t.Fatalf("check failed: %s", e)
					}
				}
				return nil
			})
		var pe *vcf.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %v (%T) is neither nil nor a refusal of the file", err, err)
		}
	})
}

// longAllele reports whether some tab-separated field is over 200 bytes.
func longAllele(text string) bool {
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == '\t' || r == '\n' }) {
		if len(f) > 200 {
			return true
		}
	}
	return false
}
