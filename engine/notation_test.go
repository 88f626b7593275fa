package engine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine"
)

// TestDiplotypeNotations: CYP2D6 copy-number, tandem and hybrid notations,
// PharmVar sub-alleles and gene prefixes resolve to CPIC alleles with
// their activity values; one allele for a diploid gene is refused.
func TestDiplotypeNotations(t *testing.T) {
	k := kb(t)
	tests := []struct {
		gene, dip string
		want      []string
		score     string
		pheno     string
		errHas    string
	}{
		{"CYP2D6", "*1/*1x2", []string{"*1", "*1x2"}, "3.0", "Ultrarapid Metabolizer", ""},
		{"CYP2D6", "*1/*1x3", []string{"*1", "*1x≥3"}, "≥4.0", "Ultrarapid Metabolizer", ""},
		{"CYP2D6", "*1x2/*9", []string{"*1x2", "*9"}, "2.25", "Normal Metabolizer", ""},
		{"CYP2D6", "*36+*10/*4", []string{"*36 + *10", "*4"}, "0.25", "Intermediate Metabolizer", ""},
		{"CYP2D6", "*68+*4/*1", []string{"*68 + *4", "*1"}, "1.0", "Intermediate Metabolizer", ""},
		{"CYP2D6", "*13 + *1/*36 + *10x2", []string{"*13 + *1", "*36 + *10x2"}, "1.5", "Normal Metabolizer", ""},
		{"CYP2D6", "CYP2D6*1/CYP2D6*4", []string{"*1", "*4"}, "1.0", "Intermediate Metabolizer", ""},
		{"CYP2D6", "*4.024/*4", []string{"*4", "*4"}, "0.0", "Poor Metabolizer", ""},
		{"CYP2D6", "*1/*2xN", nil, "", "", "unknown copy number"},
		{"CYP2D6", "*4+*10/*1", nil, "", "", "CPIC gives the arrangement *4 + *10 no activity value"},
		{"CYP2C19", "*17", nil, "", "", "is one allele; CYP2C19 is diploid"},
		{"CYP2C9", "*1/*999.001", nil, "", "", "unknown"},
		{"G6PD", "Chatham", []string{"Chatham"}, "", "Deficient", ""},
	}
	for _, tc := range tests {
		got, err := k.Caller().ParseDiplotype(tc.gene, tc.dip)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s %s: err %v, want one containing %q", tc.gene, tc.dip, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tc.gene, tc.dip, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s alleles (-want +got):\n%s", tc.gene, tc.dip, diff)
		}
		call, err := k.Caller().Phenotype(tc.gene, got...)
		if err != nil {
			t.Errorf("%s %s: %v", tc.gene, tc.dip, err)
			continue
		}
		if call.ActivityScore != tc.score || call.Phenotype != tc.pheno {
			t.Errorf("%s %s: got %s %s, want %s %s", tc.gene, tc.dip, call.ActivityScore, call.Phenotype, tc.score, tc.pheno)
		}
	}
}

// TestOneAlleleRefused: "CYP2C19": "*17" is a 422 naming the field, and a
// one-allele G6PD genotype for a female patient too.
func TestOneAlleleRefused(t *testing.T) {
	k := kb(t)
	for _, req := range []engine.Request{
		{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*17"}},
		{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": "Chatham"}, Patient: &engine.Patient{Sex: "female"}},
	} {
		_, err := k.Evaluate(req)
		ve, ok := err.(*engine.ValidationError)
		if !ok || len(ve.Fields) != 1 || !strings.HasPrefix(ve.Fields[0].Field, "diplotypes.") {
			t.Errorf("%v: got %v, want one field error on diplotypes", req.Diplotypes, err)
		}
	}
}
