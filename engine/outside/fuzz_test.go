package outside

import (
	"strings"
	"testing"
)

// FuzzRead feeds any bytes to Read, seeded with one example of every
// format: it must never panic, never return a call without a gene, never a
// passing HLA call without two two-field alleles, and every error must be
// a *ParseError.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"CYP2D6\t*1/*3\nG6PD\tB (wildtype)/B (wildtype)\n",
		"Sample\tGenotype\tFilter\nS\t*1/*46;*43/*45\tMore_than_one_possible_genotype\n",
		aldyREADME,
		stellarSIM001,
		pypgxArchive(f, pypgxMeta, pypgxHeader+"S\t*2x2/*10\tNormal Metabolizer\t*10;*2;\t*2;\t;\t;\tDuplication\n"),
		"\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective\n0\tA*32:01\tA*68:03\tB*07:02\tB*35:01\tC*07:02\tC*07:02\t10191.0\t9915.8\n",
		"Locus\tChromosome\tAllele\tQ1\nA\t1\tA*11:01:01G\t1\nA\t2\tA*01:01:01G\t1\n",
		`{"A": ["A*01:01:01", "A*03:01:01"], "B": ["B*15"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(strings.NewReader(string(data)), 1<<16)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			return
		}
		for _, c := range file.Calls {
			if c.Gene == "" {
				t.Fatalf("call without a gene: %+v", c)
			}
			if c.Caller != file.Format {
				t.Fatalf("call by %q in a %q file", c.Caller, file.Format)
			}
			if strings.HasPrefix(c.Gene, "HLA-") && c.Caller != FormatPharmCAT && c.Passing && len(c.HLAAlleles) != 2 {
				t.Fatalf("passing HLA call without two alleles: %+v", c)
			}
			if !c.Passing && c.Quality == "" {
				t.Fatalf("non-passing call without words: %+v", c)
			}
		}
	})
}
