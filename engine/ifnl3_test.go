package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// TestIFNL3PhenotypeEveryForm: the IFNL3 rs12979860 genotype reaches the
// CPIC phenotype of the guideline's Table 1 (PMID 24096968; the rules are
// cited in knowledge/internal/gen/cited/phenotype_rules.csv) from every
// input form: CC is the favorable response genotype, CT and TT the
// unfavorable one. Before issue 21 the heterozygote read "no CPIC rule for
// function_pair" and the gene "Not callable".
func TestIFNL3PhenotypeEveryForm(t *testing.T) {
	const (
		fav   = "Favorable response genotype"
		unfav = "Unfavorable response genotype"
		ref   = "rs12979860 reference (C)"
		vart  = "rs12979860 variant (T)"
	)
	drug := "peginterferon alfa-2b"
	tested := []string{"IFNL3"}
	zyg := func(item, z string) map[string]engine.Zygosity {
		return map[string]engine.Zygosity{item: engine.Zygosity(z)}
	}
	tests := []struct {
		name string
		req  engine.Request
		want string // "diplotype — phenotype"
	}{
		{"rsID het", engine.Request{Drug: drug, Variants: []string{"rs12979860"}, Zygosity: zyg("rs12979860", "het"), GenesTested: tested}, ref + "/" + vart + " — " + unfav},
		{"rsID hom", engine.Request{Drug: drug, Variants: []string{"rs12979860"}, Zygosity: zyg("rs12979860", "hom"), GenesTested: tested}, vart + "/" + vart + " — " + unfav},
		{"rsID ref (the clean twin)", engine.Request{Drug: drug, Variants: []string{"rs12979860"}, Zygosity: zyg("rs12979860", "ref"), GenesTested: tested}, ref + "/" + ref + " — " + fav},
		{"rsID:T het", engine.Request{Drug: drug, Variants: []string{"rs12979860:T"}, Zygosity: zyg("rs12979860:T", "het"), GenesTested: tested}, ref + "/" + vart + " — " + unfav},
		{"HGVS het", engine.Request{Drug: drug, Variants: []string{"NC_000019.10:g.39248147C>T"}, Zygosity: zyg("NC_000019.10:g.39248147C>T", "het"), GenesTested: tested}, ref + "/" + vart + " — " + unfav},
		{"call 0/1", engine.Request{Drug: drug, Calls: []engine.PositionCall{{Chrom: "chr19", Pos: 39248147, Ref: "C", Alt: "T", Genotype: "0/1"}}}, ref + "/" + vart + " — " + unfav},
		{"call 0/0", engine.Request{Drug: drug, Calls: []engine.PositionCall{{Chrom: "chr19", Pos: 39248147, Ref: "C", Alt: "T", Genotype: "0/0"}}}, ref + "/" + ref + " — " + fav},
		{"diplotype C/T", engine.Request{Drug: drug, Diplotypes: map[string]string{"IFNL3": ref + "/" + vart}}, ref + "/" + vart + " — " + unfav},
		{"diplotype T/T", engine.Request{Drug: drug, Diplotypes: map[string]string{"IFNL3": vart + "/" + vart}}, vart + "/" + vart + " — " + unfav},
		{"diplotype C/C", engine.Request{Drug: drug, Diplotypes: map[string]string{"IFNL3": ref + "/" + ref}}, ref + "/" + ref + " — " + fav},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.req)
			if diff := cmp.Diff([]string{tc.want}, genotypeLines(res, "IFNL3")); diff != "" {
				t.Errorf("IFNL3 (-want +got):\n%s", diff)
			}
		})
	}

	// A real genome: PharmCAT's IFNL3 test VCFs (NA12878 at rs12979860).
	k := kb(t)
	dir := filepath.Join(datapacktest.PharmCATDir(t), "test-vcfs", "org", "pharmgkb", "pharmcat", "haplotype", "IFNL3")
	for file, want := range map[string]string{
		"rs12979860CC.vcf": ref + "/" + ref + " — " + fav,
		"rs12979860CT.vcf": ref + "/" + vart + " — " + unfav,
		"rs12979860TT.vcf": vart + "/" + vart + " — " + unfav,
	} {
		sc := k.Caller().CallSample(readTestVCF(t, k, filepath.Join(dir, file)), calling.CallOptions{})
		res, err := k.EvaluateSample(engine.Request{Drug: drug}, sc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if diff := cmp.Diff([]string{want}, genotypeLines(res, "IFNL3")); diff != "" {
			t.Errorf("%s IFNL3 (-want +got):\n%s", file, diff)
		}
	}
}

// genotypeLines writes a result's genotype entries of gene as
// "diplotype — phenotype" ("— review" when the gene could not be read).
func genotypeLines(res engine.Result, gene string) []string {
	var out []string
	for _, g := range res.Genotype {
		if g.Gene != gene {
			continue
		}
		p := g.Phenotype
		if p == "" {
			p = "no phenotype"
		}
		out = append(out, strings.TrimSpace(g.Diplotype+" — "+p))
	}
	return out
}
