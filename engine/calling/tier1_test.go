package calling_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// callGene calls one gene of obs.
func callGene(c *calling.Caller, obs []calling.PositionObservation, opt calling.CallOptions) *calling.GeneCall {
	sc := c.CallSample(obs, opt)
	return sc.Gene(opt.Genes[0])
}

// refObs is a homozygous reference observation at every position of d
// that keep accepts.
func refObs(d *engine.GeneDefinition, keep func(pos int) bool) []calling.PositionObservation {
	var obs []calling.PositionObservation
	for _, p := range d.Positions {
		if p.Ignored || !keep(p.Pos) {
			continue
		}
		obs = append(obs, calling.PositionObservation{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Alts: p.Alts, GT: []int{0, 0}, Source: fmt.Sprint(p.Pos)})
	}
	return obs
}

// TestTier1MissingPositions: for every gene with AMP tier-1 lists, the
// tier-1 positions called as reference and the others missing name the
// untested alleles, and the reading — what the reference would give — is a
// review naming it and them: a normal reading never rests on positions
// that were not seen (TestTier1Readings: a non-normal reading with untested
// alleles is called). One tier-1 position missing gives a review naming it.
func TestTier1MissingPositions(t *testing.T) {
	c := caller(t)
	n := 0
	for _, g := range c.DefinitionGenes() {
		d, _ := c.Definition(g)
		if len(d.Tier1Positions) == 0 {
			continue
		}
		n++
		tier1 := func(pos int) bool { return slices.Contains(d.Tier1Positions, pos) }
		t.Run(g+" tier-1 called", func(t *testing.T) {
			gc := callGene(c, refObs(d, tier1), calling.CallOptions{Genes: []string{g}})
			if gc == nil {
				t.Fatal("no call")
			}
			if len(d.Positions) == len(d.Tier1Positions) {
				// Every position is tier-1 (VKORC1): nothing is untested.
				if gc.Status != calling.CallCalled || gc.NeedsReview || len(gc.UntestedAlleles) > 0 {
					t.Fatalf("status %s review %v untested %v uninterpreted %v", gc.Status, gc.NeedsReview, gc.UntestedAlleles, gc.Uninterpreted)
				}
				return
			}
			if gc.Status != calling.CallCalled || !gc.NeedsReview || len(gc.Diplotypes) == 0 {
				t.Fatalf("status %s review %v diplotypes %v uninterpreted %v", gc.Status, gc.NeedsReview, gc.Diplotypes, gc.Uninterpreted)
			}
			if len(gc.UntestedAlleles) == 0 {
				t.Fatalf("%d positions missing but no untested alleles named", len(gc.MissingPositions))
			}
			u := strings.Join(gc.Uninterpreted, " ")
			if !strings.Contains(u, "("+gc.Diplotypes[0].String()+") with every AMP tier-1 position called") ||
				!strings.Contains(u, fmt.Sprintf("%d allele(s) defined at positions that were not called", len(gc.UntestedAlleles))) ||
				!strings.Contains(u, gc.UntestedAlleles[0]) || !strings.Contains(u, "a normal reading cannot rest on them") {
				t.Errorf("review %q does not name the reading and the untested alleles", gc.Uninterpreted)
			}
			for _, a := range d.Tier1Alleles {
				if slices.Contains(gc.UntestedAlleles, a) {
					t.Errorf("tier-1 allele %s named untested", a)
				}
			}
		})
		t.Run(g+" one tier-1 position missing", func(t *testing.T) {
			skip := d.Tier1Positions[len(d.Tier1Positions)-1]
			obs := refObs(d, func(pos int) bool { return pos != skip })
			if len(obs) == 0 {
				// A one-position gene (VKORC1): nothing is observed.
				gc := callGene(c, obs, calling.CallOptions{Genes: []string{g}, ReportUntouched: true})
				if gc == nil || gc.Status != calling.CallNoData {
					t.Fatalf("want no data, got %+v", gc)
				}
				return
			}
			gc := callGene(c, obs, calling.CallOptions{Genes: []string{g}})
			if gc == nil || !gc.NeedsReview {
				t.Fatalf("not marked for review: %+v", gc)
			}
			if u := strings.Join(gc.Uninterpreted, " "); !strings.Contains(u, fmt.Sprint(skip)) || !strings.Contains(u, "AMP tier-1") {
				t.Errorf("review %q does not name tier-1 position %d", gc.Uninterpreted, skip)
			}
			if len(gc.UntestedAlleles) > 0 {
				t.Errorf("untested alleles %v named beside a tier-1 review", gc.UntestedAlleles)
			}
		})
	}
	if n != 9 {
		t.Errorf("%d genes with tier-1 lists, want 9", n)
	}
}

// TestTier1Readings: the reading with tier-1 positions called is the
// best-scoring diplotype among the alleles that can be assessed, called
// with the untested alleles named when it is not normal and a review when
// it is what the reference would give; a gene
// without tier-1 lists keeps the review for a reference-like reading with
// positions missing.
func TestTier1Readings(t *testing.T) {
	c := caller(t)
	type want struct {
		Status, Diplotypes string
		Review, Untested   bool
	}
	tests := []struct {
		name, gene string
		alt        map[int][]int // position → GT (other kept positions 0/0)
		keepAll    bool
		want       want
	}{
		{name: "TPMT *3A carrier, tier-1 only", gene: "TPMT", alt: map[int][]int{18130687: {0, 1}, 18138997: {0, 1}},
			want: want{calling.CallCalled, "*1/*3A", false, true}},
		{name: "TPMT reference, tier-1 only: a normal reading with untested alleles", gene: "TPMT", alt: map[int][]int{},
			want: want{calling.CallCalled, "*1/*1", true, true}},
		{name: "CYP3A5 *3/*3, tier-1 only", gene: "CYP3A5", alt: map[int][]int{99672916: {1, 1}},
			want: want{calling.CallCalled, "*3/*3", false, true}},
		{name: "CYP2B6 (no tier-1 lists) reference with positions missing", gene: "CYP2B6", alt: map[int][]int{},
			want: want{calling.CallCalled, "*1/*1", true, true}},
		{name: "CYP2D6 all reference, every position", gene: "CYP2D6", keepAll: true,
			want: want{calling.CallProvisional, "*1/*1", true, false}},
		{name: "CYP2D6 *4/*4, every position", gene: "CYP2D6", keepAll: true, alt: map[int][]int{42128945: {1, 1}},
			want: want{calling.CallCalled, "*4/*4", false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := c.Definition(tc.gene)
			keep := func(pos int) bool { return tc.keepAll || slices.Contains(d.Tier1Positions, pos) }
			if len(d.Tier1Positions) == 0 && !tc.keepAll {
				keep = func(pos int) bool { return pos != d.Positions[0].Pos }
			}
			obs := refObs(d, keep)
			for i := range obs {
				if gt, ok := tc.alt[obs[i].Pos]; ok {
					obs[i].GT = gt
				}
			}
			gc := callGene(c, obs, calling.CallOptions{Genes: []string{tc.gene}})
			var ds []string
			for _, dp := range gc.Diplotypes {
				ds = append(ds, dp.String())
			}
			got := want{gc.Status, strings.Join(ds, " "), gc.NeedsReview, len(gc.UntestedAlleles) > 0}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nuninterpreted %v notes %v", diff, gc.Uninterpreted, gc.Notes)
			}
			if tc.gene == "CYP2D6" {
				for _, dp := range gc.Diplotypes {
					if gc.Status == calling.CallProvisional && dp.Call.Phenotype != "" {
						t.Errorf("provisional %s has phenotype %q", dp, dp.Call.Phenotype)
					}
				}
				if gc.Status == calling.CallProvisional && !strings.Contains(strings.Join(gc.Uninterpreted, " "), "copy-number call") {
					t.Errorf("provisional CYP2D6 does not ask for copy number: %v", gc.Uninterpreted)
				}
			}
		})
	}
}
