package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestFailSafeEveryGene walks every gene with an allele definition and
// sends, in turn, each kind of input the engine cannot fully interpret: an
// undocumented base at a defining position, a no-call at a defining
// position of a tested gene, a variant inside the gene at a position no
// definition uses, and an rsID with an allele no definition has. None may
// read as a normal phenotype; the gene must be marked for review naming
// the input, and a drug of the gene must get a "could not interpret —
// review" alert (never "no change needed" and never only "order a test").
func TestFailSafeEveryGene(t *testing.T) {
	k := kb(t)
	drugOf := map[string]string{}
	for _, r := range k.Recommendations {
		for _, g := range r.Genes {
			if _, ok := drugOf[g]; !ok && len(r.Genes) == 1 {
				drugOf[g] = r.Drug
			}
		}
	}
	for _, gene := range k.Caller().DefinitionGenes() {
		d, _ := k.Caller().Definition(gene)
		p, free := undocumentedBase(d)
		if p == nil {
			t.Errorf("%s: no SNV position with an unused base to test", gene)
			continue
		}
		// The no-call probe sits on an AMP tier-1 position where the gene
		// has them: a no-call elsewhere leaves the gene called with the
		// untested alleles named (TestTier1MissingPositions).
		first := d.Positions[0]
		if len(d.Tier1Positions) > 0 {
			for _, dp := range d.Positions {
				if dp.Pos == d.Tier1Positions[0] {
					first = dp
				}
			}
		}
		inside := d.Positions[0].Pos + 1
		for _, dp := range d.Positions {
			if dp.Pos == inside {
				inside++
			}
		}
		type probe struct {
			name string
			req  engine.Request
			says string
		}
		probes := []probe{
			{"undocumented base", engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Alt: free, Genotype: "0/1"}}}, free},
			{"no-call at a defining position", engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: first.Pos, Ref: first.Ref, Alt: strings.Join(first.Alts, ","), Genotype: "./."}}}, fmt.Sprint(first.Pos)},
		}
		// A gene defined at one position (ABCG2, IFNL3, VKORC1) has no
		// extent the knowledge can vouch for.
		if len(d.Positions) > 1 {
			probes = append(probes, probe{"variant at no defining position", engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: inside, Ref: "A", Alt: "G", Genotype: "0/1"}}}, fmt.Sprint(inside)})
		}
		if p.RsID != "" {
			probes = append(probes, probe{"rsID with an undefined allele", engine.Request{GenesTested: []string{gene},
				Variants: []string{p.RsID + ":" + free}, Zygosity: map[string]engine.Zygosity{p.RsID: engine.Het}}, p.RsID})
		}
		for _, pr := range probes {
			req := pr.req
			req.Drug = drugOf[gene]
			if req.Drug == "" {
				req.Drug = "warfarin"
			}
			if err := k.Caller().Validate(req); err != nil {
				t.Errorf("%s %s: refused: %v", gene, pr.name, err)
				continue
			}
			gt := k.Caller().InterpretGenotype(req)
			gg := gt.Genes[gene]
			if gg == nil || len(gg.Review) == 0 {
				t.Errorf("%s %s: not marked for review: %+v", gene, pr.name, gg)
				continue
			}
			if !strings.Contains(strings.Join(gg.Review, " "), pr.says) {
				t.Errorf("%s %s: review %q does not name %q", gene, pr.name, gg.Review, pr.says)
			}
			for _, d := range gg.Diplotypes {
				if strings.HasPrefix(d.Call.Phenotype, "Normal") || d.Call.Phenotype == "" {
					t.Errorf("%s %s: diplotype %v (%q) given despite review", gene, pr.name, d.Alleles, d.Call.Phenotype)
				}
			}
			res, err := k.Evaluate(req)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Genotype {
				if c.Gene == gene && strings.HasPrefix(c.Phenotype, "Normal") {
					t.Errorf("%s %s: genotype %+v reads as a result", gene, pr.name, c)
				}
			}
			if drugOf[gene] == "" {
				continue
			}
			found := false
			for _, a := range res.Alerts {
				if a.Gene == gene && strings.Contains(a.Message, "Could not interpret") {
					found = true
					if a.TestRecommended {
						t.Errorf("%s %s: the review alert only asks for a test", gene, pr.name)
					}
				}
			}
			if !found {
				t.Errorf("%s %s (%s): no review alert; overall %s, alerts %+v", gene, pr.name, req.Drug, res.OverallSeverity, res.Alerts)
			}
		}
	}
}

// undocumentedBase finds an SNV defining position and a base no allele
// definition uses there.
func undocumentedBase(d *engine.GeneDefinition) (*engine.DefinedPosition, string) {
	used := map[int]string{}
	for _, a := range d.Alleles {
		for _, c := range a.Cells {
			used[c.Pos] += c.Allele
		}
	}
	iupac := map[byte]string{'R': "AG", 'Y': "CT", 'S': "CG", 'W': "AT", 'K': "GT", 'M': "AC", 'B': "CGT", 'D': "AGT", 'H': "ACT", 'V': "ACG", 'N': "ACGT"}
	for i := range d.Positions {
		p := &d.Positions[i]
		if len(p.Ref) != 1 {
			continue
		}
		u := used[p.Pos]
		for c := range iupac {
			if strings.IndexByte(u, c) >= 0 {
				u += iupac[c]
			}
		}
		for _, b := range []string{"A", "C", "G", "T"} {
			if !strings.Contains(u, b) {
				return p, b
			}
		}
	}
	return nil, ""
}

// TestSLCO1B1Fallback: when no SLCO1B1 star-allele pair explains the
// genotypes, the phenotype comes from rs4149056 alone (PharmCAT), the
// actionable answer stands, and the unexplained genotype is named for
// review beside it.
func TestSLCO1B1Fallback(t *testing.T) {
	k := kb(t)
	res, err := k.Evaluate(engine.Request{Drug: "simvastatin", GenesTested: []string{"SLCO1B1"}, Calls: []engine.PositionCall{
		{Chrom: "chr12", Pos: 21176879, Ref: "C", Alt: "A", Genotype: "1/1"},
		{Chrom: "chr12", Pos: 21178615, Ref: "T", Alt: "C", Genotype: "1/1"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range res.Genotype {
		got = append(got, g.Gene+" "+g.Diplotype+" "+g.Phenotype)
	}
	if len(got) != 1 || got[0] != "SLCO1B1 *5/*5 Poor Function" {
		t.Fatalf("genotype %v, want SLCO1B1 *5/*5 Poor Function", got)
	}
	var high, review bool
	for _, a := range res.Alerts {
		high = high || (a.Gene == "SLCO1B1" && a.Severity == engine.SeverityHigh)
		review = review || (a.Gene == "SLCO1B1" && strings.Contains(a.Message, "Could not interpret") && strings.Contains(a.Message, "fit no defined allele pair"))
	}
	if !high || !review {
		t.Errorf("want the HIGH simvastatin alert and a review alert; got %+v", res.Alerts)
	}
}
