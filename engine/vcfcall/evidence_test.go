package vcfcall_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// gvcfHeader is a one-sample gVCF header as GATK HaplotypeCaller writes it
// (no ##contig lines, as in the GeT-RM development genomes).
const gvcfHeader = "##fileformat=VCFv4.2\n" +
	"##ALT=<ID=NON_REF,Description=\"Represents any possible alternative allele at this location\">\n" +
	"#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"

// geneOf runs a one-sample file and returns the answer for gene.
func geneOf(t *testing.T, data, gene string, opt vcfcall.Options) vcfcall.GeneResult {
	t.Helper()
	chunks, _, _, err := runAll(t, loadKB(t), []byte(data), opt)
	if err != nil {
		t.Fatal(err)
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
	t.Fatalf("no %s in the answer", gene)
	return vcfcall.GeneResult{}
}

// outcome is what a test asks of one gene's answer.
type outcome struct {
	Interpretation string
	Diplotypes     []string
	Phenotype      string // of the first diplotype
}

func outcomeOf(g vcfcall.GeneResult) outcome {
	o := outcome{Interpretation: g.Interpretation}
	for _, d := range g.Diplotypes {
		o.Diplotypes = append(o.Diplotypes, d.Diplotype)
	}
	if len(g.Diplotypes) > 0 {
		o.Phenotype = g.Diplotypes[0].Phenotype
	}
	return o
}

// mentions reports whether any of the gene's notes or uninterpreted items
// contains every one of the words.
func mentions(g vcfcall.GeneResult, words ...string) bool {
	for _, s := range append(append([]string(nil), g.Notes...), g.Uninterpreted...) {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// VKORC1 has one definition position, rs9923231 chr16:31096368 C>T.
const vkorc1Block = "chr16\t31096300\t.\tA\t<NON_REF>\t.\t.\tEND=31096400\tGT:DP:GQ:MIN_DP:PL\t0/0:35:%GQ%:%MINDP%:0,60,900\n"

func vkorc1Variant(gt, gq, dp, filter string) string {
	return "chr16\t31096368\trs9923231\tC\tT,<NON_REF>\t500\t" + filter + "\t.\tGT:AD:DP:GQ:PL\t" + gt + ":15,15,0:" + dp + ":" + gq + ":500,0,500,600,600,900\n"
}

func block(gq, minDP string) string {
	return strings.NewReplacer("%GQ%", gq, "%MINDP%", minDP).Replace(vkorc1Block)
}

// TestGVCFEvidenceBothWays: every fault of gVCF evidence at a key position
// (low GQ, low depth, a non-PASS FILTER, a genotype selecting <NON_REF>,
// a weak reference block) is a no-call named in the gene's answer and
// never a normal reading; the same evidence without the fault is called.
func TestGVCFEvidenceBothWays(t *testing.T) {
	ref := "rs9923231 reference (C)/rs9923231 reference (C)"
	het := "rs9923231 reference (C)/rs9923231 variant (T)"
	tests := []struct {
		name  string
		body  string
		opt   vcfcall.Options
		want  outcome
		named []string // words one note or uninterpreted item holds
	}{
		{"variant GQ 60", vkorc1Variant("0/1", "60", "30", "PASS"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{het}, Phenotype: "-1639 AG"}, nil},
		{"variant GQ 5", vkorc1Variant("0/1", "5", "30", "PASS"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"rs9923231", "GQ 5 is below the minimum 20"}},
		{"variant GQ 5, threshold off", vkorc1Variant("0/1", "5", "30", "PASS"), vcfcall.Options{MinGQ: -1},
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{het}, Phenotype: "-1639 AG"}, nil},
		{"variant GQ 25, threshold 30", vkorc1Variant("0/1", "25", "30", "PASS"), vcfcall.Options{MinGQ: 30},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"GQ 25 is below the minimum 30"}},
		{"variant DP 4", vkorc1Variant("0/1", "60", "4", "PASS"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"DP 4 is below the minimum 10"}},
		{"variant FILTER LowQual", vkorc1Variant("0/1", "60", "30", "LowQual"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"FILTER LowQual"}},
		{"hom-ref call FILTER LowQual", vkorc1Variant("0/0", "60", "30", "LowQual"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"is a no-call", "FILTER LowQual"}},
		{"genotype selects <NON_REF>", vkorc1Variant("0/2", "60", "30", "PASS"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"<NON_REF>", "non-base ALT allele"}},
		{"reference block GQ 60", block("60", "30"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{ref}, Phenotype: "-1639 GG"}, nil},
		{"reference block GQ 5", block("5", "30"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"is a no-call", "GQ 5 is below the minimum 20"}},
		{"reference block MIN_DP 3", block("60", "3"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"MIN_DP 3 is below the minimum 10"}},
		{"variant record wins over a GQ-0 block", block("0", "30") + vkorc1Variant("0/1", "60", "30", "PASS"), vcfcall.Options{},
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{het}, Phenotype: "-1639 AG"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := geneOf(t, gvcfHeader+tc.body, "VKORC1", tc.opt)
			if diff := cmp.Diff(tc.want, outcomeOf(g)); diff != "" {
				t.Errorf("VKORC1 (-want +got):\n%s\nnotes %q\nuninterpreted %q", diff, g.Notes, g.Uninterpreted)
			}
			if tc.named != nil && !mentions(g, tc.named...) {
				t.Errorf("no note names %q: notes %q, uninterpreted %q", tc.named, g.Notes, g.Uninterpreted)
			}
			if tc.want.Interpretation != vcfcall.InterpretationCalled {
				for _, d := range g.Diplotypes {
					if d.Phenotype != "" || d.ActivityScore != "" {
						t.Errorf("a faulty input reads %s %s: a gene not called carries no phenotype", d.Phenotype, d.ActivityScore)
					}
				}
			}
		})
	}
}

// UGT1A1's definition positions: rs887829 chr2:233759924 C>T (*80), the TA
// repeat rs3064744 at 233760233 (the definitions write CAT>CATAT for *28;
// GATK writes C>CAT), rs4148323 233760498 and rs35350960 233760973.
const (
	ugtBlockBefore   = "chr2\t233759900\t.\tA\t<NON_REF>\t.\t.\tEND=233759923\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n"
	ugtBlock80       = "chr2\t233759924\t.\tC\t<NON_REF>\t.\t.\tEND=233760232\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n"
	ugtBlockThrough  = "chr2\t233759924\t.\tC\t<NON_REF>\t.\t.\tEND=233760233\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n"
	ugtBlockGQ0      = "chr2\t233760234\t.\tA\t<NON_REF>\t.\t.\tEND=233760234\tGT:DP:GQ:MIN_DP:PL\t0/0:37:0:37:0,0,104\n"
	ugtBlock234      = "chr2\t233760234\t.\tA\t<NON_REF>\t.\t.\tEND=233760234\tGT:DP:GQ:MIN_DP:PL\t0/0:37:45:37:0,45,700\n"
	ugtBlockAfter    = "chr2\t233760235\t.\tT\t<NON_REF>\t.\t.\tEND=233761000\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n"
	ugtBlockAfter232 = "chr2\t233760233\t.\tC\t<NON_REF>\t.\t.\tEND=233760233\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n"
)

func ugtVariant(pos, ref, alt, format, sample string) string {
	return "chr2\t" + pos + "\t.\t" + ref + "\t" + alt + ",<NON_REF>\t600\t.\t.\t" + format + "\t" + sample + "\n"
}

// TestGVCFIndelsAndBlockSpans: the TA repeat written as GATK writes it is
// read as the definitions' allele; a reference block covers a definition
// whose REF is longer than one base only when every base is covered, by
// one block or by consecutive ones; an indel no definition writing
// compares with stays refused (review).
func TestGVCFIndelsAndBlockSpans(t *testing.T) {
	ta := ugtVariant("233760233", "C", "CAT", "GT:AD:DP:GQ:PL", "0/1:11,20,0:31:99:651,0,322,684,382,1066")
	tests := []struct {
		name  string
		body  string
		want  outcome
		named []string
	}{
		{"C>CAT is the definitions' CAT>CATAT (*28)", ugtBlockBefore + ugtBlock80 + ta + ugtBlockGQ0 + ugtBlockAfter,
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*1/*28"}, Phenotype: "Intermediate Metabolizer"}, nil},
		{"CAT covered by consecutive blocks", ugtBlockBefore + ugtBlockThrough + ugtBlock234 + ugtBlockAfter,
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*1/*1"}, Phenotype: "Normal Metabolizer"}, nil},
		{"CAT covered but for a GQ-0 base", ugtBlockBefore + ugtBlockThrough + ugtBlockGQ0 + ugtBlockAfter,
			outcome{Interpretation: vcfcall.InterpretationReview, Diplotypes: []string{"*1/*1"}}, []string{"rs3064744 is a no-call", "GQ 0 is below the minimum 20"}},
		{"CAT not covered to its last base", ugtBlockBefore + ugtBlock80 + ugtBlockAfter232 + ugtBlockAfter[:0] + strings.Replace(ugtBlockAfter, "233760235", "233760236", 1),
			outcome{Interpretation: vcfcall.InterpretationReview, Diplotypes: []string{"*1/*1"}}, []string{"rs3064744 is a no-call", "not every base of the definition's REF CAT"}},
		{"an insertion no definition writes", ugtBlockBefore + ugtBlock80 + ugtVariant("233760233", "C", "CG", "GT:AD:DP:GQ:PL", "0/1:11,20,0:31:99:651,0,322,684,382,1066") + ugtBlockGQ0 + ugtBlockAfter,
			outcome{Interpretation: vcfcall.InterpretationReview}, []string{"rs3064744", "REF C is not written as the definition writes it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := geneOf(t, gvcfHeader+tc.body, "UGT1A1", vcfcall.Options{})
			if diff := cmp.Diff(tc.want, outcomeOf(g)); diff != "" {
				t.Errorf("UGT1A1 (-want +got):\n%s\nnotes %q\nuninterpreted %q", diff, g.Notes, g.Uninterpreted)
			}
			if tc.named != nil && !mentions(g, tc.named...) {
				t.Errorf("no note names %q: notes %q, uninterpreted %q", tc.named, g.Notes, g.Uninterpreted)
			}
		})
	}
}

// TestGVCFPhaseSets: GATK's physical phasing (PGT/PID) and PS phase sets
// phase UGT1A1's *80 and TA-repeat sites with each other within one set;
// across two sets the gene is read as unphased, with a note.
func TestGVCFPhaseSets(t *testing.T) {
	pgt := func(gt80, gtTA, pid80, pidTA string) string {
		return ugtBlockBefore +
			ugtVariant("233759924", "C", "T", "GT:AD:DP:GQ:PGT:PID:PL", "0/1:15,15,0:30:99:"+gt80+":"+pid80+":500,0,500,600,600,900") +
			"chr2\t233759925\t.\tA\t<NON_REF>\t.\t.\tEND=233760232\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n" +
			ugtVariant("233760233", "C", "CAT", "GT:AD:DP:GQ:PGT:PID:PL", "0/1:11,20,0:31:99:"+gtTA+":"+pidTA+":651,0,322,684,382,1066") +
			ugtBlockGQ0 + ugtBlockAfter
	}
	ps := func(gt80, gtTA, ps80, psTA string) string {
		return ugtBlockBefore +
			ugtVariant("233759924", "C", "T", "GT:AD:DP:GQ:PS", gt80+":15,15,0:30:99:"+ps80) +
			"chr2\t233759925\t.\tA\t<NON_REF>\t.\t.\tEND=233760232\tGT:DP:GQ:MIN_DP:PL\t0/0:35:60:30:0,60,900\n" +
			ugtVariant("233760233", "C", "CAT", "GT:AD:DP:GQ:PS", gtTA+":11,20,0:31:99:"+psTA) +
			ugtBlockGQ0 + ugtBlockAfter
	}
	unphased := outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*1/*80+*28"}, Phenotype: "Intermediate Metabolizer"}
	tests := []struct {
		name       string
		body       string
		want       outcome
		wantPhased bool
		named      []string
	}{
		{"PGT in trans, one PID", pgt("0|1", "1|0", "233759924_C_T", "233759924_C_T"),
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*28/*80"}, Phenotype: "Indeterminate"}, true, nil},
		{"PGT in cis, one PID", pgt("0|1", "0|1", "233759924_C_T", "233759924_C_T"),
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*1/*80+*28"}, Phenotype: "Intermediate Metabolizer"}, true, nil},
		{"PGT in trans, two PIDs", pgt("0|1", "1|0", "233759924_C_T", "233760233_C_CAT"), unphased, false,
			[]string{"different phase sets", "PID 233759924_C_T", "PID 233760233_C_CAT"}},
		{"PGT without PID", pgt("0|1", "1|0", ".", "."), unphased, false, nil},
		{"PS in trans, one set", ps("0|1", "1|0", "100", "100"),
			outcome{Interpretation: vcfcall.InterpretationCalled, Diplotypes: []string{"*28/*80"}, Phenotype: "Indeterminate"}, true, nil},
		{"PS in trans, two sets", ps("0|1", "1|0", "100", "200"), unphased, false, []string{"different phase sets", "PS 100", "PS 200"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := geneOf(t, gvcfHeader+tc.body, "UGT1A1", vcfcall.Options{})
			if diff := cmp.Diff(tc.want, outcomeOf(g)); diff != "" {
				t.Errorf("UGT1A1 (-want +got):\n%s\nnotes %q\nuninterpreted %q", diff, g.Notes, g.Uninterpreted)
			}
			if g.Phased != tc.wantPhased {
				t.Errorf("phased = %v, want %v", g.Phased, tc.wantPhased)
			}
			if tc.named != nil && !mentions(g, tc.named...) {
				t.Errorf("no note names %q: notes %q", tc.named, g.Notes)
			}
		})
	}
}

// TestJointVCFQualityPerSample: in a multi-sample (joint) VCF the quality
// thresholds apply per sample: the same record is called for the sample
// with a confident genotype and a no-call for the one without.
func TestJointVCFQualityPerSample(t *testing.T) {
	data := "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tWEAK\tSTRONG\tREF\n" +
		"chr16\t31096368\trs9923231\tC\tT\t500\tPASS\t.\tGT:DP:GQ\t0/1:30:5\t0/1:30:60\t0/0:30:60\n"
	chunks, _, _, err := runAll(t, loadKB(t), []byte(data), vcfcall.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range chunks[0].Samples {
		var res vcfcall.SampleResult
		if err := json.Unmarshal(s.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, g := range res.Genes {
			if g.Gene == "VKORC1" {
				got[s.Name] = g.Summary
			}
		}
	}
	want := map[string]string{
		"WEAK":   "could not interpret — review: chr16:31096368 rs9923231 (line 3): a non-reference genotype that cannot be used: GQ 5 is below the minimum 20 (line 3)",
		"STRONG": "rs9923231 reference (C)/rs9923231 variant (T): -1639 AG",
		"REF":    "rs9923231 reference (C)/rs9923231 reference (C): -1639 GG",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VKORC1 summaries (-want +got):\n%s", diff)
	}
}

// TestReferenceBlockWrongREFRefused: a reference block that starts at a
// definition position with a REF that is not the GRCh38 base there is a
// sign of another build: the file is refused naming the line, never read
// as reference.
func TestReferenceBlockWrongREFRefused(t *testing.T) {
	kb := loadKB(t)
	body := gvcfHeader + strings.Replace(block("60", "30"), "chr16\t31096300\t.\tA", "chr16\t31096368\t.\tG", 1)
	_, _, _, err := runAll(t, kb, []byte(body), vcfcall.Options{})
	if err == nil || !strings.Contains(err.Error(), "is not the GRCh38 reference C") || !strings.Contains(err.Error(), "another genome build") {
		t.Fatalf("err = %v; want the file refused as another build", err)
	}
}
