package engine_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
)

// This file is the evidence ledger's property test (DESIGN.md §3,
// "Evidence ledger" and "Fail-safe, both ways"): over every gene with an
// allele definition, each kind of evidence fault that hand-entered input
// can produce is tried, and the answer is never a normal reading, never
// "no change needed" without a review naming the fault, and never an
// answer at all when the fault is a wrong build (422). Each fault has its
// clean twin, which must be called without a review: a review where the
// evidence decides is a defect too.
//
// Fault kinds here (hand-entered input):
//   - conflict: a diplotype plus a variant of the same gene that
//     contradicts it, or two items stating different genotypes at one
//     position;
//   - unplaceable: a non-reference call/HGVS item on the gene's
//     chromosome that no definition position takes (a GRCh37 coordinate),
//     or an rsID no definition or panel row knows, with the gene listed
//     as tested or given as a diplotype;
//   - wrong build: an HGVS item on the GRCh37 RefSeq accession, and a call
//     whose REF is not the GRCh38 base at a definition position (422).
//
// Kinds left for the other parts of issue 20 to add as rows of
// ledgerFaults: low quality (GQ/DP under threshold), non-PASS FILTER,
// missing AMP tier-1 position, phase across phase sets (VCF and gVCF
// evidence; AMP tier-1 rule).

// ledgerProbe is one fault and its clean twin for one gene.
type ledgerProbe struct {
	kind         string
	fault, clean engine.Request
	// says is text the review (or the 422) must contain.
	says string
	// refused: the fault must be a 422, not an answer.
	refused bool
}

// ledgerSite is a defining SNV position with an rsID where the gene's
// default allele has the reference base and some allele an alternate one.
type ledgerSite struct {
	p   engine.DefinedPosition
	alt string
}

func ledgerSiteOf(d *engine.GeneDefinition, defaultAllele string) (ledgerSite, bool) {
	defCells := map[int]string{}
	for _, a := range d.Alleles {
		if a.Name == defaultAllele {
			for _, c := range a.Cells {
				defCells[c.Pos] = c.Allele
			}
		}
	}
	for _, p := range d.Positions {
		if p.Ignored || p.RsID == "" || len(p.Ref) != 1 {
			continue
		}
		if c, ok := defCells[p.Pos]; ok && c != p.Ref {
			continue
		}
		for _, a := range p.Alts {
			if len(a) == 1 && strings.Contains("ACGT", a) {
				return ledgerSite{p, a}, true
			}
		}
	}
	return ledgerSite{}, false
}

// grch37Accession is the accession one version below GRCh38's (NCBI
// GRCh37.p13, GCF_000001405.25), or "" for the mitochondrion (the rCRS
// accession is the same in both builds).
func grch37Accession(grch38 string) string {
	base, v, ok := strings.Cut(grch38, ".")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || strings.HasPrefix(base, "NC_012920") {
		return ""
	}
	return fmt.Sprintf("%s.%d", base, n-1)
}

// farPosition is a position on the gene's chromosome that no definition
// uses and no gene's defined span covers (2 Mb off the gene, as a GRCh37
// coordinate of a GRCh38 gene can be).
func farPosition(k *evaluate.Engine, d *engine.GeneDefinition) int {
	for _, off := range []int{-2_000_000, 2_000_000, -5_000_000, 5_000_000} {
		pos := d.Positions[0].Pos + off
		if pos <= 0 || k.Caller().IsDefinitionPosition(d.Chromosome, pos) {
			continue
		}
		inside := false
		for _, g := range k.Caller().DefinitionGenes() {
			o, _ := k.Caller().Definition(g)
			if o.Chromosome == d.Chromosome && pos >= o.Positions[0].Pos && pos <= o.Positions[len(o.Positions)-1].Pos {
				inside = true
			}
		}
		if !inside {
			return pos
		}
	}
	return 0
}

func ledgerFaults(t *testing.T, k *evaluate.Engine, gene string) []ledgerProbe {
	d, _ := k.Caller().Definition(gene)
	g, _ := k.Gene(gene)
	def := g.DefaultAllele
	if def == "" {
		def = d.Alleles[0].Name
	}
	diplotype := def + "/" + def
	if d.Chromosome == "chrM" {
		diplotype = def
	}
	var out []ledgerProbe
	if s, ok := ledgerSiteOf(d, def); ok {
		out = append(out, ledgerProbe{
			kind: "conflict",
			fault: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Variants: []string{s.p.RsID + ":" + s.alt},
				Zygosity: map[string]engine.Zygosity{s.p.RsID: engine.Hom}},
			clean: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Variants: []string{s.p.RsID},
				Zygosity: map[string]engine.Zygosity{s.p.RsID: engine.Ref}},
			says: "conflicting evidence: diplotypes." + gene,
		}, ledgerProbe{
			kind: "conflict (call)",
			fault: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: s.p.Ref, Alt: s.alt, Genotype: "0/1"}}},
			clean: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: s.p.Ref, Alt: s.alt, Genotype: "0/0"}}},
			says: "calls[0]",
		})
		out = append(out, ledgerProbe{
			kind: "conflict between two items at a position",
			fault: engine.Request{GenesTested: []string{gene}, Variants: []string{s.p.RsID + ":" + s.alt},
				Zygosity: map[string]engine.Zygosity{s.p.RsID: engine.Hom},
				Calls:    []engine.PositionCall{{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: s.p.Ref, Alt: s.alt, Genotype: "0/0"}}},
			clean: engine.Request{GenesTested: []string{gene}, Variants: []string{s.p.RsID},
				Zygosity: map[string]engine.Zygosity{s.p.RsID: engine.Ref},
				Calls:    []engine.PositionCall{{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: s.p.Ref, Alt: s.alt, Genotype: "0/0"}}},
			says: fmt.Sprintf("conflicting evidence at %s:%d", d.Chromosome, s.p.Pos),
		})
		wrong := map[string]string{"A": "C", "C": "G", "G": "T", "T": "A"}[s.p.Ref]
		out = append(out, ledgerProbe{
			kind: "wrong build (call REF)", refused: true,
			fault: engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: wrong, Alt: s.alt, Genotype: "0/1"}}},
			clean: engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: s.p.Pos, Ref: s.p.Ref, Alt: s.alt, Genotype: "0/0"}}},
			says: "GRCh37",
		})
		if acc := grch37Accession(d.RefSeq); acc != "" {
			out = append(out, ledgerProbe{
				kind: "wrong build (HGVS accession)", refused: true,
				fault: engine.Request{GenesTested: []string{gene}, Variants: []string{fmt.Sprintf("%s:g.%d%s>%s", acc, s.p.Pos, s.p.Ref, s.alt)}},
				clean: engine.Request{GenesTested: []string{gene}, Variants: []string{fmt.Sprintf("%s:g.%d%s>%s", d.RefSeq, s.p.Pos, s.p.Ref, s.alt)},
					Zygosity: map[string]engine.Zygosity{fmt.Sprintf("%s:g.%d%s>%s", d.RefSeq, s.p.Pos, s.p.Ref, s.alt): engine.Ref}},
				says: "looks like GRCh37 (" + acc + ")",
			})
		}
	} else {
		t.Errorf("%s: no defining SNV where the default allele %s is reference, to probe a conflict", gene, def)
	}
	out = append(out, ledgerProbe{
		kind:  "unknown rsID in a tested gene",
		fault: engine.Request{GenesTested: []string{gene}, Variants: []string{"rs999999999"}},
		clean: engine.Request{GenesTested: []string{gene}},
		says:  "rs999999999",
	}, ledgerProbe{
		kind:  "unknown rsID beside a diplotype",
		fault: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Variants: []string{"rs999999999"}},
		clean: engine.Request{Diplotypes: map[string]string{gene: diplotype}},
		says:  "rs999999999",
	})
	if pos := farPosition(k, d); pos > 0 {
		out = append(out, ledgerProbe{
			kind: "unplaceable call in a tested gene",
			fault: engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: pos, Ref: "N", Alt: "A", Genotype: "1/1"}}},
			clean: engine.Request{GenesTested: []string{gene}, Calls: []engine.PositionCall{
				{Chrom: d.Chromosome, Pos: pos, Ref: "N", Alt: "A", Genotype: "0/0"}}},
			says: fmt.Sprintf("%s:%d", d.Chromosome, pos),
		}, ledgerProbe{
			kind:  "unplaceable call beside a diplotype",
			fault: engine.Request{Diplotypes: map[string]string{gene: diplotype}, Variants: []string{fmt.Sprintf("%s:g.%dA>G", d.RefSeq, pos)}},
			clean: engine.Request{Diplotypes: map[string]string{gene: diplotype}},
			says:  fmt.Sprintf("%s:g.%dA>G", d.RefSeq, pos),
		})
	}
	return out
}

// TestEvidenceLedgerEveryGene is the property test of issue 20 over every
// gene with an allele definition.
func TestEvidenceLedgerEveryGene(t *testing.T) {
	k := kb(t)
	drugOf := map[string]string{}
	for _, r := range k.Recommendations {
		if len(r.Genes) == 1 && drugOf[r.Genes[0]] == "" {
			drugOf[r.Genes[0]] = r.Drug
		}
	}
	for _, gene := range k.Caller().DefinitionGenes() {
		for _, pr := range ledgerFaults(t, k, gene) {
			drug := drugOf[gene]
			if drug == "" {
				drug = "warfarin"
			}
			pr.fault.Drug, pr.clean.Drug = drug, drug
			name := gene + " " + pr.kind
			t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				// The clean twin is called, without a review.
				clean, err := k.Evaluate(pr.clean)
				res := clean
				if err != nil {
					t.Fatalf("clean: refused: %v", err)
				}
				// Every clean item is used, or (a reference call where no
				// allele is defined) not placeable without sending a gene
				// to review.
				for _, e := range clean.Evidence {
					if e.State == engine.EvidenceConflicting || e.State == engine.EvidenceNotPlaceable && len(e.Genes) > 0 {
						t.Errorf("clean: %s %q is %s: %s", e.Field, e.Item, e.State, e.Reason)
					}
				}
				// CYP2D6 from position data is provisional (copy number
				// is not in position data; a rule of its own, not an
				// evidence fault): the clean twin is the provisional
				// reading, and its only review is the copy-number one.
				provisional := gene == "CYP2D6" && len(pr.clean.Diplotypes) == 0
				if provisional {
					gg := k.Caller().InterpretGenotype(pr.clean).Genes[gene]
					if gg == nil || len(gg.Review) != 1 || !strings.HasPrefix(gg.Review[0], "CYP2D6 from position data: the SNV and indel alleles read ") ||
						!strings.Contains(gg.Review[0], "(provisional)") || !strings.Contains(gg.Review[0], "a CYP2D6 copy-number call (an outside call) is needed") {
						t.Errorf("clean: CYP2D6 from position data is not the provisional reading with only the copy-number review: %+v", gg)
					}
				}
				for _, a := range res.Alerts {
					if a.Gene == gene && strings.Contains(a.Message, "Could not interpret") &&
						!(provisional && strings.Contains(a.Message, "CYP2D6 from position data: the SNV and indel alleles read ")) {
						t.Errorf("clean: review where the evidence decides: %s", a.Message)
					}
				}
				called := false
				for _, c := range res.Genotype {
					called = called || (c.Gene == gene && reading(c))
				}
				switch {
				case len(pr.clean.Diplotypes) > 0:
					// Evidence that agrees with a diplotype leaves its
					// reading as the diplotype alone gives it (IFNL3 and
					// CYP4F2 diplotypes have no CPIC phenotype to give).
					alone, err := k.Evaluate(engine.Request{Drug: pr.clean.Drug, Diplotypes: pr.clean.Diplotypes})
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(genotypeOf(alone, gene), genotypeOf(res, gene)); diff != "" {
						t.Errorf("clean: agreeing evidence changed the diplotype's reading (-alone +with evidence):\n%s", diff)
					}
				case !called && gene != "CYP2D6":
					t.Errorf("clean: %s not called: %+v", gene, res.Genotype)
				}

				res, err = k.Evaluate(pr.fault)
				if pr.refused {
					if err == nil || !strings.Contains(err.Error(), pr.says) {
						t.Errorf("fault: want a 422 saying %q, got %v (overall %s)", pr.says, err, res.OverallSeverity)
					}
					return
				}
				if err != nil {
					t.Fatalf("fault: refused: %v", err)
				}
				// The ledger names the faulty item: conflicting, or not
				// placeable with the tested gene it sent to review.
				named := false
				for _, e := range res.Evidence {
					named = named || e.State == engine.EvidenceConflicting && slices.Contains(e.Genes, gene) ||
						e.State == engine.EvidenceNotPlaceable && slices.Contains(e.Genes, gene)
				}
				if !named {
					t.Errorf("fault: no evidence item is conflicting or not placeable in %s: %+v", gene, res.Evidence)
				}
				// A fault never reads as the clean twin does, nor as normal;
				// an actionable reading may stand beside the review (a
				// conflict's non-reference side: withholding it would
				// answer with the more reassuring reading).
				cleanReadings := map[string]bool{}
				for _, c := range clean.Genotype {
					if c.Gene == gene && reading(c) {
						cleanReadings[c.Diplotype+" "+c.Phenotype] = true
					}
				}
				for _, c := range res.Genotype {
					if c.Gene == gene && reading(c) && (cleanReadings[c.Diplotype+" "+c.Phenotype] || strings.HasPrefix(c.Phenotype, "Normal") || c.Phenotype == "") {
						t.Errorf("fault: %s reads %s %q", gene, c.Diplotype, c.Phenotype)
					}
				}
				review := false
				for _, a := range res.Alerts {
					if a.Gene != gene {
						continue
					}
					if strings.Contains(a.Message, "Could not interpret") {
						review = true
						if !strings.Contains(a.Message, pr.says) {
							t.Errorf("fault: review does not name %q: %s", pr.says, a.Message)
						}
					}
				}
				if drugOf[gene] != "" && !review {
					t.Errorf("fault: no review alert; overall %s, alerts %+v", res.OverallSeverity, res.Alerts)
				}
				gt := k.Caller().InterpretGenotype(pr.fault)
				if gg := gt.Genes[gene]; gg == nil || len(gg.Review) == 0 || !strings.Contains(strings.Join(gg.Review, " "), pr.says) {
					t.Errorf("fault: gene not in review naming %q: %+v", pr.says, gg)
				}
			})
		}
	}
}

// reading reports whether a genotype entry is a reading: a diplotype or
// phenotype that is not the review or not-callable marker.
func reading(c engine.GenotypeCall) bool {
	if strings.HasPrefix(c.Phenotype, "Could not interpret") || c.Phenotype == "Not callable" {
		return false
	}
	return c.Diplotype != "" || c.Phenotype != ""
}

func genotypeOf(res engine.Result, gene string) []engine.GenotypeCall {
	var out []engine.GenotypeCall
	for _, c := range res.Genotype {
		if c.Gene == gene {
			out = append(out, c)
		}
	}
	return out
}

// TestEvidenceLedgerCases are the named cases, each with the state
// every input item ends in.
func TestEvidenceLedgerCases(t *testing.T) {
	k := kb(t)
	hom := map[string]engine.Zygosity{"rs3918290": engine.Hom}
	tests := []struct {
		name string
		req  engine.Request
		// want is the gene's genotype entries; review the text its review
		// alert must contain ("" for none); refused the text of a 422.
		want    []engine.GenotypeCall
		review  string
		refused string
		// ledger is the state of every input item: "field state genes".
		ledger []string
	}{
		{
			name:   "DPYD Reference/Reference beside *2A homozygous: conflicting",
			req:    engine.Request{Drug: "capecitabine", Diplotypes: map[string]string{"DPYD": "Reference/Reference"}, Variants: []string{"rs3918290"}, Zygosity: hom},
			want:   []engine.GenotypeCall{{Gene: "DPYD", Phenotype: "Could not interpret — review"}},
			review: "conflicting evidence: diplotypes.DPYD Reference/Reference says C/C at chr1:97450058, but rs3918290 says T/T",
			ledger: []string{"variants[0] conflicting [DPYD]", "diplotypes.DPYD conflicting [DPYD]"},
		},
		{
			name:   "DPYD *2A/*2A beside *2A homozygous: used",
			req:    engine.Request{Drug: "capecitabine", Diplotypes: map[string]string{"DPYD": "c.1905+1G>A (*2A)/c.1905+1G>A (*2A)"}, Variants: []string{"rs3918290"}, Zygosity: hom},
			want:   []engine.GenotypeCall{{Gene: "DPYD", Diplotype: "c.1905+1G>A (*2A)/c.1905+1G>A (*2A)", Phenotype: "Poor Metabolizer", ActivityScore: "0.0"}},
			ledger: []string{"variants[0] used [DPYD]", "diplotypes.DPYD used [DPYD]"},
		},
		{
			name: "CYP2C19 *2/*2 beside rs4244285 reference: conflicting (the reassuring side is not taken either)",
			req: engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Variants: []string{"rs4244285"},
				Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Ref}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review: "diplotypes.CYP2C19 *2/*2 says A/A at chr10:94781859, but rs4244285 says G/G",
			ledger: []string{"variants[0] conflicting [CYP2C19]", "diplotypes.CYP2C19 conflicting [CYP2C19]"},
		},
		{
			name:   "CYP2C19 *1/*2 beside a bare rs4244285 (at least one copy): used",
			req:    engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*2"}, Variants: []string{"rs4244285"}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Diplotype: "*1/*2", Phenotype: "Intermediate Metabolizer"}},
			ledger: []string{"variants[0] used [CYP2C19]", "diplotypes.CYP2C19 used [CYP2C19]"},
		},
		{
			name:   "CYP2C19 *1/*1 beside a bare rs4244285: conflicting",
			req:    engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*1/*1"}, Variants: []string{"rs4244285"}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review: "rs4244285 says at least one A",
			ledger: []string{"variants[0] conflicting [CYP2C19]", "diplotypes.CYP2C19 conflicting [CYP2C19]"},
		},
		{
			// rs4244285 (CYP2C19*2) is chr10:96541616 on GRCh37 and
			// chr10:94781859 on GRCh38 (dbSNP).
			name: "CYP2C19 *2/*2 at its GRCh37 position with genes_tested: not placeable, review (not 'standard dose')",
			req: engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"},
				Calls: []engine.PositionCall{{Chrom: "chr10", Pos: 96541616, Ref: "G", Alt: "A", Genotype: "1/1"}}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review: "calls[0] chr10:96541616:G>A is on chr10, where CYP2C19 lies, but at no position of any allele definition",
			ledger: []string{"calls[0] not_placeable [CYP2C19]"},
		},
		{
			name:    "GRCh37 HGVS accession: refused",
			req:     engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"NC_000010.10:g.96541616G>A"}},
			refused: "variants[0]: NC_000010.10:g.96541616G>A: looks like GRCh37 (NC_000010.10)",
		},
		{
			name: "REF not GRCh38 at a definition position: refused",
			req: engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"},
				Calls: []engine.PositionCall{{Chrom: "chr10", Pos: 94781859, Ref: "C", Alt: "A", Genotype: "0/1"}}},
			refused: "calls[0].ref: C does not match the GRCh38 reference G at chr10:94781859 (a position of the CYP2C19 allele definitions): the call may be on GRCh37",
		},
		{
			name:    "HGVS REF not GRCh38 at a definition position: refused",
			req:     engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"NC_000010.11:g.94781859C>A"}},
			refused: "variants[0]: NC_000010.11:g.94781859C>A: the reference base C does not match the GRCh38 reference G at chr10:94781859",
		},
		{
			name: "rs4244285 ref beside its HGVS homozygous: conflicting, never the reference reading",
			req: engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"rs4244285", "NC_000010.11:g.94781859G>A"},
				Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Ref, "NC_000010.11:g.94781859G>A": engine.Hom}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review: "conflicting evidence at chr10:94781859: rs4244285 says G/G, but NC_000010.11:g.94781859G>A says A/A",
			ledger: []string{"variants[0] conflicting [CYP2C19]", "variants[1] conflicting [CYP2C19]"},
		},
		{
			name: "a bare rs4244285 beside its call 0/1: used",
			req: engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"rs4244285"},
				Calls: []engine.PositionCall{{Chrom: "chr10", Pos: 94781859, Ref: "G", Alt: "A", Genotype: "0/1"}}},
			want: []engine.GenotypeCall{{Gene: "CYP2C19", Diplotype: "*1/*2", Phenotype: "Intermediate Metabolizer"},
				{Gene: "CYP2C19", Diplotype: "*2/*38", Phenotype: "Intermediate Metabolizer"}},
			ledger: []string{"variants[0] used [CYP2C19]", "calls[0] used [CYP2C19]"},
		},
		{
			name:   "an rsID no definition or panel knows, with genes_tested: not placeable, the tested gene may carry it: review",
			req:    engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"rs999999999"}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review: "rs999999999 is in no allele definition and on no panel row, so its gene is unknown",
			ledger: []string{"variants[0] not_placeable [CYP2C19]"},
		},
		{
			name:   "an HGVS item on a chromosome no tested gene is on: unrecognised, the tested gene is called",
			req:    engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Variants: []string{"NC_000003.12:g.1000A>G"}},
			want:   []engine.GenotypeCall{{Gene: "CYP2C19", Diplotype: "*1/*1", Phenotype: "Normal Metabolizer"}},
			ledger: []string{"variants[0] not_placeable []"},
		},
		{
			name: "genes_tested alone: called",
			req:  engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}},
			want: []engine.GenotypeCall{{Gene: "CYP2C19", Diplotype: "*1/*1", Phenotype: "Normal Metabolizer"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := k.Evaluate(tt.req)
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("want a 422 containing %q, got %v", tt.refused, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gene := tt.want[0].Gene
			if diff := cmp.Diff(tt.want, genotypeOf(res, gene)); diff != "" {
				t.Errorf("genotype (-want +got):\n%s", diff)
			}
			checkLedgerAndReview(t, res, gene, tt.ledger, tt.review)
		})
	}
}

// checkLedgerAndReview compares the result's evidence ledger ("field
// state [genes]" per entry; a reason exactly when not used) with want,
// and its review alerts for gene with review: "" for none, else text
// they must contain.
func checkLedgerAndReview(t *testing.T, res engine.Result, gene string, want []string, review string) {
	t.Helper()
	names := map[engine.EvidenceState]string{engine.EvidenceUsed: "used", engine.EvidenceConflicting: "conflicting",
		engine.EvidenceNotPlaceable: "not_placeable", engine.EvidenceNotPassing: "not_passing"}
	var ledger []string
	for _, e := range res.Evidence {
		state := names[e.State]
		ledger = append(ledger, fmt.Sprintf("%s %s %v", e.Field, state, e.Genes))
		if (e.State == engine.EvidenceUsed) != (e.Reason == "") {
			t.Errorf("%s: state %s with reason %q", e.Field, state, e.Reason)
		}
	}
	if diff := cmp.Diff(want, ledger); diff != "" {
		t.Errorf("evidence ledger (-want +got):\n%s", diff)
	}
	var reviews []string
	for _, a := range res.Alerts {
		if a.Gene == gene && strings.Contains(a.Message, "Could not interpret") {
			reviews = append(reviews, a.Message)
		}
	}
	switch {
	case review == "" && len(reviews) > 0:
		t.Errorf("review where the evidence decides: %q", reviews)
	case review != "" && !strings.Contains(strings.Join(reviews, " "), review):
		t.Errorf("review %q does not say %q", reviews, review)
	}
}

// TestUnknownRsIDNamesNoGene: an rsID nothing knows, with no gene claimed
// as tested, is listed as unrecognised and makes no gene read anything
// (neither reference nor review).
func TestUnknownRsIDNamesNoGene(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrel", Variants: []string{"rs999999999"}})
	if diff := cmp.Diff([]string{"rs999999999"}, res.UnrecognisedVariants); diff != "" {
		t.Errorf("unrecognised (-want +got):\n%s", diff)
	}
	if len(res.Genotype) != 0 {
		t.Errorf("genotype %+v, want none", res.Genotype)
	}
}

// FuzzDiplotypeBesideEvidence feeds a diplotype together with a call and
// a variants item of any form (the conflict check of conflict.go and the
// wrong-build checks of build.go): an accepted request evaluates, and a
// gene under review never reads as a result.
func FuzzDiplotypeBesideEvidence(f *testing.F) {
	f.Add("DPYD", "Reference/Reference", "chr1", 97450058, "C", "T", "1/1", "rs3918290")
	f.Add("CYP2C19", "*1/*2", "chr10", 94781859, "G", "A", "0/1", "NC_000010.10:g.96541616G>A")
	f.Add("CYP2D6", "*1/*5", "chr22", 42130692, "G", "A", "1", "rs3892097:T")
	f.Add("CYP2D6", "*1x3/*4", "chr22", 42126611, "C", "G", "./1", "rs1065852")
	f.Add("G6PD", "B (reference)", "chrX", 154532082, "G", "A", "1", "NC_000023.11:g.154532082G>A")
	f.Add("MT-RNR1", "Reference", "chrM", 1555, "A", "G", "1", "rs267606617")
	k := kb(f)
	f.Fuzz(func(t *testing.T, gene, diplotype, chrom string, pos int, ref, alt, gt, item string) {
		req := engine.Request{Drug: "fluorouracil", Diplotypes: map[string]string{gene: diplotype},
			Calls: []engine.PositionCall{{Chrom: chrom, Pos: pos, Ref: ref, Alt: alt, Genotype: gt}}, Variants: []string{item}}
		checkAnswer(t, k, req)
	})
}

// TestCYP2D6DiplotypeBesideVariant: a CYP2D6 diplotype with a deletion
// (*5), a copy number or a tandem arrangement is compared with a variant
// at rs3892097 (*4) copy by copy: a hemizygous *4 reads homozygous.
func TestCYP2D6DiplotypeBesideVariant(t *testing.T) {
	k := kb(t)
	tests := []struct {
		diplotype string
		zygosity  engine.Zygosity
		conflict  bool
	}{
		{"*4/*5", engine.Hom, false},
		{"*4/*5", engine.Het, true},
		{"*1/*5", engine.Hom, true},
		{"*5/*5", engine.Het, true},
		{"*1x3/*4", engine.Het, false},
		{"*1x3/*4", engine.Hom, true},
		{"*36+*10/*4", engine.Het, false},
		{"*36+*10/*4", engine.Hom, true},
		{"*4/*4", engine.Hom, false},
		{"*4/*4", engine.Het, true},
	}
	for _, tt := range tests {
		req := engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": tt.diplotype},
			Variants: []string{"rs3892097"}, Zygosity: map[string]engine.Zygosity{"rs3892097": tt.zygosity}}
		gg := k.Caller().InterpretGenotype(req).Genes["CYP2D6"]
		got := gg != nil && strings.Contains(strings.Join(gg.Review, " "), "conflicting evidence: diplotypes.CYP2D6")
		if got != tt.conflict {
			t.Errorf("%s + rs3892097 %s: conflict %v, want %v (%+v)", tt.diplotype, tt.zygosity, got, tt.conflict, gg)
		}
		if !tt.conflict && (gg == nil || len(gg.Review) > 0 || len(gg.Diplotypes) != 1) {
			t.Errorf("%s + rs3892097 %s: want the diplotype's reading without review, got %+v", tt.diplotype, tt.zygosity, gg)
		}
	}
}
