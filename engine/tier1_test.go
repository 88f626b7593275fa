package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// tier1Calls writes homozygous reference position calls at the positions
// of gene that keep accepts.
func tier1Calls(t *testing.T, gene string, keep func(engine.DefinedPosition) bool) []engine.PositionCall {
	t.Helper()
	d, ok := kb(t).Caller().Definition(gene)
	if !ok {
		t.Fatalf("no definition for %s", gene)
	}
	var calls []engine.PositionCall
	for _, p := range d.Positions {
		if !p.Ignored && keep(p) {
			calls = append(calls, engine.PositionCall{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Alt: strings.Join(p.Alts, ","), Genotype: "0/0"})
		}
	}
	return calls
}

func reviewAlert(res engine.Result, gene, says string) bool {
	for _, a := range res.Alerts {
		if a.Gene == gene && a.Category == engine.CategoryUnknown && strings.Contains(a.Message, "Could not interpret") && strings.Contains(a.Message, says) {
			return true
		}
	}
	return false
}

// TestTier1RequestForms: the AMP tier-1 rule through /pgx/check's forms,
// both ways. CYP2C19 with its tier-1 positions called (position calls, or
// rsIDs with zygosity) and the others absent: a *2 carrier (*2/*38) is
// called and the genotype names the untested alleles; the all-reference
// reading (Normal Metabolizer) is a review naming the reading and the
// untested alleles — a normal reading never rests on positions that were
// not seen. One tier-1 position left out is a review naming it. CYP2D6
// called at every position is provisional: no phenotype, no reassurance
// for codeine or tramadol.
func TestTier1RequestForms(t *testing.T) {
	d, _ := kb(t).Caller().Definition("CYP2C19")
	isTier1 := func(p engine.DefinedPosition) bool { return slices.Contains(d.Tier1Positions, p.Pos) }
	last := d.Tier1Positions[len(d.Tier1Positions)-1]
	// *2 against the *38 background at the tier-1 positions: rs12769205,
	// rs4244285 and rs3758581 heterozygous.
	star2 := map[string]bool{"rs12769205": true, "rs4244285": true, "rs3758581": true}
	forms := func(carrier bool) []struct {
		name string
		req  engine.Request
	} {
		calls := tier1Calls(t, "CYP2C19", isTier1)
		var rsids []string
		zyg := map[string]engine.Zygosity{}
		for _, p := range d.Positions {
			if !isTier1(p) {
				continue
			}
			rsids = append(rsids, p.RsID)
			zyg[p.RsID] = engine.Ref
			if carrier && star2[p.RsID] {
				zyg[p.RsID] = engine.Het
				for i := range calls {
					if calls[i].Pos == p.Pos {
						calls[i].Genotype = "0/1"
					}
				}
			}
		}
		return []struct {
			name string
			req  engine.Request
		}{
			{"position calls", engine.Request{Calls: calls}},
			{"rsIDs with zygosity", engine.Request{Variants: rsids, Zygosity: zyg}},
		}
	}
	cyp2c19 := func(res engine.Result) []engine.GenotypeCall {
		var got []engine.GenotypeCall
		for _, g := range res.Genotype {
			if g.Gene == "CYP2C19" {
				got = append(got, g)
			}
		}
		return got
	}
	for _, tc := range forms(true) {
		t.Run("CYP2C19 *2 carrier, tier-1 called, "+tc.name, func(t *testing.T) {
			req := tc.req
			req.Drug, req.Indication = "clopidogrel", "PCI"
			res := check(t, req)
			if reviewAlert(res, "CYP2C19", "") {
				t.Errorf("review alert although every tier-1 position was called and the reading is not normal: %+v", res.Alerts)
			}
			got := cyp2c19(res)
			if len(got) != 1 || got[0].Diplotype != "*2/*38" || got[0].Phenotype != "Intermediate Metabolizer" || len(got[0].UntestedAlleles) == 0 {
				t.Fatalf("CYP2C19 genotype %+v, want *2/*38 Intermediate Metabolizer with the untested alleles named", got)
			}
			for _, a := range []string{"*2", "*3", "*17"} {
				if slices.Contains(got[0].UntestedAlleles, a) {
					t.Errorf("tier-1 allele %s named untested", a)
				}
			}
		})
	}
	for _, tc := range forms(false) {
		t.Run("CYP2C19 reference, tier-1 called, "+tc.name, func(t *testing.T) {
			req := tc.req
			req.Drug, req.Indication = "clopidogrel", "PCI"
			res := check(t, req)
			if !reviewAlert(res, "CYP2C19", "reads Normal Metabolizer (*38/*38) with every AMP tier-1 position called") ||
				!reviewAlert(res, "CYP2C19", "could not be assessed (*16, *30, *34): a normal reading cannot rest on them") {
				t.Errorf("no review naming the normal reading and the untested alleles: %+v", res.Alerts)
			}
			for _, g := range cyp2c19(res) {
				if strings.HasPrefix(g.Phenotype, "Normal") || g.Phenotype == "" {
					t.Errorf("CYP2C19 reads %s %q", g.Diplotype, g.Phenotype)
				}
			}
			for _, a := range confirmed(res) {
				if a.Gene == "CYP2C19" {
					t.Errorf("confirmed CYP2C19 alert from a normal reading with untested alleles: %+v", a)
				}
			}
		})
	}
	t.Run("CYP2C19 one tier-1 position missing", func(t *testing.T) {
		res := check(t, engine.Request{Drug: "clopidogrel", Indication: "PCI",
			Calls: tier1Calls(t, "CYP2C19", func(p engine.DefinedPosition) bool { return isTier1(p) && p.Pos != last })})
		if !reviewAlert(res, "CYP2C19", "AMP tier-1") || !reviewAlert(res, "CYP2C19", "rs3758581") {
			t.Errorf("no review naming the missing tier-1 position %d: %+v", last, res.Alerts)
		}
		for _, g := range res.Genotype {
			if g.Gene == "CYP2C19" && strings.HasPrefix(g.Phenotype, "Normal") {
				t.Errorf("CYP2C19 reads %s", g.Phenotype)
			}
		}
	})
	all := func(engine.DefinedPosition) bool { return true }
	for _, drug := range []string{"codeine", "tramadol"} {
		t.Run("CYP2D6 all reference, "+drug, func(t *testing.T) {
			res := check(t, engine.Request{Drug: drug, Calls: tier1Calls(t, "CYP2D6", all)})
			for _, g := range res.Genotype {
				if g.Gene == "CYP2D6" && g.Phenotype != "Could not interpret — review" {
					t.Errorf("CYP2D6 genotype %+v", g)
				}
			}
			if len(confirmed(res)) > 0 {
				t.Errorf("confirmed alerts from a provisional CYP2D6: %+v", confirmed(res))
			}
			if !reviewAlert(res, "CYP2D6", "*1/*1 (provisional)") || !reviewAlert(res, "CYP2D6", "copy-number call") {
				t.Errorf("no CYP2D6 review naming the provisional *1/*1 and asking for copy number: %+v", res.Alerts)
			}
			for _, a := range res.Alerts {
				if strings.Contains(strings.ToLower(a.Message), "normal metabolizer") {
					t.Errorf("alert reads normal: %s", a.Message)
				}
			}
		})
	}
}
