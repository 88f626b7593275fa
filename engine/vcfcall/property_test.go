package vcfcall_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// gvcfAround writes a one-sample gVCF of chrom: good reference blocks
// (GQ 60, MIN_DP 30) from lo to hi around the given variant records, which
// must be sorted and lie inside [lo, hi].
func gvcfAround(chrom string, lo, hi int, variants []gvcfVariant) string {
	var b strings.Builder
	b.WriteString(gvcfHeader)
	next := lo
	blockTo := func(end int) {
		if end >= next {
			fmt.Fprintf(&b, "%s\t%d\t.\tN\t<NON_REF>\t.\t.\tEND=%d\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n", chrom, next, end)
		}
	}
	for _, v := range variants {
		blockTo(v.pos - 1)
		fmt.Fprintf(&b, "%s\t%d\t.\t%s\t%s,<NON_REF>\t500\t%s\t.\tGT:DP:GQ:PS\t%s:%d:%d:%s\n", chrom, v.pos, v.ref, v.alt, v.filter, v.gt, v.dp, v.gq, v.ps)
		next = v.pos + len(v.ref)
	}
	blockTo(hi)
	return b.String()
}

type gvcfVariant struct {
	pos            int
	ref, alt       string
	gt, filter, ps string
	gq, dp         int
}

// geneAnswer runs a file and returns the gene's answer.
func geneAnswer(t *testing.T, data, gene string) vcfcall.GeneResult {
	t.Helper()
	chunks, _, _, err := runAll(t, loadKB(t), []byte(data), vcfcall.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var res vcfcall.SampleResult
	if err := json.Unmarshal(chunks[0].Samples[0].Result, &res); err != nil {
		t.Fatal(err)
	}
	for _, g := range res.Genes {
		if g.Gene == gene {
			return g
		}
	}
	t.Fatalf("no %s", gene)
	return vcfcall.GeneResult{}
}

// TestEvidenceFaultsNeverReadNormal is the property over every gene and
// every definition position: a heterozygous documented variant there with
// an evidence fault (GQ below the threshold, depth below it, a FILTER other
// than PASS, a genotype selecting <NON_REF>) never gives a reading without
// a review, and the fault is named; the same variant without the fault is
// used (no no-call is named at the position).
func TestEvidenceFaultsNeverReadNormal(t *testing.T) {
	if testing.Short() {
		t.Skip("walks every definition position")
	}
	kb := loadKB(t)
	caller := kb.Caller()
	faults := []struct {
		name  string
		apply func(v *gvcfVariant)
		named string
	}{
		{"GQ 5", func(v *gvcfVariant) { v.gq = 5 }, "GQ 5 is below the minimum 20"},
		{"DP 3", func(v *gvcfVariant) { v.dp = 3 }, "DP 3 is below the minimum 10"},
		{"FILTER LowQual", func(v *gvcfVariant) { v.filter = "LowQual" }, "FILTER LowQual"},
		{"<NON_REF>", func(v *gvcfVariant) { v.gt = "0/2" }, "<NON_REF>"},
	}
	checked := 0
	for _, gene := range caller.DefinitionGenes() {
		def, _ := caller.Definition(gene)
		lo, hi := def.Positions[0].Pos-5, def.Positions[len(def.Positions)-1].Pos+60
		for _, p := range def.Positions {
			if p.Ignored || len(p.Alts) == 0 || strings.ContainsAny(p.Alts[0], "<*") {
				continue
			}
			clean := gvcfVariant{pos: p.Pos, ref: p.Ref, alt: p.Alts[0], gt: "0/1", filter: "PASS", ps: ".", gq: 60, dp: 30}
			label := fmt.Sprintf("%s:%d", def.Chromosome, p.Pos)
			g := geneAnswer(t, gvcfAround(def.Chromosome, lo, hi, []gvcfVariant{clean}), gene)
			if mentions(g, label, "is a no-call") {
				t.Errorf("%s %s: the clean variant is named a no-call: %q", gene, label, g.Notes)
			}
			for _, f := range faults {
				v := clean
				f.apply(&v)
				g := geneAnswer(t, gvcfAround(def.Chromosome, lo, hi, []gvcfVariant{v}), gene)
				checked++
				if !g.NeedsReview || g.Interpretation == vcfcall.InterpretationCalled {
					t.Errorf("%s %s %s: answer %q without a review", gene, label, f.name, g.Summary)
				}
				for _, d := range g.Diplotypes {
					if d.Phenotype != "" || d.ActivityScore != "" {
						t.Errorf("%s %s %s: a phenotype (%s %s) despite the fault", gene, label, f.name, d.Phenotype, d.ActivityScore)
					}
				}
				if !mentions(g, label, f.named) {
					t.Errorf("%s %s %s: the fault is not named: notes %q uninterpreted %q", gene, label, f.name, g.Notes, g.Uninterpreted)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no position was checked")
	}
	t.Logf("%d gene × position × fault answers checked", checked)
}

// TestPhaseAcrossSetsIsUnphased is the property over every gene with two
// or more positions: two heterozygous variants phased in trans but in two
// phase sets read exactly as the same variants unphased.
func TestPhaseAcrossSetsIsUnphased(t *testing.T) {
	caller := loadKB(t).Caller()
	checked := 0
	for _, gene := range caller.DefinitionGenes() {
		def, _ := caller.Definition(gene)
		var picks []int
		for i, p := range def.Positions {
			if !p.Ignored && len(p.Alts) > 0 && len(p.Ref) == 1 && len(p.Alts[0]) == 1 {
				picks = append(picks, i)
			}
			if len(picks) == 2 {
				break
			}
		}
		if len(picks) < 2 {
			continue
		}
		a, b := def.Positions[picks[0]], def.Positions[picks[1]]
		lo, hi := def.Positions[0].Pos-5, def.Positions[len(def.Positions)-1].Pos+60
		file := func(gtA, gtB, psA, psB string) string {
			return gvcfAround(def.Chromosome, lo, hi, []gvcfVariant{
				{pos: a.Pos, ref: a.Ref, alt: a.Alts[0], gt: gtA, filter: "PASS", ps: psA, gq: 60, dp: 30},
				{pos: b.Pos, ref: b.Ref, alt: b.Alts[0], gt: gtB, filter: "PASS", ps: psB, gq: 60, dp: 30},
			})
		}
		across := geneAnswer(t, file("0|1", "1|0", "100", "200"), gene)
		unphased := geneAnswer(t, file("0/1", "0/1", ".", "."), gene)
		checked++
		if across.Phased || !cmp.Equal(outcomeOf(across), outcomeOf(unphased)) || across.NeedsReview != unphased.NeedsReview ||
			!cmp.Equal(across.Alternatives, unphased.Alternatives) {
			t.Errorf("%s: phased across sets reads %q (phased %v), unphased %q", gene, across.Summary, across.Phased, unphased.Summary)
		}
		if !mentions(across, "different phase sets") {
			t.Errorf("%s: no note says the phase sets differ: %q", gene, across.Notes)
		}
	}
	if checked == 0 {
		t.Fatal("no gene was checked")
	}
}
