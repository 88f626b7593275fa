package vcfcall

import (
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
)

// checkBuild refuses a record whose REF disagrees with GRCh38 at a
// definition position: a file without a build header (or with a wrong
// one) whose coordinates are GRCh37 reads reference bases another build
// has there, and is never answered (DESIGN.md §3, "Evidence ledger":
// wrong build is refused). Only the REF base the record states at its own
// POS is compared: a gVCF reference block's REF is its first base only,
// and an indel's REF starts with the base at POS.
func checkBuild(c *calling.Caller, rec vcf.Record, chrom string) error {
	ref, gene, ok := c.DefinitionRef(chrom, rec.Pos)
	if !ok || !calling.RefDisagrees(rec.Ref, ref) {
		return nil
	}
	return &vcf.ParseError{Line: rec.Line, Field: "REF", Reason: fmt.Sprintf(
		"%s at %s:%d is not the GRCh38 reference %s (a position of the %s allele definitions): the file looks like another genome build (GRCh37?); only GRCh38 is read",
		short(rec.Ref), rec.Chrom, rec.Pos, ref, gene)}
}

// short cuts a long REF for a message.
func short(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
