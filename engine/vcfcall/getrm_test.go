package vcfcall_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// getrmTruth is one row of the GeT-RM development set's truth-dev.tsv: the
// published consensus genotype of one sample and gene.
type getrmTruth struct {
	sample, gene string
	accepted     []string // every diplotype the consensus allows
	phenotype    string   // truth_phenotype
	outside      bool     // class "outside": a VCF alone cannot decide it
}

// getrmOutcome is how one answer is judged against the consensus, by the
// rule of the data set's README.
type getrmOutcome int

const (
	getrmAgree   getrmOutcome = iota // a reading among the accepted ones (or, with several accepted, the same phenotype)
	getrmAbstain                     // not called, no data, or a review
	getrmWrong                       // a reading the consensus does not accept
	getrmUnsafe                      // a normal reading where the truth is not normal
)

func readGetRMTruth(t *testing.T, path string) []getrmTruth {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []getrmTruth
	sc := bufio.NewScanner(f)
	var cols map[string]int
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range fields {
				cols[c] = i
			}
			for _, c := range []string{"sample", "gene", "accepted", "truth_phenotype", "class"} {
				if _, ok := cols[c]; !ok {
					t.Fatalf("%s: no column %q", path, c)
				}
			}
			continue
		}
		get := func(c string) string {
			if i := cols[c]; i < len(fields) {
				return strings.TrimSpace(fields[i])
			}
			return ""
		}
		rows = append(rows, getrmTruth{
			sample:    get("sample"),
			gene:      get("gene"),
			accepted:  strings.FieldsFunc(get("accepted"), func(r rune) bool { return r == ';' || r == '|' }),
			phenotype: get("truth_phenotype"),
			outside:   get("class") == "outside",
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// referenceLike reports whether an allele name reads as the reference
// (normal) allele of its gene.
func referenceLike(allele string) bool {
	return allele == "*1" || allele == "Reference" || strings.Contains(allele, "reference (")
}

func normalReading(phenotype string, diplotype []string) bool {
	if phenotype != "" {
		return strings.HasPrefix(phenotype, "Normal")
	}
	for _, a := range diplotype {
		if !referenceLike(a) {
			return false
		}
	}
	return len(diplotype) > 0
}

func truthNormal(tr getrmTruth) bool {
	if tr.phenotype != "" && !strings.HasPrefix(tr.phenotype, "-") {
		return strings.HasPrefix(tr.phenotype, "Normal")
	}
	for _, d := range tr.accepted {
		if normalReading("", strings.Split(d, "/")) {
			return true
		}
	}
	return false
}

// judgeGetRM applies the data set's rule to one gene's answer.
func judgeGetRM(tr getrmTruth, g vcfcall.GeneResult) getrmOutcome {
	if g.Interpretation != vcfcall.InterpretationCalled || g.NeedsReview || len(g.Diplotypes) == 0 {
		return getrmAbstain
	}
	inAccepted, samePhenotype, normal := true, tr.phenotype != "", false
	for _, d := range g.Diplotypes {
		found := false
		for _, a := range tr.accepted {
			if a == d.Diplotype {
				found = true
			}
		}
		inAccepted = inAccepted && found
		samePhenotype = samePhenotype && d.Phenotype == tr.phenotype
		normal = normal || normalReading(d.Phenotype, d.Alleles)
	}
	switch {
	case tr.outside:
		// A VCF alone cannot decide the gene: any reading is wrong, and a
		// normal one is the worst outcome.
		if normal && !truthNormal(tr) {
			return getrmUnsafe
		}
		return getrmWrong
	case inAccepted, len(tr.accepted) > 1 && samePhenotype:
		return getrmAgree
	case normal && !truthNormal(tr):
		return getrmUnsafe
	}
	return getrmWrong
}

// TestGetRMGenomes calls the GeT-RM development genomes (real GATK gVCFs
// of reference samples, ../shared/data/pgx/getrm-dev) and judges every
// sample × gene answer against the published consensus by the data set's
// README: agree, abstain (not called or review), wrong, or unsafe (a normal
// reading where the truth is not normal). It never allows an unsafe answer;
// the table it logs is the one docs/vcf.md quotes (go test -run
// TestGetRMGenomes -v ./engine/vcfcall).
func TestGetRMGenomes(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	truth := readGetRMTruth(t, filepath.Join(dir, "truth-dev.tsv"))
	kb := loadKB(t)
	bySample := map[string]map[string]getrmTruth{}
	for _, tr := range truth {
		if bySample[tr.sample] == nil {
			bySample[tr.sample] = map[string]getrmTruth{}
		}
		bySample[tr.sample][tr.gene] = tr
	}
	type tally struct{ n, agree, abstain, wrong, unsafe, outside, outsideAbstain int }
	perGene := map[string]*tally{}
	var details []string
	samples := make([]string, 0, len(bySample))
	for s := range bySample {
		samples = append(samples, s)
	}
	sort.Strings(samples)
	for _, sample := range samples {
		path := filepath.Join(dir, sample+".g.vcf.gz")
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: no genome in the development set (%v)", sample, err)
			continue
		}
		open := func() (io.ReadCloser, error) { return os.Open(path) }
		genes := map[string]vcfcall.GeneResult{}
		_, err := vcfcall.Run(context.Background(), kb, open, vcfcall.Options{}, func(c *vcfcall.Chunk) error {
			for _, s := range c.Samples {
				var res vcfcall.SampleResult
				if err := json.Unmarshal(s.Result, &res); err != nil {
					return err
				}
				for _, g := range res.Genes {
					genes[g.Gene] = g
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", sample, err)
		}
		for gene, tr := range bySample[sample] {
			tl := perGene[gene]
			if tl == nil {
				tl = &tally{}
				perGene[gene] = tl
			}
			g := genes[gene]
			out := judgeGetRM(tr, g)
			tl.n++
			if tr.outside {
				tl.outside++
			}
			switch out {
			case getrmAgree:
				tl.agree++
			case getrmAbstain:
				tl.abstain++
				if tr.outside {
					tl.outsideAbstain++
				}
			case getrmWrong:
				tl.wrong++
			case getrmUnsafe:
				tl.unsafe++
			}
			if out != getrmAgree {
				var got []string
				for i, d := range g.Diplotypes {
					if i == 4 {
						got = append(got, fmt.Sprintf("and %d more", len(g.Diplotypes)-i))
						break
					}
					got = append(got, strings.TrimSpace(d.Diplotype+" "+d.Phenotype))
				}
				details = append(details, fmt.Sprintf("%s %s: %s; truth %s (%s); answer %q %q %s",
					sample, gene, [...]string{"agree", "abstain", "wrong", "UNSAFE"}[out],
					strings.Join(tr.accepted, " | "), tr.phenotype, g.Interpretation, strings.Join(got, ", "), firstNote(g)))
			}
		}
	}
	genes := make([]string, 0, len(perGene))
	for g := range perGene {
		genes = append(genes, g)
	}
	sort.Strings(genes)
	var b strings.Builder
	var total tally
	fmt.Fprintf(&b, "\n| gene | answers | agree | abstain | wrong | normal where truth is not | of which outside-call genotypes (abstaining is right) |\n|---|---|---|---|---|---|---|\n")
	for _, g := range genes {
		tl := perGene[g]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d (%d abstained) |\n", g, tl.n, tl.agree, tl.abstain, tl.wrong, tl.unsafe, tl.outside, tl.outsideAbstain)
		total.n += tl.n
		total.agree += tl.agree
		total.abstain += tl.abstain
		total.wrong += tl.wrong
		total.unsafe += tl.unsafe
		total.outside += tl.outside
		total.outsideAbstain += tl.outsideAbstain
	}
	fmt.Fprintf(&b, "| all | %d | %d | %d | %d | %d | %d (%d abstained) |\n", total.n, total.agree, total.abstain, total.wrong, total.unsafe, total.outside, total.outsideAbstain)
	sort.Strings(details)
	t.Logf("GeT-RM development genomes:%s\n%s", b.String(), strings.Join(details, "\n"))
	if total.n == 0 {
		t.Fatal("no sample × gene answer was judged")
	}
	if total.unsafe > 0 {
		t.Errorf("%d answers read normal where the consensus is not normal (see the log)", total.unsafe)
	}
}

func firstNote(g vcfcall.GeneResult) string {
	for _, list := range [][]string{g.Uninterpreted, g.Notes} {
		if len(list) > 0 {
			n := list[0]
			if len(n) > 160 {
				n = n[:160] + "…"
			}
			return n
		}
	}
	return ""
}
