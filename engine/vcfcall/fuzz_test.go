package vcfcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// only exception being alleles longer than the calls' 200-base limit. A
// sample's warnings never exceed engine.MaxWarnings, whatever the file
// repeats (large seeds: issue 25's repeated record, a position with 40
// different alleles).
func FuzzRunChecks(f *testing.F) {
	kb := loadKB(f)
	f.Add(threeSamples)
	f.Add(string(repeatedRecordsVCF(20, 64<<10)))
	var conflicting strings.Builder
	conflicting.WriteString("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n")
	for i := range 400 {
		fmt.Fprintf(&conflicting, "chr10\t94781859\t.\tG\tG%s\t.\tPASS\t.\tGT\t%s\n", strings.Repeat("T", i%40+1), []string{"0/1", "1/1", "1|0"}[i%3])
	}
	f.Add(conflicting.String())
	f.Add("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n" +
		"chr10\t94781859\trs4244285\tG\tA,<*>,*\t.\tPASS\t.\tGT:DP\t2|1:3\t.\n" +
		"chr13\t48045719\t.\tC\t.\t.\t.\t.\tGT\t0\t1/.\n")
	// gVCF evidence: blocks over definition REFs, a variant over a GQ-0
	// block, PGT/PID and PS phase, <NON_REF> genotypes, an indel written
	// as GATK writes it.
	f.Add(gvcfHeader +
		"chr10\t94781800\t.\tA\t<NON_REF>\t.\t.\tEND=94781858\tGT:DP:GQ:MIN_DP:PL\t0/0:30:60:28:0,60,900\n" +
		"chr10\t94781859\t.\tG\tA,<NON_REF>\t500\tLowQual\t.\tGT:AD:DP:GQ:PGT:PID:PL\t0/1:15,15,0:30:99:0|1:94781859_G_A:500,0,500,600,600,900\n" +
		"chr10\t94781860\t.\tT\t<NON_REF>\t.\t.\tEND=94781860\tGT:DP:GQ:MIN_DP:PL\t0/0:30:0:28:0,0,900\n" +
		"chr10\t94781861\t.\tA\t<NON_REF>\t.\t.\tEND=94781999\tGT:DP:GQ:MIN_DP:PL\t0/2:30:60:3:0,60,900\n")
	f.Add(gvcfHeader +
		"chr2\t233759924\t.\tC\tT,<NON_REF>\t500\t.\t.\tGT:GQ:DP:PS\t0|1:60:30:7\n" +
		"chr2\t233760233\t.\tC\tCAT,CG,<NON_REF>\t600\t.\t.\tGT:GQ:DP:PS\t1|2:60:30:8\n" +
		"chr2\t233760234\t.\tA\t<NON_REF>\t.\t.\tEND=233761000\tGT:DP:GQ:MIN_DP\t0/0:37:45:37\n")
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
					if len(res.Warnings) > engine.MaxWarnings {
						t.Fatalf("%d warnings for one sample", len(res.Warnings))
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
