package vcfcall_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// TestWrongBuildREF: a record whose REF is not the GRCh38 base at a
// definition position is refused naming the line (a GRCh37 file without a
// build header); the GRCh38 base, a gVCF block that starts there with its
// first base, and any base at a position no definition uses pass.
func TestWrongBuildREF(t *testing.T) {
	kb := loadKB(t)
	const head = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"
	tests := []struct {
		name string
		body string
		want *vcf.ParseError
	}{
		{"GRCh38 REF", "chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\n", nil},
		{"gVCF block from the position", "chr10\t94781859\t.\tG\t<NON_REF>\t.\tPASS\tEND=94781900\tGT\t0/0\n", nil},
		{"block from another position covering it", "chr10\t94781850\t.\tT\t<NON_REF>\t.\tPASS\tEND=94781900\tGT\t0/0\n", nil},
		{"not a definition position", "chr10\t94781860\t.\tC\tT\t.\tPASS\t.\tGT\t0/1\n", nil},
		{"REF of another build", "chr10\t94781859\trs4244285\tC\tA\t.\tPASS\t.\tGT\t0/1\n",
			&vcf.ParseError{Line: 3, Field: "REF", Reason: "C at chr10:94781859 is not the GRCh38 reference G (a position of the CYP2C19 allele definitions): the file looks like another genome build (GRCh37?); only GRCh38 is read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := runAll(t, kb, []byte(head+tt.body), vcfcall.Options{})
			var pe *vcf.ParseError
			if !errors.As(err, &pe) {
				pe = nil
				if err != nil {
					t.Fatalf("error %v is not a *vcf.ParseError", err)
				}
			}
			if diff := cmp.Diff(tt.want, pe); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}
