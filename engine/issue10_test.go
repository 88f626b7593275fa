package engine_test

import (
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestIssue10Examples replays the answers issue 10 reported as wrong.
func TestIssue10Examples(t *testing.T) {
	k := kb(t)
	male, female := &engine.Patient{Sex: "male"}, &engine.Patient{Sex: "female"}
	tests := []struct {
		name     string
		req      engine.Request
		genotype []string        // "GENE diplotype phenotype"
		overall  engine.Severity // anySeverity: not checked
		review   string          // a review alert for this gene must exist
	}{
		{name: "UGT1A1 *28 as the tracked panel's rs8175347 is not read as *1/*1",
			req:    engine.Request{Drug: "atazanavir", Variants: []string{"rs8175347"}, Zygosity: map[string]engine.Zygosity{"rs8175347": "het"}, GenesTested: []string{"UGT1A1"}},
			review: "UGT1A1", overall: engine.SeverityModerate, genotype: []string{"UGT1A1  Could not interpret — review"}},
		{name: "UGT1A1 TA(8) by its allele, counted as the definitions count (issue 21: a bare count is refused)",
			req:      engine.Request{Drug: "atazanavir", Variants: []string{"rs3064744:TA(8)@definitions"}, Zygosity: map[string]engine.Zygosity{"rs3064744": "hom"}, GenesTested: []string{"UGT1A1"}},
			genotype: []string{"UGT1A1 *28/*28 Poor Metabolizer"}, overall: engine.SeverityHigh},
		{name: "CYP2D6 *4/*6 from two rsIDs is a poor metabolizer",
			req:      engine.Request{Drug: "codeine", Variants: []string{"rs3892097", "rs5030655"}, Zygosity: map[string]engine.Zygosity{"rs3892097": "het", "rs5030655": "het"}},
			genotype: []string{"CYP2D6 *4/*6 Poor Metabolizer"}, overall: engine.SeverityHigh},
		{name: "DPYD unphased hets: the two lowest-function variants",
			req:      engine.Request{Drug: "fluorouracil", Variants: []string{"rs3918290", "rs55886062", "rs67376798"}, GenesTested: []string{"DPYD"}},
			genotype: []string{"DPYD c.1679T>G (*13)/c.1905+1G>A (*2A) Poor Metabolizer"}, overall: engine.SeverityHigh},
		{name: "G6PD Arakawa (no rsID) in a male by genomic HGVS",
			req:      engine.Request{Drug: "rasburicase", Variants: []string{"NC_000023.11:g.154532082G>A"}, GenesTested: []string{"G6PD"}, Patient: male},
			genotype: []string{"G6PD Arakawa Deficient with CNSHA"}, overall: engine.SeverityHigh},
		{name: "G6PD heterozygous woman with rs1050828 + rs1050829 is not called through an unobserved allele",
			req:      engine.Request{Drug: "rasburicase", Variants: []string{"rs1050828", "rs1050829"}, GenesTested: []string{"G6PD"}, Patient: female},
			genotype: []string{"G6PD B (reference)/A- 202A_376G Variable"}, overall: engine.SeverityModerate}, // MODERATE since issue 21: measure before rasburicase
		{name: "SLCO1B1 *45",
			req:      engine.Request{Drug: "simvastatin", Diplotypes: map[string]string{"SLCO1B1": "*1/*45"}},
			genotype: []string{"SLCO1B1 *1/*45 Decreased Function"}, overall: engine.SeverityHigh},
		{name: "CYP2D6 *1/*1x3",
			req:      engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*1/*1x3"}},
			genotype: []string{"CYP2D6 *1/*1x≥3 Ultrarapid Metabolizer"}, overall: engine.SeverityHigh},
		{name: "NAT2 reference reported explicitly is not 'not reported'",
			req: engine.Request{Drug: "hydralazine", Variants: []string{"rs1801280", "rs1208"},
				Zygosity: map[string]engine.Zygosity{"rs1801280": "het", "rs1208": "ref"}},
			genotype: []string{"NAT2  Could not interpret — review"}, review: "NAT2", overall: anySeverity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := k.Evaluate(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range res.Genotype {
				got = append(got, strings.TrimSpace(g.Gene+" "+g.Diplotype+" "+g.Phenotype))
			}
			want := make([]string, len(tc.genotype))
			for i, w := range tc.genotype {
				want[i] = strings.TrimSpace(strings.ReplaceAll(w, "  ", " "))
			}
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], "  ", " ")
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("genotype %q, want %q", got, want)
			}
			if tc.overall != anySeverity && res.OverallSeverity != tc.overall {
				t.Errorf("overall %s, want %s", res.OverallSeverity, tc.overall)
			}
			if tc.review != "" {
				found := false
				for _, a := range res.Alerts {
					found = found || (a.Gene == tc.review && strings.Contains(a.Message, "Could not interpret"))
				}
				if !found {
					t.Errorf("no review alert for %s: %+v", tc.review, res.Alerts)
				}
			}
		})
	}
}
