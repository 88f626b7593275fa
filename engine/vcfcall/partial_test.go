package vcfcall_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// TestPartialAlertOnlyWhereAPositionIsMissing: a drug check of a VCF
// sample says a gene "was read only from …" (its unreported positions are
// unknown) only when the file left a definition position of that gene
// without a call; a gVCF that reports every position of a gene gets no
// such alert for it (it was wrongly given for every gene before).
func TestPartialAlertOnlyWhereAPositionIsMissing(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	kb := loadKB(t)
	drugs := []string{"celecoxib", "efavirenz", "clopidogrel", "warfarin", "simvastatin", "fluorouracil"}
	var complete, partial int
	for _, sample := range []string{"NA12003", "NA18855", "NA19226"} {
		path := filepath.Join(dir, sample+".g.vcf.gz")
		open := func() (io.ReadCloser, error) { return os.Open(path) }
		_, err := vcfcall.Run(context.Background(), kb, open, vcfcall.Options{Drugs: drugs, Wire: func(r engine.Result) any { return r }}, func(c *vcfcall.Chunk) error {
			for _, s := range c.Samples {
				var res struct {
					Genes  []vcfcall.GeneResult `json:"genes"`
					Checks []struct {
						Drug   string `json:"drug"`
						Result struct {
							Alerts []struct {
								Gene, Message string
							} `json:"alerts"`
						} `json:"result"`
					} `json:"checks"`
				}
				if err := json.Unmarshal(s.Result, &res); err != nil {
					return err
				}
				missing := map[string]int{}
				for _, g := range res.Genes {
					missing[g.Gene] = len(g.MissingPositions)
				}
				for _, chk := range res.Checks {
					for _, a := range chk.Result.Alerts {
						if !strings.Contains(a.Message, "was read only from") {
							continue
						}
						partial++
						if missing[a.Gene] == 0 {
							t.Errorf("%s %s: %s is said to be read only from the items given, but the file called every position of it: %s", sample, chk.Drug, a.Gene, a.Message)
						}
					}
				}
				for _, g := range res.Genes {
					if len(g.MissingPositions) == 0 {
						complete++
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", sample, err)
		}
	}
	if complete == 0 {
		t.Fatal("no gene with every position called: the test checks nothing")
	}
	t.Logf("%d genes with every position called; %d partial alerts where a position is missing", complete, partial)
}
