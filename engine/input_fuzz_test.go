package engine_test

import (
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/outside"
)

// FuzzVariantItems feeds arbitrary variants items (rsIDs, rsID:ALLELE,
// genomic HGVS) with a zygosity: the engine either refuses them with
// field errors or answers, never panics, and an accepted item never
// produces a normal reading of a gene it marks for review.
func FuzzVariantItems(f *testing.F) {
	for _, s := range []string{"rs4244285", "RS3892097:T", "rs3064744:TA(8)", "rs3064744:(TA)7@clinical", "rs3064744:TA(8)@definitions", "rs3064744:CATAT", "NC_000023.11:g.154532082G>A",
		"NC_000010.11:g.94781859G>A", "rs1142345:Q", "NC_000010.11:g.1A>T", "rs:", "rs1:", "rs12:ACGTN", "NC_000001.11:g.97450058C>T"} {
		f.Add(s, "het")
		f.Add(s, "hom")
	}
	f.Add("rs4244285", "ref")
	k := kb(f)
	f.Fuzz(func(t *testing.T, item, zyg string) {
		req := engine.Request{Drug: "clopidogrel", Variants: []string{item}, Zygosity: map[string]engine.Zygosity{item: engine.Zygosity(zyg)}}
		checkAnswer(t, k, req)
	})
}

// FuzzPositionCalls feeds arbitrary position-level calls.
func FuzzPositionCalls(f *testing.F) {
	f.Add("chr10", 94781859, "G", "A", "0/1", true)
	f.Add("10", 94842866, "A", "G", "1|1", false)
	f.Add("chrX", 154532082, "G", "A", "1", true)
	f.Add("chr2", 233760233, "CAT", "C,CATAT,CATATAT", "2/3", true)
	f.Add("chr1", 97450058, "C", "T", "./.", true)
	f.Add("chr19", 38433867, "T", "G", "0/.", false)
	k := kb(f)
	f.Fuzz(func(t *testing.T, chrom string, pos int, ref, alt, gt string, tested bool) {
		req := engine.Request{Drug: "fluorouracil", Calls: []engine.PositionCall{{Chrom: chrom, Pos: pos, Ref: ref, Alt: alt, Genotype: gt}}}
		if tested {
			req.GenesTested = []string{"DPYD", "CYP2C19"}
		}
		checkAnswer(t, k, req)
	})
}

// FuzzOutsideCalls feeds arbitrary caller output as the outside_calls of
// a check, beside a CYP2D6 diplotype and a variant.
func FuzzOutsideCalls(f *testing.F) {
	for _, s := range []string{
		"CYP2D6\t*1/*2x2\n", "CYP2C19\t*2/*2\tPoor Metabolizer\n", "Sample\tGenotype\tFilter\nS\t*1/*5\tPASS\n",
		"Sample\tGenotype\tFilter\nS\t*1/*2;*1/*34\tMore_than_one_possible_genotype\n",
		"CYP2D6 Star Allele Calling with StellarPGx\n\nResult:\n*2/*68+*4\n",
		`{"B": ["B*15:02:01", "B*40:01:02"]}`, "\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective\n0\tA*32:01\tA*68:03\tB*15:02\tB*35:01\tC*07:02\tC*07:02\t1\t1\n",
	} {
		f.Add(s, true)
	}
	k := kb(f)
	f.Fuzz(func(t *testing.T, text string, more bool) {
		req := engine.Request{Drug: "codeine", OutsideCalls: []string{text}}
		if more {
			req.Diplotypes = map[string]string{"CYP2D6": "*1/*1"}
			req.Variants = []string{"rs4244285"}
		}
		checkAnswer(t, k, req)
	})
}

// FuzzDiplotypeNotation feeds arbitrary diplotype strings (copy numbers,
// tandem arrangements, sub-alleles, gene prefixes) for CYP2D6 and G6PD.
func FuzzDiplotypeNotation(f *testing.F) {
	for _, s := range []string{"*1/*1x3", "*36+*10/*4", "*13 + *68x2 + *4/*68 + *2", "CYP2D6*4/CYP2D6*4", "*4.024/*1", "*1xN/*2",
		"Chatham", "B (reference)/Telti/Kobe", "*1x≥3/*1", "*1x>=3/*2", "/", "*1//*2", "+/+",
		"*3/(*68)+*4", "*36+*36+*10/*10", "*1/*10+*36", "*2A/*4N", "(*2)+*2/*1", "*1×2/*1X0", "()+*1/*1"} {
		f.Add(s)
	}
	k := kb(f)
	f.Fuzz(func(t *testing.T, d string) {
		for _, gene := range []string{"CYP2D6", "G6PD"} {
			alleles, err := k.Caller().ParseDiplotype(gene, d)
			if err == nil && (len(alleles) < 1 || len(alleles) > 2) {
				t.Fatalf("%s %q: %d alleles", gene, d, len(alleles))
			}
			checkAnswer(t, k, engine.Request{Drug: "codeine", Diplotypes: map[string]string{gene: d}})
		}
	})
}

// checkAnswer validates req; an accepted request must evaluate without
// error, and a gene marked for review must not read as a result.
func checkAnswer(t *testing.T, k *evaluate.Engine, req engine.Request) {
	t.Helper()
	if err := k.Caller().Validate(req); err != nil {
		if _, ok := err.(*engine.ValidationError); !ok {
			t.Fatalf("validation error of type %T: %v", err, err)
		}
		return
	}
	gt := k.Caller().InterpretGenotype(req)
	for gene, gg := range gt.Genes {
		for _, d := range gg.Diplotypes {
			if len(gg.Review) > 0 && (strings.HasPrefix(d.Call.Phenotype, "Normal") || d.Call.Phenotype == "") {
				t.Fatalf("%s: review %v with the reading %v %q", gene, gg.Review, d.Alleles, d.Call.Phenotype)
			}
		}
	}
	res, err := k.Evaluate(req)
	if err != nil {
		t.Fatalf("accepted request failed: %v", err)
	}
	for _, c := range res.Genotype {
		if gg := gt.Genes[c.Gene]; gg != nil && len(gg.Review) > 0 && strings.HasPrefix(c.Phenotype, "Normal") {
			t.Fatalf("%s reads %s despite review", c.Gene, c.Phenotype)
		}
	}
	// The evidence ledger has exactly one entry per input item, each in a
	// state, with a reason exactly when the item was not used.
	// An outside_calls item has one entry per call it holds.
	outsideCalls := 0
	for _, text := range req.OutsideCalls {
		f, err := outside.Read(strings.NewReader(text), calling.MaxOutsideCallBytes)
		if err != nil {
			t.Fatalf("accepted outside call unreadable: %v", err)
		}
		outsideCalls += len(f.Calls)
	}
	if want := len(req.Variants) + len(req.Calls) + len(req.Diplotypes) + len(req.HLA) + outsideCalls; len(res.Evidence) != want {
		t.Fatalf("evidence ledger has %d entries for %d input items: %+v", len(res.Evidence), want, res.Evidence)
	}
	fields := map[string]bool{}
	for _, e := range res.Evidence {
		if fields[e.Field] && !strings.HasPrefix(e.Field, "outside_calls[") || e.State == 0 || (e.State == engine.EvidenceUsed) != (e.Reason == "") {
			t.Fatalf("evidence ledger entry %+v (duplicate field, no state, or a reason that does not fit the state)", e)
		}
		fields[e.Field] = true
	}
}
