package engine_test

import (
	"errors"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

func benchmarkCheck(b *testing.B, req engine.Request) {
	k := kb(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Evaluate(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckRsIDs is the README's clopidogrel request.
func BenchmarkCheckRsIDs(b *testing.B) {
	benchmarkCheck(b, engine.Request{Drug: "clopidogrel", Variants: []string{"rs12769205", "rs4244285"},
		Zygosity:    map[string]engine.Zygosity{"rs12769205": engine.Hom, "rs4244285": engine.Hom},
		GenesTested: []string{"CYP2C19"}, State: "Tamil Nadu", Ethnicity: "Tamil", Indication: "acute coronary syndrome, PCI"})
}

// BenchmarkCheckDiplotype is a diplotype-only check.
func BenchmarkCheckDiplotype(b *testing.B) {
	benchmarkCheck(b, engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}})
}

// BenchmarkCheckCYP2D6Panel calls CYP2D6 from rsIDs shared by many alleles
// (the slowest allele-calling path).
func BenchmarkCheckCYP2D6Panel(b *testing.B) {
	benchmarkCheck(b, engine.Request{Drug: "codeine", Variants: []string{"rs16947", "rs1135840", "rs1065852", "rs3892097"}, GenesTested: []string{"CYP2D6"}})
}

// FuzzEvaluate feeds arbitrary drug names, rsIDs and diplotypes to the
// engine: it must either validate them or answer, never panic.
func FuzzEvaluate(f *testing.F) {
	f.Add("clopidogrel", "rs4244285", "CYP2C19", "*2/*17", "HLA-B*15:02", "positive")
	f.Add("Warfarin Sodium", "RS1057910", "CYP2C9", "*1/*3", "HLA-A*31:01", "negative")
	f.Add("", "rs", "G6PD", "Mediterranean, Dallas, Panama, Sassari, Cagliari, Birmingham", "x", "")
	f.Add("codeine", "rs3892097", "CYP2D6", "*1x≥3/*4", "HLA-B*57:01", "Positive")
	k := kb(f)
	f.Fuzz(func(t *testing.T, drug, rs, gene, dip, hla, status string) {
		req := engine.Request{Drug: drug, Variants: []string{rs}, Diplotypes: map[string]string{gene: dip}, HLA: map[string]string{hla: status}}
		if _, err := k.Evaluate(engine.Request{Drug: drug, Variants: []string{rs}, GenesTested: []string{gene}}); err != nil && !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		res, err := k.Evaluate(req)
		if err != nil {
			return
		}
		if res.GroundingContract != engine.GroundingContract {
			t.Fatal("grounding contract missing")
		}
	})
}

// BenchmarkCallSampleReferenceVCF calls all 20 genes from PharmCAT's
// reference.vcf (1,202 records: every definition position), read once
// with engine/vcf outside the timed loop.
func BenchmarkCallSampleReferenceVCF(b *testing.B) {
	k := kb(b)
	obs, err := readAllSamples(k, datapacktest.PharmCATDir(b)+"/test-vcfs/org/pharmgkb/pharmcat/reference.vcf")
	if err != nil {
		b.Fatal(err)
	}
	if len(obs) != 1 || len(obs[0]) < 1000 {
		b.Fatalf("reference.vcf: %d samples, want 1 with ≥1,000 positions", len(obs))
	}
	b.ReportAllocs()
	for b.Loop() {
		sc := k.Caller().CallSample(obs[0], calling.CallOptions{})
		if len(sc.Genes) != 20 {
			b.Fatalf("%d genes called", len(sc.Genes))
		}
	}
}

// BenchmarkCheckPositionCalls is a check with position-level calls.
func BenchmarkCheckPositionCalls(b *testing.B) {
	benchmarkCheck(b, engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Calls: []engine.PositionCall{
		{Chrom: "chr10", Pos: 94781859, Ref: "G", Alt: "A", Genotype: "0/1"},
		{Chrom: "chr10", Pos: 94775367, Ref: "A", Alt: "G", Genotype: "0/1"},
		{Chrom: "chr10", Pos: 94842866, Ref: "A", Alt: "G", Genotype: "1/1"}}})
}
