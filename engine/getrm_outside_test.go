package engine_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// TestGetRMOutsideCYP2D6: every GeT-RM development sample whose CYP2D6
// consensus a VCF cannot decide (class "outside": the *5 deletion, the
// *2x2 duplication, the *68 + *4 hybrid tandem) gets the consensus
// phenotype (truth_phenotype) when its consensus diplotype (each
// diplotype of the accepted column) is given as the CYP2D6 diplotype with
// codeine. The accepted column spells the tandem "*68+*4" (its
// source_call, Gaedigk 2019, writes "(*68)+*4"); both spellings are
// checked. No sample disagrees: the four are *1/*5 twice (IM, 1.0),
// *2/*2x2 (UM, 3.0) and *3/*68+*4 (PM, 0.0).
func TestGetRMOutsideCYP2D6(t *testing.T) {
	path := datapacktest.Path(t, "pgx", "getrm-dev", "truth-dev.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := kb(t)
	sc := bufio.NewScanner(f)
	var col map[string]int
	n := 0
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if col == nil {
			col = map[string]int{}
			for i, h := range fields {
				col[h] = i
			}
			for _, h := range []string{"sample", "gene", "source_call", "accepted", "truth_phenotype", "class"} {
				if _, ok := col[h]; !ok {
					t.Fatalf("%s: no column %q", path, h)
				}
			}
			continue
		}
		get := func(h string) string { return fields[col[h]] }
		if get("gene") != "CYP2D6" || get("class") != "outside" {
			continue
		}
		n++
		sample, want := get("sample"), get("truth_phenotype")
		forms := strings.Split(get("accepted"), "|")
		if sc := get("source_call"); !strings.Contains(sc, "|") && !slices.Contains(forms, sc) {
			forms = append(forms, sc)
		}
		for _, d := range forms {
			res, err := k.Evaluate(engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": d}})
			if err != nil {
				t.Errorf("%s CYP2D6 %s: %v", sample, d, err)
				continue
			}
			got := ""
			for _, g := range res.Genotype {
				if g.Gene == "CYP2D6" {
					got = g.Phenotype
				}
			}
			if got != want {
				t.Errorf("%s CYP2D6 %s with codeine: phenotype %q, want the consensus %q; alerts %v", sample, d, got, want, alertMessages(res))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s: no CYP2D6 sample of class outside", path)
	}
}
