package engine_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// TestRepeatCountNotation (issue 21 item 4): a bare UGT1A1 rs3064744
// repeat count has two meanings — the allele definitions count one unit
// more than clinicians do, so "TA(7)" is the reference there and (TA)7 is
// *28 clinically — and is refused with a 422 naming both readings; the
// same count with its convention marker, the VCF allele or a diplotype
// reads normally. Before, rs3064744:TA(7) read *1/*1 ("no need to avoid"
// atazanavir) and (TA)7 was an allele no definition knows.
func TestRepeatCountNotation(t *testing.T) {
	k := kb(t)
	const poor, normal = "*28/*28 — Poor Metabolizer", "*1/*1 — Normal Metabolizer"
	tests := []struct {
		item string
		want string   // the UGT1A1 genotype line, when read
		errs []string // substrings of the variants[0] 422, when refused
	}{
		{item: "rs3064744:TA(7)", errs: []string{"two meanings", "TA(7) is the UGT1A1 reference allele (VCF CAT)", "(TA)7 is TA(8) of the definitions: *28, *80+*28 (VCF CATAT)", "rs3064744:TA(7)@definitions", "rs3064744:(TA)7@clinical"}},
		{item: "rs3064744:(TA)7", errs: []string{"two meanings", "reference allele (VCF CAT)", "*28, *80+*28 (VCF CATAT)"}},
		{item: "rs3064744:TA(8)", errs: []string{"two meanings", "TA(8) is *28, *80+*28 (VCF CATAT)", "(TA)8 is TA(9) of the definitions: *37, *80+*37 (VCF CATATAT)"}},
		{item: "rs3064744:TA[6]", errs: []string{"two meanings", "TA(6) is *36 (VCF C)", "(TA)6 is TA(7) of the definitions: the UGT1A1 reference allele (VCF CAT)"}},
		{item: "rs3064744:ta(9)", errs: []string{"two meanings", "TA(9) is *37", "(TA)9 is TA(10) of the definitions: no allele of the definitions"}},
		{item: "rs3064744:CATAT@clinical", errs: []string{"apply only to a count such as TA(7) or (TA)7 of rs3064744 (UGT1A1)"}},
		{item: "rs72549309:ATGA(1)@clinical", errs: []string{"apply only to a count"}},
		// The clean twins.
		{item: "rs3064744:(TA)7@clinical", want: poor},
		{item: "rs3064744:TA(7)@clinical", want: poor},
		{item: "rs3064744:TA(8)@definitions", want: poor},
		{item: "rs3064744:TA(8)@DEFINITIONS", want: poor},
		{item: "rs3064744:CATAT", want: poor},
		{item: "rs3064744:(TA)6@clinical", want: normal},
		{item: "rs3064744:TA(7)@definitions", want: normal},
	}
	for _, tc := range tests {
		t.Run(tc.item, func(t *testing.T) {
			req := engine.Request{Drug: "atazanavir", Variants: []string{tc.item}, Zygosity: map[string]engine.Zygosity{tc.item: engine.Hom}, GenesTested: []string{"UGT1A1"}}
			res, err := k.Evaluate(req)
			if tc.errs != nil {
				var ve *engine.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("got %v, want a 422 on variants[0]", err)
				}
				reason := ""
				for _, fe := range ve.Fields {
					if fe.Field == "variants[0]" {
						reason = fe.Reason
					}
				}
				for _, s := range tc.errs {
					if !strings.Contains(reason, s) {
						t.Errorf("variants[0] reason %q lacks %q", reason, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.want}, genotypeLines(res, "UGT1A1")); diff != "" {
				t.Errorf("UGT1A1 (-want +got):\n%s", diff)
			}
		})
	}
	// The diplotype form is unambiguous.
	res := check(t, engine.Request{Drug: "atazanavir", Diplotypes: map[string]string{"UGT1A1": "*28/*28"}})
	if diff := cmp.Diff([]string{poor}, genotypeLines(res, "UGT1A1")); diff != "" {
		t.Errorf("diplotype (-want +got):\n%s", diff)
	}
}

// TestRepeatConventionsAgreeWithData checks each refused repeat variant's
// offset between the two counts against the knowledge: the definitions'
// count of the reference allele (the CPIC notation whose VCF allele is the
// GRCh38 REF) minus the clinical count of the reference that the tracked
// panel row of the same gene and star allele writes as its ref ("(TA)6").
// It fails when either source changes its count.
func TestRepeatConventionsAgreeWithData(t *testing.T) {
	k := kb(t)
	clinical := regexp.MustCompile(`^\(([A-Z]+)\)([0-9]+)$`)
	for _, conv := range calling.RepeatConventions() {
		d, ok := k.Caller().Definition(conv.Gene)
		if !ok {
			t.Fatalf("%s: no definition", conv.Gene)
		}
		defRef := -1
		for _, p := range d.Positions {
			if p.RsID != conv.RsID {
				continue
			}
			for cpic, vcf := range p.CPICToVCF {
				if vcf == p.Ref && strings.HasPrefix(cpic, conv.Unit+"(") {
					defRef, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(cpic, conv.Unit+"("), ")"))
				}
			}
		}
		clinRef := -1
		for _, v := range k.Variants {
			if m := clinical.FindStringSubmatch(v.Ref); v.Gene == conv.Gene && m != nil && m[1] == conv.Unit {
				clinRef, _ = strconv.Atoi(m[2])
			}
		}
		if defRef < 0 || clinRef < 0 {
			t.Fatalf("%s: reference count not found (definitions %d, panel %d)", conv.RsID, defRef, clinRef)
		}
		if got := defRef - clinRef; got != conv.ClinicalOffset {
			t.Errorf("%s: the data say the definitions count %d more, the table says %d", conv.RsID, got, conv.ClinicalOffset)
		}
	}
}

// TestVariantLabelsStateRepeatConvention: the tracked panel's repeat
// variant (GET /pgx/variants) says in its label which count it uses and
// what the definitions write for the same alleles.
func TestVariantLabelsStateRepeatConvention(t *testing.T) {
	k := kb(t)
	v, ok := k.TrackedVariant("rs8175347")
	if !ok {
		t.Fatal("rs8175347 not on the panel")
	}
	want := "UGT1A1*28 (TA)7 promoter repeat [clinical repeat count: (TA)6 is the reference, (TA)7 is *28; the CPIC/PharmCAT allele definitions (rs3064744) count otherwise: TA(7) is the reference, TA(8) is *28]"
	if v.AlleleLabel != want {
		t.Errorf("label\n got %q\nwant %q", v.AlleleLabel, want)
	}
}
