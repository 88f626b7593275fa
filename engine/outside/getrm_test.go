package outside

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// TestGeTRMOutsideSamples writes the accepted CYP2D6 call of every GeT-RM
// development sample whose CYP2D6 class is "outside"
// (../shared/data/pgx/getrm-dev/truth-dev.tsv) in each CYP2D6 caller's
// format and checks that the reader returns it unchanged, for that sample
// and passing. Turning it into the consensus phenotype is the integration's
// step (issue 22 item 2 and 4).
func TestGeTRMOutsideSamples(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	f, err := os.Open(filepath.Join(dir, "truth-dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type row struct{ sample, accepted string }
	var rows []row
	sc := bufio.NewScanner(f)
	var col map[string]int
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if col == nil {
			col = map[string]int{}
			for i, h := range fields {
				col[h] = i
			}
			continue
		}
		if fields[col["gene"]] == "CYP2D6" && fields[col["class"]] == "outside" {
			rows = append(rows, row{fields[col["sample"]], fields[col["accepted"]]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no CYP2D6 outside sample in truth-dev.tsv")
	}
	for _, r := range rows {
		inputs := map[string]struct {
			text   string
			sample string
		}{
			FormatPharmCAT:   {"CYP2D6\t" + r.accepted + "\n", ""},
			FormatCyrius:     {"Sample\tGenotype\tFilter\n" + r.sample + "\t" + r.accepted + "\tPASS\n", r.sample},
			FormatAldy:       {"#Sample\tGene\tSolutionID\tMajor\tMinor\tCopy\tAllele\tLocation\tType\tCoverage\tEffect\tdbSNP\tCode\tStatus\n#Solution 1: x\n" + r.sample + "\tCYP2D6\t1\t" + r.accepted + "\tx\t0\tx\n", r.sample},
			FormatStellarPGx: {"CYP2D6 Star Allele Calling with StellarPGx\n\nResult:\n" + r.accepted + "\n", ""},
			FormatPyPGx:      {pypgxArchive(t, pypgxMeta, pypgxHeader+r.sample+"\t"+r.accepted+"\tx\t;\t;\t;\t;\tx\n"), r.sample},
		}
		for format, in := range inputs {
			t.Run(r.sample+"/"+format, func(t *testing.T) {
				got, err := Read(strings.NewReader(in.text), testMax)
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if got.Format != format || len(got.Calls) != 1 {
					t.Fatalf("Format %q with %d calls, want %q with 1", got.Format, len(got.Calls), format)
				}
				c := got.Calls[0]
				if c.Gene != "CYP2D6" || c.Diplotype != r.accepted || c.Sample != in.sample || !c.Passing {
					t.Errorf("call = %+v, want CYP2D6 %s for %q, passing", c, r.accepted, in.sample)
				}
			})
		}
	}
}
