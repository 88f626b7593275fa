package vcfcall_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// TestSameReadingVCFAndCheck: /pgx/vcf and /pgx/check give the same
// reading for the same evidence. Every sample of every PharmCAT test VCF
// is answered by vcfcall, whose drug check is /pgx/check on the sample's
// calls; each gene's phenotypes must be the same in both, including a
// gene under review whose actionable reading /pgx/check keeps beside the
// review (before issue 20, /pgx/vcf withheld it in 16 of PharmCAT's
// cases).
func TestSameReadingVCFAndCheck(t *testing.T) {
	kb := loadKB(t)
	root := filepath.Join(datapacktest.PharmCATDir(t), "test-vcfs")
	var files []string
	if err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".vcf") {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	compared, beside := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		chunks, _, _, err := runAll(t, kb, data, vcfcall.Options{Drugs: []string{"clopidogrel"}, Wire: func(r engine.Result) any { return r }})
		var pe *vcf.ParseError
		if errors.As(err, &pe) {
			continue // the reader's documented refusals
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range chunks {
			for _, s := range c.Samples {
				var res struct {
					Genes  []vcfcall.GeneResult
					Checks []struct{ Result engine.Result }
				}
				if err := json.Unmarshal(s.Result, &res); err != nil {
					t.Fatal(err)
				}
				if len(res.Checks) != 1 {
					t.Fatalf("%s: %d checks", f, len(res.Checks))
				}
				check, raw := map[string][]string{}, map[string][]engine.GenotypeCall{}
				for _, g := range res.Checks[0].Result.Genotype {
					raw[g.Gene] = append(raw[g.Gene], g)
					if g.Diplotype != "" && g.Phenotype != "" {
						check[g.Gene] = append(check[g.Gene], g.Diplotype+" "+g.Phenotype)
					}
				}
				for _, g := range res.Genes {
					var vcfReading []string
					for _, d := range g.Diplotypes {
						if d.Phenotype != "" {
							vcfReading = append(vcfReading, d.Diplotype+" "+d.Phenotype)
						}
					}
					want := check[g.Gene]
					sort.Strings(vcfReading)
					sort.Strings(want)
					if len(vcfReading) == 0 && len(want) == 0 {
						continue
					}
					compared++
					if g.NeedsReview && len(vcfReading) > 0 {
						beside++
					}
					if strings.Join(vcfReading, "; ") != strings.Join(want, "; ") {
						t.Errorf("%s %s %s: /pgx/vcf reads %q, /pgx/check %q %+v (review %v) %v", filepath.Base(f), s.Name, g.Gene, vcfReading, want, raw[g.Gene], g.NeedsReview, res.Checks[0].Result.Alerts)
					}
				}
			}
		}
	}
	t.Logf("%d gene readings compared; %d readings kept beside a review in both", compared, beside)
	if compared == 0 {
		t.Fatal("nothing compared")
	}
}
