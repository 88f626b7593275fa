package calling_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

func caller(t *testing.T) *calling.Caller {
	t.Helper()
	e, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	return e.Caller()
}

// TestDefinitionSitesIn: a span selects every definition site whose REF
// it overlaps, including a multi-base REF that starts before the span.
func TestDefinitionSitesIn(t *testing.T) {
	k := caller(t)
	type site struct {
		Pos int
		Ref string
	}
	tests := []struct {
		chrom      string
		start, end int
		want       []site
	}{
		{"chr16", 31096368, 31096368, []site{{31096368, "C"}}},
		{"chr16", 31096300, 31096400, []site{{31096368, "C"}}},
		{"chr16", 31096369, 31096400, nil},
		// UGT1A1's TA repeat CAT at 233760233 covers 233760233-233760235.
		{"chr2", 233760235, 233760235, []site{{233760233, "CAT"}}},
		{"chr2", 233760236, 233760300, nil},
		{"chr2", 233759900, 233760240, []site{{233759924, "C"}, {233760233, "CAT"}}},
		// DPYD c.1898delC: TG at 97450065.
		{"chr1", 97450066, 97450066, []site{{97450065, "TG"}}},
		{"chr99", 1, 1 << 30, nil},
	}
	for _, tc := range tests {
		var got []site
		for _, s := range k.DefinitionSitesIn(tc.chrom, tc.start, tc.end) {
			got = append(got, site{s.Pos, s.Ref})
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("DefinitionSitesIn(%s, %d, %d) (-want +got):\n%s", tc.chrom, tc.start, tc.end, diff)
		}
	}
	// Every alternate allele of the TA repeat is listed, in the
	// definitions' writing.
	ss := k.DefinitionSitesIn("chr2", 233760233, 233760233)
	if len(ss) != 1 || !cmp.Equal(ss[0].Alts, []string{"C", "CATAT", "CATATAT"}) {
		t.Errorf("UGT1A1 TA repeat site: %+v", ss)
	}
}

// TestWithheldObservation: a withheld genotype is a no-call named in the
// notes; a withheld non-reference genotype also sends the gene to review;
// the same genotype not withheld is called.
func TestWithheldObservation(t *testing.T) {
	k := caller(t)
	obs := func(gt []int, withheld string, variant bool) []calling.PositionObservation {
		return []calling.PositionObservation{{Chrom: "chr16", Pos: 31096368, Ref: "C", Alts: []string{"T"}, GT: gt, Source: "line 9",
			Withheld: withheld, WithheldVariant: variant}}
	}
	type result struct {
		Status      string
		NeedsReview bool
		Diplotypes  []string
		Missing     []string
	}
	tests := []struct {
		name  string
		obs   []calling.PositionObservation
		want  result
		named string
	}{
		{"het, used", obs([]int{0, 1}, "", false), result{calling.CallCalled, false, []string{"rs9923231 reference (C)/rs9923231 variant (T)"}, nil}, ""},
		{"het, withheld", obs([]int{0, 1}, "GQ 5 is below the minimum 20", true),
			result{calling.CallNotCalled, true, nil, []string{"chr16:31096368 rs9923231"}}, "chr16:31096368 rs9923231 is a no-call (line 9): GQ 5 is below the minimum 20"},
		{"hom-ref, withheld", obs([]int{0, 0}, "FILTER LowQual", false),
			result{calling.CallNotCalled, true, nil, []string{"chr16:31096368 rs9923231"}}, "is a no-call (line 9): FILTER LowQual"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := k.CallSample(tc.obs, calling.CallOptions{Genes: []string{"VKORC1"}})
			gc := sc.Gene("VKORC1")
			if gc == nil {
				t.Fatal("no VKORC1 call")
			}
			got := result{Status: gc.Status, NeedsReview: gc.NeedsReview, Missing: gc.MissingPositions}
			for _, d := range gc.Diplotypes {
				got.Diplotypes = append(got.Diplotypes, d.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.named != "" && !strings.Contains(strings.Join(gc.Notes, "\n"), tc.named) {
				t.Errorf("notes %q do not name %q", gc.Notes, tc.named)
			}
			if tc.want.NeedsReview && len(tc.obs[0].GT) == 2 && tc.obs[0].GT[1] == 1 && len(gc.Uninterpreted) == 0 {
				t.Errorf("a withheld variant is not listed as uninterpreted")
			}
		})
	}
}

// TestPhaseSetsNeverCrossed: two heterozygous UGT1A1 sites phased in trans
// within one phase set give the phased diplotype; in two sets, or one
// unphased, the gene is read as unphased.
func TestPhaseSetsNeverCrossed(t *testing.T) {
	k := caller(t)
	obs := func(ps80, psTA string, phased bool) []calling.PositionObservation {
		return []calling.PositionObservation{
			{Chrom: "chr2", Pos: 233759924, Ref: "C", Alts: []string{"T"}, GT: []int{0, 1}, Phased: phased, PhaseSet: ps80, Source: "a"},
			{Chrom: "chr2", Pos: 233760233, Ref: "CAT", Alts: []string{"CATAT"}, GT: []int{1, 0}, Phased: phased, PhaseSet: psTA, Source: "b"},
			{Chrom: "chr2", Pos: 233760498, Ref: "G", Alts: []string{"A"}, GT: []int{0, 0}, Source: "c"},
			{Chrom: "chr2", Pos: 233760973, Ref: "C", Alts: []string{"A"}, GT: []int{0, 0}, Source: "d"},
		}
	}
	tests := []struct {
		name       string
		obs        []calling.PositionObservation
		want       []string
		wantPhased bool
	}{
		{"one set", obs("PS 1", "PS 1", true), []string{"*28/*80"}, true},
		{"the default set", obs("", "", true), []string{"*28/*80"}, true},
		{"two sets", obs("PS 1", "PS 2", true), []string{"*1/*80+*28"}, false},
		{"default set and a PS", obs("", "PS 2", true), []string{"*1/*80+*28"}, false},
		{"unphased", obs("", "", false), []string{"*1/*80+*28"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := k.CallSample(tc.obs, calling.CallOptions{Genes: []string{"UGT1A1"}})
			gc := sc.Gene("UGT1A1")
			var got []string
			for _, d := range gc.Diplotypes {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || gc.Phased != tc.wantPhased {
				t.Errorf("diplotypes (-want +got):\n%s phased %v, want %v; notes %q", diff, gc.Phased, tc.wantPhased, gc.Notes)
			}
		})
	}
}

// TestReferenceSeenThroughIUPACCell: CYP2D6's reference allele *1 has
// IUPAC cells (R at rs150163869, S at rs1058164); a sample with the
// GRCh38 base at every position shows the reference there, so *1/*1 fits
// (it failed as "no pair explains the genotypes" when the observed base
// was compared as if it were the cell).
func TestReferenceSeenThroughIUPACCell(t *testing.T) {
	k := caller(t)
	def, _ := k.Definition("CYP2D6")
	var obs []calling.PositionObservation
	for _, p := range def.Positions {
		obs = append(obs, calling.PositionObservation{Chrom: def.Chromosome, Pos: p.Pos, Ref: p.Ref, GT: []int{0, 0}, Source: "ref"})
	}
	sc := k.CallSample(obs, calling.CallOptions{Genes: []string{"CYP2D6"}})
	gc := sc.Gene("CYP2D6")
	all := strings.Join(append(append([]string(nil), gc.Notes...), gc.Uninterpreted...), "\n")
	if strings.Contains(all, "no pair of CYP2D6 alleles") || !strings.Contains(all+strings.Join(gc.Source, " "), "*1/*1") {
		t.Errorf("an all-GRCh38 CYP2D6 does not read *1/*1: status %s, diplotypes %v, notes and review:\n%s", gc.Status, gc.Diplotypes, all)
	}
}
