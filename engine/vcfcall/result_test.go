package vcfcall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// TestGeneResultNeverReassures: a gene that needs review or is not called
// carries no phenotype, and its summary says why.
func TestGeneResultNeverReassures(t *testing.T) {
	normal := calling.CalledDiplotype{Alleles: []string{"*1", "*1"}, Call: calling.PhenotypeCall{Phenotype: "Normal Metabolizer", ActivityScore: "2.0"}}
	tests := []struct {
		name string
		in   calling.GeneCall
		want GeneResult
	}{
		{
			name: "called",
			in:   calling.GeneCall{Gene: "CYP2D6", Status: calling.CallCalled, Diplotypes: []calling.CalledDiplotype{normal}},
			want: GeneResult{Gene: "CYP2D6", Status: "called", Interpretation: "called",
				Summary:    "*1/*1: Normal Metabolizer (activity score 2.0)",
				Diplotypes: []DiplotypeResult{{Diplotype: "*1/*1", Alleles: []string{"*1", "*1"}, Phenotype: "Normal Metabolizer", ActivityScore: "2.0"}}},
		},
		{
			name: "called but something uninterpreted",
			in: calling.GeneCall{Gene: "CYP2D6", Status: calling.CallCalled, Diplotypes: []calling.CalledDiplotype{normal},
				Uninterpreted: []string{"chr22:42127941 G>T is not an allele of any definition"}, NeedsReview: true,
				Alternatives: []calling.CalledDiplotype{normal}},
			want: GeneResult{Gene: "CYP2D6", Status: "called", Interpretation: "could not interpret — review",
				Summary:      "could not interpret — review: chr22:42127941 G>T is not an allele of any definition",
				Diplotypes:   []DiplotypeResult{{Diplotype: "*1/*1", Alleles: []string{"*1", "*1"}}},
				Alternatives: []string{"*1/*1"}, NeedsReview: true,
				Uninterpreted: []string{"chr22:42127941 G>T is not an allele of any definition"}},
		},
		{
			name: "review flagged with notes only",
			in:   calling.GeneCall{Gene: "ABCG2", Status: calling.CallNotCalled, NeedsReview: true, Notes: []string{"every ABCG2 position is missing"}},
			want: GeneResult{Gene: "ABCG2", Status: "not_called", Interpretation: "could not interpret — review",
				Summary: "could not interpret — review: every ABCG2 position is missing", NeedsReview: true,
				Notes: []string{"every ABCG2 position is missing"}},
		},
		{
			name: "not called",
			in:   calling.GeneCall{Gene: "TPMT", Status: calling.CallNotCalled, Diplotypes: []calling.CalledDiplotype{normal}, Notes: []string{"no fit"}},
			want: GeneResult{Gene: "TPMT", Status: "not_called", Interpretation: "not called", Summary: "not called: no fit",
				Diplotypes: []DiplotypeResult{{Diplotype: "*1/*1", Alleles: []string{"*1", "*1"}}}, Notes: []string{"no fit"}},
		},
		{
			name: "no data",
			in:   calling.GeneCall{Gene: "NUDT15", Status: calling.CallNoData},
			want: GeneResult{Gene: "NUDT15", Status: "no_data", Interpretation: "no data", Summary: "no data: the file has no record at any position of NUDT15"},
		},
		{
			name: "ambiguous",
			in: calling.GeneCall{Gene: "TPMT", Status: calling.CallCalled, Diplotypes: []calling.CalledDiplotype{
				{Alleles: []string{"*1", "*3A"}, Call: calling.PhenotypeCall{Phenotype: "Intermediate Metabolizer"}},
				{Alleles: []string{"*3B", "*3C"}, PhenotypeError: "no CPIC function for *3B"}}},
			want: GeneResult{Gene: "TPMT", Status: "called", Interpretation: "called",
				Summary: "ambiguous: *1/*3A: Intermediate Metabolizer or *3B/*3C: no CPIC phenotype (no CPIC function for *3B)",
				Diplotypes: []DiplotypeResult{{Diplotype: "*1/*3A", Alleles: []string{"*1", "*3A"}, Phenotype: "Intermediate Metabolizer"},
					{Diplotype: "*3B/*3C", Alleles: []string{"*3B", "*3C"}, PhenotypeError: "no CPIC function for *3B"}}},
		},
		{
			name: "CYP2D6 provisional",
			in: calling.GeneCall{Gene: "CYP2D6", Status: calling.CallProvisional, NeedsReview: true,
				Diplotypes:    []calling.CalledDiplotype{{Alleles: []string{"*1", "*1"}}},
				Uninterpreted: []string{"CYP2D6 from position data: the SNV and indel alleles read *1/*1 (provisional), but copy number is needed"}},
			want: GeneResult{Gene: "CYP2D6", Status: "provisional", Interpretation: "provisional — copy-number evidence needed",
				Summary:    "provisional — copy-number evidence needed: CYP2D6 from position data: the SNV and indel alleles read *1/*1 (provisional), but copy number is needed",
				Diplotypes: []DiplotypeResult{{Diplotype: "*1/*1", Alleles: []string{"*1", "*1"}}}, NeedsReview: true,
				Uninterpreted: []string{"CYP2D6 from position data: the SNV and indel alleles read *1/*1 (provisional), but copy number is needed"}},
		},
		{
			// A non-normal reading (a normal one with untested alleles is a
			// review: calling.TestTier1MissingPositions).
			name: "called with untested alleles",
			in: calling.GeneCall{Gene: "TPMT", Status: calling.CallCalled,
				Diplotypes:       []calling.CalledDiplotype{{Alleles: []string{"*1", "*3A"}, Call: calling.PhenotypeCall{Phenotype: "Intermediate Metabolizer"}}},
				MissingPositions: []string{"chr6:18130729 rs139392616"}, UntestedAlleles: []string{"*30"}},
			want: GeneResult{Gene: "TPMT", Status: "called", Interpretation: "called",
				Summary:          "*1/*3A: Intermediate Metabolizer",
				Diplotypes:       []DiplotypeResult{{Diplotype: "*1/*3A", Alleles: []string{"*1", "*3A"}, Phenotype: "Intermediate Metabolizer"}},
				MissingPositions: []string{"chr6:18130729 rs139392616"}, UntestedAlleles: []string{"*30"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := geneResult(&tt.in)
			w := tt.want
			for _, p := range []*[]string{&w.Alternatives, &w.MissingPositions, &w.Uninterpreted, &w.Notes, &w.Observations} {
				if *p == nil {
					*p = []string{}
				}
			}
			if w.Diplotypes == nil {
				w.Diplotypes = []DiplotypeResult{}
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Interpretation != InterpretationCalled {
				for _, d := range got.Diplotypes {
					if d.Phenotype != "" || d.ActivityScore != "" || strings.Contains(got.Summary, "Normal") {
						t.Errorf("a %s gene carries a phenotype: %+v", got.Interpretation, got)
					}
				}
			}
		})
	}
}
