package classify_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// TestSubstrateCounts asserts the sizes the interface specification states
// (§2.8), counted from the knowledge.
func TestSubstrateCounts(t *testing.T) {
	c := classifier(t)
	want := classify.SubstrateSize{CohortVariants: 16, ProteinSequences: 5, GraphNodes: 62, GraphEdges: 54}
	if diff := cmp.Diff(want, c.Size()); diff != "" {
		t.Errorf("curated substrate size (-spec +knowledge):\n%s", diff)
	}
	if n := len(c.Citations()); n != 10 {
		t.Errorf("publication citations = %d, want 10", n)
	}
	if n := len(c.DemoCases()); n != 4 || classify.DemoCaseCount != 4 {
		t.Errorf("demo cases = %d, want 4", n)
	}
	if diff := cmp.Diff([]string{"CYP2C9", "DPYD", "NUDT15", "SLCO1B1", "TPMT"}, c.Genes()); diff != "" {
		t.Errorf("substrate genes (-want +got):\n%s", diff)
	}
}

// TestSelectionFollowsRules re-applies the curation rules to the loaded
// knowledge and requires the stored substrate. (The generator's tests
// check that the files are the rules' output on the data pack; this checks
// that the knowledge the service loads still satisfies them.)
func TestSelectionFollowsRules(t *testing.T) {
	k := kb(t)
	c := classifier(t)
	sel, err := classify.Select(classify.SelectionInput{
		Knowledge: k, Matrix: classifierData(t).Matrix, Sequences: c.Proteins(), Changes: classifierData(t).Changes,
	})
	if err != nil {
		t.Fatal(err)
	}
	stored := c.Substrate()
	if diff := cmp.Diff(stored.Cohort, sel.Substrate.Cohort); diff != "" {
		t.Errorf("cohort (-stored +rules):\n%s", diff)
	}
	if diff := cmp.Diff(stored.DemoCases, sel.Substrate.DemoCases); diff != "" {
		t.Errorf("demo cases (-stored +rules):\n%s", diff)
	}
	if diff := cmp.Diff(stored.Graph, sel.Substrate.Graph); diff != "" {
		t.Errorf("graph (-stored +rules):\n%s", diff)
	}
	if diff := cmp.Diff(c.Citations(), sel.Citations); diff != "" {
		t.Errorf("citations (-stored +rules):\n%s", diff)
	}
	if diff := cmp.Diff(c.Proteins(), sel.Proteins); diff != "" {
		t.Errorf("proteins (-stored +rules):\n%s", diff)
	}
	// Every graph row names at least one known source.
	for _, e := range stored.Graph.Edges {
		if len(e.SourceIDs) == 0 {
			t.Errorf("graph row %s → %s has no source", e.From, e.To)
		}
		for _, id := range e.SourceIDs {
			if _, ok := k.Source(id); !ok {
				t.Errorf("graph row %s → %s: unknown source %q", e.From, e.To, id)
			}
		}
	}
}

// TestDemoCases runs the four demonstration cases and checks the tiers a
// clinician would give them (docs/classifier.md §5).
func TestDemoCases(t *testing.T) {
	c := classifier(t)
	want := map[string]struct {
		tier  int
		fired []string
	}{
		"slco1b1-n130d": {4, []string{classify.RuleCPICNormal, classify.RuleCommonTolerated}},
		"cyp2c9-i359l":  {1, []string{classify.RuleCPICNonNormal, classify.RuleCommonTolerated}},
		"dpyd-m166v":    {4, []string{classify.RuleCPICNormal, classify.RuleCommonTolerated}},
		"nudt15-r139c":  {1, []string{classify.RuleCPICNonNormal}},
	}
	var ids []string
	for _, d := range c.DemoCases() {
		ids = append(ids, d.ID)
		res, err := c.Classify(classify.DemoRequest(d))
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		w, ok := want[d.ID]
		if !ok {
			t.Errorf("unexpected demo case %q", d.ID)
			continue
		}
		if res.Tier != w.tier {
			t.Errorf("%s: tier %d, want %d", d.ID, res.Tier, w.tier)
		}
		if diff := cmp.Diff(w.fired, res.RulesFired); diff != "" {
			t.Errorf("%s: rules fired (-want +got):\n%s", d.ID, diff)
		}
		if _, ok := c.DemoCase(d.ID); !ok {
			t.Errorf("DemoCase(%q) not found", d.ID)
		}
	}
	if diff := cmp.Diff([]string{"slco1b1-n130d", "cyp2c9-i359l", "dpyd-m166v", "nudt15-r139c"}, ids); diff != "" {
		t.Errorf("demo case ids (-want +got):\n%s", diff)
	}
}

// TestKnownVariants classifies every missense variant of the knowledge's
// protein-change table: those on a substrate protein or on a protein with
// a homolog profile classify without error (by protein change and, when the
// rsID has one missense allele, by rsID), the others are rejected naming
// the gene.
func TestKnownVariants(t *testing.T) {
	const wantOnProfiled = 11 // CYP2C19, CYP2D6, G6PD, VKORC1
	c := classifier(t)
	ck := classifierData(t)
	perRsID := map[string]int{}
	for _, ch := range ck.Changes {
		if ch.Consequence == classify.ConsequenceMissense {
			perRsID[ch.Gene+ch.RsID]++
		}
	}
	profiled := map[string]bool{}
	for _, g := range c.ProfiledGenes() {
		profiled[g] = true
	}
	classified, onProfiled, rejected := 0, 0, 0
	for _, ch := range ck.Changes {
		if ch.Consequence != classify.ConsequenceMissense {
			continue
		}
		if _, ok := c.Protein(ch.Gene); !ok && !profiled[ch.Gene] {
			_, err := c.Classify(classify.Request{Gene: ch.Gene, ProteinChange: ch.HGVSp})
			expectField(t, err, "gene")
			rejected++
			continue
		}
		for _, req := range []classify.Request{
			{Gene: ch.Gene, ProteinChange: ch.HGVSp},
			{Gene: strings.ToLower(ch.Gene), ProteinChange: ch.Change},
			{Gene: ch.Gene, ProteinChange: ch.HGVSp, Variant: ch.RsID},
		} {
			res, err := c.Classify(req)
			if err != nil {
				t.Errorf("%+v: %v", req, err)
				continue
			}
			if res.Variant.HGVSp != ch.HGVSp || len(res.Variant.KnownVariants) == 0 {
				t.Errorf("%+v: classified %s with %d known variants", req, res.Variant.HGVSp, len(res.Variant.KnownVariants))
			}
			if profiled[ch.Gene] && !strings.Contains(strings.Join(res.Warnings, "\n"), "is not a curated substrate protein") {
				t.Errorf("%+v: no warning that %s is not a substrate protein: %v", req, ch.Gene, res.Warnings)
			}
		}
		if perRsID[ch.Gene+ch.RsID] == 1 {
			if _, err := c.Classify(classify.Request{Gene: ch.Gene, Variant: ch.RsID}); err != nil {
				t.Errorf("%s %s by rsID: %v", ch.Gene, ch.RsID, err)
			}
		}
		if profiled[ch.Gene] {
			onProfiled++
		} else {
			classified++
		}
	}
	if classified != 17 {
		t.Errorf("%d missense variants on substrate proteins classified, want 17 (the 16 cohort variants and CYP2C9 p.Arg150Leu)", classified)
	}
	if onProfiled != wantOnProfiled {
		t.Errorf("%d missense variants on profiled non-substrate proteins classified, want %d", onProfiled, wantOnProfiled)
	}
	t.Logf("%d known missense variants on substrate proteins and %d on profiled ones classified, %d on other proteins rejected naming the gene", classified, onProfiled, rejected)
}

// TestEverySubstitution is the property test: every possible substitution
// at every position of the five substrate proteins and the four proteins
// classified from their profile alone (19 × length) classifies without
// error, with scores in [0,1], a profile, its confidence stated (a low one
// in the warnings too), a tier in 1–4 and the grounding contract.
func TestEverySubstitution(t *testing.T) {
	c := classifier(t)
	total := 0
	proteins := c.Proteins()
	for _, g := range c.ProfiledGenes() {
		p, _ := c.ProfiledProtein(g)
		proteins = append(proteins, p)
	}
	for _, p := range proteins {
		t.Run(p.Gene, func(t *testing.T) {
			t.Parallel()
			n := 0
			var tiers [5]int
			defer func() { t.Logf("%s tiers 1–4: %v", p.Gene, tiers[1:]) }()
			for pos := 1; pos <= len(p.Sequence); pos++ {
				ref := p.Sequence[pos-1]
				for _, alt := range classify.StandardResidues {
					if byte(alt) == ref {
						continue
					}
					s := classify.Substitution{Ref: ref, Pos: pos, Alt: byte(alt)}
					in := s.HGVS()
					if pos%2 == 0 {
						in = s.Short() // both notations
					}
					res, err := c.Classify(classify.Request{Gene: p.Gene, ProteinChange: in})
					if err != nil {
						t.Fatalf("%s %s: %v", p.Gene, in, err)
					}
					e := res.ESM
					for name, v := range map[string]float64{"conservation_score": e.Score, "column_conservation": e.ColumnConservation,
						"prior_weight": e.PriorWeight, "p_ref": e.PRef, "p_alt": e.PAlt, "residue_only": e.ResidueOnly.Score} {
						if v < 0 || v > 1 {
							t.Fatalf("%s %s: %s = %v outside [0,1]", p.Gene, in, name, v)
						}
					}
					if !e.Profile || (e.Confidence == classify.ConfidenceLow) != strings.Contains(strings.Join(res.Warnings, "\n"), "low-confidence conservation") {
						t.Fatalf("%s %s: profile %t, confidence %s not stated in warnings %v", p.Gene, in, e.Profile, e.Confidence, res.Warnings)
					}
					if res.Tier >= 1 && res.Tier <= 4 {
						tiers[res.Tier]++
					}
					if res.Tier < 1 || res.Tier > 4 || len(res.RulesFired) == 0 || res.RulesFired[0] != res.Synthesis.DecidedBy {
						t.Fatalf("%s %s: tier %d, rules %v", p.Gene, in, res.Tier, res.RulesFired)
					}
					if res.GroundingContract != engine.GroundingContract || res.Variant.Position != pos {
						t.Fatalf("%s %s: %+v", p.Gene, in, res.Variant)
					}
					n++
				}
			}
			if n != 19*len(p.Sequence) {
				t.Errorf("%s: %d substitutions, want 19 × %d", p.Gene, n, len(p.Sequence))
			}
		})
		total += 19 * len(p.Sequence)
	}
	t.Logf("%d substitutions", total)
}

func expectField(t *testing.T, err error, field string) {
	t.Helper()
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("error %v is not a validation error", err)
		return
	}
	if len(ve.Fields) != 1 || ve.Fields[0].Field != field {
		t.Errorf("error names %+v, want field %q", ve.Fields, field)
	}
}

func TestBadInput(t *testing.T) {
	c := classifier(t)
	tests := []struct {
		req    classify.Request
		field  string
		reason string
	}{
		{classify.Request{ProteinChange: "p.Ala154Thr"}, "gene", "is required"},
		{classify.Request{Gene: "UGT1A1", ProteinChange: "p.Gly71Arg"}, "gene", "not a protein of the classifier"},
		{classify.Request{Gene: "BRCA1", ProteinChange: "p.Pro34Ser"}, "gene", "substrate genes are CYP2C9, DPYD, NUDT15, SLCO1B1, TPMT; also classified from their homolog profile alone (not curated substrate): CYP2C19, CYP2D6, G6PD, VKORC1"},
		{classify.Request{Gene: "TPMT"}, "protein_change", "is required"},
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Ala246Thr"}, "protein_change", "beyond the end of TPMT (P51580, 245 residues)"},
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Gly154Thr"}, "protein_change", "does not match the TPMT sequence (P51580, which has Ala at 154); the reference is never re-based"},
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Ala154Ter"}, "protein_change", "stop-gain"},
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Ala154="}, "protein_change", "synonymous"},
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Ala154fs"}, "protein_change", "frameshift"},
		{classify.Request{Gene: "TPMT", ProteinChange: "c.460G>A"}, "protein_change", "not a protein substitution"},
		{classify.Request{Gene: "NUDT15", Variant: "rs12"}, "variant", "not in the knowledge's rsID → protein-change table for NUDT15"},
		{classify.Request{Gene: "NUDT15", Variant: "116855232"}, "variant", "not an rsID"},
		{classify.Request{Gene: "DPYD", Variant: "rs3918290"}, "variant", "not a missense variant (splice)"},
		{classify.Request{Gene: "CYP2C9", Variant: "rs9332131"}, "variant", "not a missense variant (frameshift)"},
		{classify.Request{Gene: "TPMT", Variant: "rs1142345"}, "variant", "has 2 missense alleles in the knowledge (p.Tyr240Cys (T>C), p.Tyr240Ser (T>G)); give protein_change"},
		{classify.Request{Gene: "TPMT", Variant: "rs1800460", ProteinChange: "p.Ala80Pro"}, "variant", "rs1800460 does not encode p.Ala80Pro in the knowledge (it encodes p.Ala154Thr)"},
		{classify.Request{Gene: "TPMT", Variant: "rs116855232"}, "variant", "not in the knowledge's rsID → protein-change table for TPMT"},
	}
	for _, tc := range tests {
		_, err := c.Classify(tc.req)
		var ve *engine.ValidationError
		if !errors.As(err, &ve) || len(ve.Fields) != 1 {
			t.Errorf("%+v: error %v, want one invalid field", tc.req, err)
			continue
		}
		if ve.Fields[0].Field != tc.field || !strings.Contains(ve.Fields[0].Reason, tc.reason) {
			t.Errorf("%+v: %s: %q; want %s containing %q", tc.req, ve.Fields[0].Field, ve.Fields[0].Reason, tc.field, tc.reason)
		}
	}
}

// TestClassifyExamples checks whole answers for representative inputs.
func TestClassifyExamples(t *testing.T) {
	c := classifier(t)
	tests := []struct {
		req      classify.Request
		tier     int
		known    int
		rarity   string
		pgxRows  int
		warnings int
	}{
		// NUDT15*3 by rsID: India-relevant no-function allele.
		{classify.Request{Gene: "NUDT15", Variant: "rs116855232"}, 1, 1, classify.RarityCommon, 1, 0},
		// CYP2C9*27 (p.Arg150Leu): CPIC "Uncertain function", no frequency
		// attributed to its alternate allele.
		{classify.Request{Gene: "CYP2C9", ProteinChange: "R150L"}, 3, 1, classify.RarityUnknown, 1, 0},
		// A substitution the knowledge does not know, at a conserved
		// position of a well-covered profile: tier 2 from the profile alone.
		{classify.Request{Gene: "TPMT", ProteinChange: "p.Gly71Trp"}, 2, 0, classify.RarityUnknown, 0, 0},
		// The initiator methionine (start-loss warning), at DPYD's thin
		// N-terminus (low-confidence warning).
		{classify.Request{Gene: "DPYD", ProteinChange: "M1V"}, 3, 0, classify.RarityUnknown, 0, 2},
		// DPYD*9A: normal function although Cys→Arg looks damaging; the
		// position is thin (low-confidence warning).
		{classify.Request{Gene: "DPYD", ProteinChange: "p.Cys29Arg"}, 4, 1, classify.RarityCommon, 1, 1},
		// VKORC1 (profiled, not substrate; seven homologs): low confidence,
		// so tier 3 whatever the score; two warnings.
		{classify.Request{Gene: "VKORC1", ProteinChange: "p.Arg58Gly"}, 3, 0, classify.RarityUnknown, 0, 2},
	}
	for _, tc := range tests {
		res, err := c.Classify(tc.req)
		if err != nil {
			t.Fatalf("%+v: %v", tc.req, err)
		}
		pgx := 0
		for _, r := range res.Graph.Rows {
			if r.Layer == classify.LayerPharmacogenomic {
				pgx++
			}
		}
		if res.Tier != tc.tier || len(res.Variant.KnownVariants) != tc.known || res.Population.Rarity != tc.rarity ||
			pgx != tc.pgxRows || len(res.Warnings) != tc.warnings {
			t.Errorf("%+v: tier %d, known %d, rarity %s, pharmacogenomic rows %d, warnings %v",
				tc.req, res.Tier, len(res.Variant.KnownVariants), res.Population.Rarity, pgx, res.Warnings)
		}
		if res.Graph.NodeCount != len(res.Graph.Nodes) || res.Graph.EdgeCount != len(res.Graph.Rows) {
			t.Errorf("%+v: graph counts do not match its rows", tc.req)
		}
		if !res.ESM.Alignment.Available || res.ESM.Alignment.Reason == "" || res.ESM.Alignment.Sequences == 0 {
			t.Errorf("%+v: the response must describe the profile it used: %+v", tc.req, res.ESM.Alignment)
		}
	}
}

// TestPopulation checks the population section of a known variant:
// frequencies, rarity and the ClinVar significance with its release.
func TestPopulation(t *testing.T) {
	c := classifier(t)
	res, err := c.Classify(classify.Request{Gene: "TPMT", ProteinChange: "p.Tyr240Cys"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Population.Records) != 1 {
		t.Fatalf("records = %+v", res.Population.Records)
	}
	r := res.Population.Records[0]
	if r.AFIndia == nil || *r.AFIndia != 0.012 || r.AFGlobal == nil || r.Rarity != classify.RarityLowFrequency ||
		r.ClinVarSignificance != "drug response" || r.ClinVarRelease != "2016-12-21" {
		t.Errorf("TPMT p.Tyr240Cys population = %+v", r)
	}
	// The other allele of the same rsID gets none of these figures.
	res, err = c.Classify(classify.Request{Gene: "TPMT", ProteinChange: "p.Tyr240Ser"})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Population.Records[0]
	if r.AFIndia != nil || r.AFGlobal != nil || r.ClinVarSignificance != "" || r.Rarity != classify.RarityUnknown || len(r.Notes) == 0 {
		t.Errorf("TPMT p.Tyr240Ser population = %+v, want no figures and a note", r)
	}
}

// TestGrounding checks that every gene, drug, allele and herb a response
// names is in its graph rows and is an entity of the knowledge.
func TestGrounding(t *testing.T) {
	c := classifier(t)
	k := kb(t)
	reqs := []classify.Request{{Gene: "CYP2C9", ProteinChange: "p.Ile359Leu"}, {Gene: "TPMT", ProteinChange: "p.Gly71Trp"}}
	for _, d := range c.DemoCases() {
		reqs = append(reqs, classify.DemoRequest(d))
	}
	for _, req := range reqs {
		res, err := c.Classify(req)
		if err != nil {
			t.Fatal(err)
		}
		inRows := map[string]bool{}
		for _, n := range res.Graph.Nodes {
			inRows[n.ID] = true
		}
		var named []string
		named = append(named, classify.NodeGene+":"+res.Variant.Gene)
		for _, kv := range res.Variant.KnownVariants {
			for _, a := range kv.Alleles {
				found := false
				for _, r := range res.Graph.Rows {
					if r.Layer == classify.LayerPharmacogenomic && strings.Contains(r.Attributes["allele"], a) {
						found = true
					}
				}
				if !found {
					t.Errorf("%+v: allele %s is named but in no row", req, a)
				}
				if !k.Known(a) {
					t.Errorf("%+v: allele %s is not a knowledge entity", req, a)
				}
			}
		}
		for _, r := range res.Graph.Rows {
			named = append(named, r.From, r.To)
			if d := r.Attributes["drug"]; d != "" && !k.Known(d) {
				t.Errorf("%+v: drug %q is not a knowledge entity", req, d)
			}
		}
		for _, n := range named {
			if !inRows[n] {
				t.Errorf("%+v: %s is named outside the graph rows", req, n)
			}
			typ, key, _ := strings.Cut(n, ":")
			if (typ == classify.NodeGene || typ == classify.NodeHerb) && !k.Known(key) {
				t.Errorf("%+v: %s is not a knowledge entity", req, n)
			}
		}
		for i, cit := range res.SourceCitations {
			if cit.Target.Kind == 0 || cit.Source == "" || cit.URL == "" {
				t.Errorf("%+v: citation %d incomplete: %+v", req, i, cit)
			}
		}
	}
}

// TestValidationAUC measures, on the single-missense alleles with a CPIC
// function in the knowledge, how the position-aware conservation_score, the
// residue-only score of engine 2.x and BLOSUM62 alone separate the
// No/Decreased-function alleles from the Normal-function ones, pooled and
// per gene. The figures are the ones docs/classifier.md §7 reports (run
// with -v to print the table).
func TestValidationAUC(t *testing.T) {
	v := classifier(t).Validate()
	type fig struct {
		Pos, Neg                  int
		Profile, ResidueOnly, B62 string
	}
	row := func(s classify.AUCSet) fig {
		return fig{s.Positives, s.Negatives, classify.FormatAUC(s.AUCProfile), classify.FormatAUC(s.AUCConservation), classify.FormatAUC(s.AUCBLOSUM62)}
	}
	got := map[string]fig{
		"all genes (residue-only)": row(v.All),
		"substrate (residue-only)": row(v.Substrate),
		"profiled genes":           row(v.Profiled),
	}
	for _, g := range v.PerGene {
		got[g.Gene] = row(g)
		if g.VsAll != nil {
			t.Logf("| %s | %d | %d | %.3f | %.3f | %.3f |", g.Gene, g.Positives, g.VsAll.Substitutions, g.VsAll.AUCProfile, g.VsAll.AUCResidue, g.VsAll.AUCBLOSUM62)
			got[g.Gene+" vs all"] = fig{g.Positives, g.VsAll.Substitutions, fmt.Sprintf("%.3f", g.VsAll.AUCProfile),
				fmt.Sprintf("%.3f", g.VsAll.AUCResidue), fmt.Sprintf("%.3f", g.VsAll.AUCBLOSUM62)}
		}
	}
	want := map[string]fig{
		"all genes (residue-only)": {20, 5, "—", "0.635", "0.535"},
		"substrate (residue-only)": {13, 3, "—", "0.667", "0.615"},
		"profiled genes":           {13, 5, "0.908", "0.638", "0.569"},
		"CYP2C9":                   {5, 0, "—", "—", "—"},
		"CYP2D6":                   {0, 2, "—", "—", "—"},
		"DPYD":                     {2, 2, "0.750", "0.500", "0.625"},
		"NUDT15":                   {1, 0, "—", "—", "—"},
		"SLCO1B1":                  {1, 1, "1.000", "1.000", "1.000"},
		"TPMT":                     {4, 0, "—", "—", "—"},
		"CYP2C9 vs all":            {5, 9310, "0.590", "0.424", "0.384"},
		"DPYD vs all":              {2, 19475, "0.453", "0.720", "0.731"},
		"NUDT15 vs all":            {1, 3116, "0.916", "0.709", "0.839"},
		"SLCO1B1 vs all":           {1, 13129, "0.498", "0.302", "0.187"},
		"TPMT vs all":              {4, 4655, "0.864", "0.369", "0.435"},
	}
	if len(got) != len(want) {
		t.Errorf("%d measured sets, %d documented", len(got), len(want))
	}
	for _, k := range sortedKeys(got) {
		f := got[k]
		t.Logf("| %s | %d | %d | %s | %s | %s |", k, f.Pos, f.Neg, f.Profile, f.ResidueOnly, f.B62)
	}
	for _, it := range v.Profiled.Items {
		t.Logf("%-8s %-11s %-6s %-18s blosum62 %3d  residue-only %.4f  log-odds %8.4f  score %.4f  %s  tier w/o function %d",
			it.Gene, it.RsID, it.Change, it.Function, it.BLOSUM62, it.ResidueOnlyScore, it.LogOdds, it.ConservationScore, it.Confidence, it.TierWithoutFunction)
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("%s: validation figures changed (-documented +measured); update docs/classifier.md §7:\n%s", k, diff)
		}
	}
	if got := classify.AUC([]float64{1, 2}, []float64{0}, func(f float64) float64 { return f }); got != 1 {
		t.Errorf("AUC of a perfect separation = %v", got)
	}
	if got := classify.AUC([]float64{1}, []float64{1}, func(f float64) float64 { return f }); got != 0.5 {
		t.Errorf("AUC of a tie = %v", got)
	}
}

// TestCalibration checks that DamagingLogOdds is the threshold the
// calibration on the knowledge's CPIC allele functions selects.
func TestCalibration(t *testing.T) {
	cal := classifier(t).Validate().Calibration
	for _, r := range cal.Candidates {
		t.Logf("| ≤ %g | %.3f | %.3f | %.3f |", r.Threshold, r.Sensitivity, r.Specificity, r.Youden)
	}
	if cal.Selected != classify.DamagingLogOdds {
		t.Errorf("calibration selects %g on %d positives / %d negatives, DamagingLogOdds is %g", cal.Selected, cal.Positives, cal.Negatives, classify.DamagingLogOdds)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestDeterministic classifies the same input twice and requires the same
// JSON.
func TestDeterministic(t *testing.T) {
	c := classifier(t)
	var out [2][]byte
	for i := range out {
		res, err := c.Classify(classify.Request{Gene: "CYP2C9", ProteinChange: "p.Arg144Cys"})
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	}
	if string(out[0]) != string(out[1]) {
		t.Error("two classifications of the same input differ")
	}
}

func TestNewWithoutClassifierKnowledge(t *testing.T) {
	if _, err := classify.New(&engine.Knowledge{}, nil); err == nil {
		t.Error("New accepted knowledge without classifier data")
	}
}

func BenchmarkClassify(b *testing.B) {
	c := classifier(b)
	for _, req := range []classify.Request{
		{Gene: "CYP2C9", ProteinChange: "p.Ile359Leu"},
		{Gene: "NUDT15", Variant: "rs116855232"},
	} {
		b.Run(fmt.Sprintf("%s_%s%s", req.Gene, req.ProteinChange, req.Variant), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.Classify(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
