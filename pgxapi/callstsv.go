package pgxapi

import (
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// The calls table: one tab-separated row per sample and gene, for
// pipelines (POST /pgx/vcf with Accept: text/tab-separated-values,
// pgxsafety call --format tsv; docs/workflows.md).
//
// The columns whose meaning is that of PharmCAT's calls-only TSV
// (https://pharmcat.org/using/Running-PharmCAT/#calls-only-tsv-reports,
// single-file mode, which starts with "Sample ID") carry PharmCAT's names:
// Sample ID, Gene, Source Diplotype (the diplotypes, " OR " between
// several), Phenotype and Activity Score (" / " between several diplotypes'
// values) and Missing positions ("yes" or "no"). The others carry names
// PharmCAT does not use, because they say what PharmCAT's columns do not:
// the interpretation (called, review, provisional, not called, no data)
// and the reason for a review, the positions not called and the alleles
// that could not be assessed, the gene's notes, the sample's warnings, the
// knowledge version and the audit entry.

// TSVContentType is the media type of the calls table.
const TSVContentType = "text/tab-separated-values"

// CallsTSVColumns are the calls table's columns, in order.
var CallsTSVColumns = []string{
	"Sample ID", "Gene", "Source Diplotype", "Phenotype", "Activity Score", "Missing positions",
	"Interpretation", "Review Reason", "Positions Not Called", "Untested Alleles", "Notes",
	"Sample Warnings", "Knowledge Version", "Audit Log ID",
}

// AppendCallsTSVHeader appends the header line of the calls table.
func AppendCallsTSVHeader(dst []byte) []byte {
	dst = append(dst, strings.Join(CallsTSVColumns, "\t")...)
	return append(dst, '\n')
}

// AppendCallsTSV appends one row per gene of the sample's answer; auditID
// is the audit entry that covers it (empty offline, where nothing is
// audited).
func AppendCallsTSV(dst []byte, smp *vcfcall.Sample, knowledgeVersion, auditID string) []byte {
	res := smp.Answer
	warnings := strings.Join(res.Warnings, "; ")
	for i := range res.Genes {
		g := &res.Genes[i]
		source := g.Source
		var dips, phen, score []string
		anyPhen, anyScore := false, false
		for _, d := range g.Diplotypes {
			dips = append(dips, d.Diplotype)
			phen = append(phen, d.Phenotype)
			score = append(score, d.ActivityScore)
			anyPhen = anyPhen || d.Phenotype != ""
			anyScore = anyScore || d.ActivityScore != ""
		}
		if len(source) == 0 {
			source = dips
		}
		missing := "no"
		if len(g.MissingPositions) > 0 {
			missing = "yes"
		}
		cells := []string{
			res.Sample, g.Gene, strings.Join(source, " OR "), joinIf(anyPhen, phen, " / "), joinIf(anyScore, score, " / "),
			missing, g.Interpretation, reviewReason(g), strings.Join(g.MissingPositions, ", "),
			strings.Join(g.UntestedAlleles, ", "), strings.Join(g.Notes, "; "), warnings, knowledgeVersion, auditID,
		}
		for j, c := range cells {
			if j > 0 {
				dst = append(dst, '\t')
			}
			dst = appendTSVCell(dst, c)
		}
		dst = append(dst, '\n')
	}
	return dst
}

// reviewReason says why a gene is not read as called: the engine's
// reasons for a review, else, for a gene under review, provisional, not
// called or without data, its summary.
func reviewReason(g *vcfcall.GeneResult) string {
	if len(g.Uninterpreted) > 0 {
		return strings.Join(g.Uninterpreted, "; ")
	}
	if g.NeedsReview || g.Interpretation != vcfcall.InterpretationCalled {
		return g.Summary
	}
	return ""
}

func joinIf(ok bool, s []string, sep string) string {
	if !ok {
		return ""
	}
	return strings.Join(s, sep)
}

// appendTSVCell appends s with tabs and line breaks (which would split a
// cell or a row) as spaces.
func appendTSVCell(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, "\t\r\n") {
		return append(dst, s...)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}
