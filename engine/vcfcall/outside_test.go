package vcfcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/outside"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// readOutside reads a caller's output as the CLI does.
func readOutside(t *testing.T, text string) []outside.Call {
	t.Helper()
	f, err := outside.Read(strings.NewReader(text), 1<<20)
	if err != nil {
		t.Fatalf("outside.Read: %v", err)
	}
	return f.Calls
}

// TestOutsideCallsMerged runs the GeT-RM development genome NA18855 with
// outside calls. Its CYP2D6 consensus (truth-dev.tsv: *1/*5, Intermediate
// Metabolizer, class "outside": the *5 deletion is not in a VCF) given as a
// PharmCAT outside call replaces the VCF's provisional CYP2D6, and the
// codeine check reads it.
func TestOutsideCallsMerged(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	var truth getrmTruth
	for _, tr := range readGetRMTruth(t, filepath.Join(dir, "truth-dev.tsv")) {
		if tr.sample == "NA18855" && tr.gene == "CYP2D6" {
			truth = tr
		}
	}
	if len(truth.accepted) != 1 || !truth.outside {
		t.Fatalf("NA18855 CYP2D6 truth %+v: the test needs one accepted diplotype of class outside", truth)
	}
	path := filepath.Join(dir, "NA18855.g.vcf.gz")
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	kb := loadKB(t)

	type want struct {
		Interpretation string
		Phenotype      string
		Words          []string // each in the gene's summary, notes or uninterpreted
		Codeine        string   // the CYP2D6 phenotype of the codeine check (its review, for a review)
	}
	cases := []struct {
		name    string
		gene    string
		outside string
		want    want
	}{
		{"consensus as a PharmCAT outside call", "CYP2D6", "CYP2D6\t" + truth.accepted[0] + "\n",
			want{vcfcall.InterpretationCalled, truth.phenotype, []string{"PharmCAT outside call", "line 1", "replaces"}, truth.phenotype}},
		{"a Cyrius call naming the sample", "CYP2D6", "Sample\tGenotype\tFilter\nNA18855\t*1/*5\tPASS\n",
			want{vcfcall.InterpretationCalled, "Intermediate Metabolizer", []string{"Cyrius", "line 2"}, "Intermediate Metabolizer"}},
		{"not passing: review with the caller's words", "CYP2D6", "Sample\tGenotype\tFilter\nNA18855\t*1/*5;*1/*13\tMore_than_one_possible_genotype\n",
			want{vcfcall.InterpretationReview, "", []string{"not passing", "More_than_one_possible_genotype", "*1/*5;*1/*13"}, "Could not interpret — review"}},
		{"an arrangement without a CPIC value: review naming it", "CYP2D6", "CYP2D6\t*1/*10x3\n",
			want{vcfcall.InterpretationReview, "", []string{"*10x3", "no activity value"}, "Could not interpret — review"}},
		{"the VCF reading differs: both named", "CYP2C19", "CYP2C19\t*1/*1\n",
			want{vcfcall.InterpretationCalled, "Normal Metabolizer", []string{"the VCF alone reads CYP2C19 differently", "*1/*2", "*1/*1 is used"}, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var checks []engine.Result
			opt := vcfcall.Options{OutsideCalls: readOutside(t, tc.outside), Drugs: []string{"codeine"},
				Wire: func(r engine.Result) any { checks = append(checks, r); return nil }}
			var res vcfcall.SampleResult
			_, err := vcfcall.Run(context.Background(), kb, open, opt, func(c *vcfcall.Chunk) error {
				return json.Unmarshal(c.Samples[0].Result, &res)
			})
			if err != nil {
				t.Fatal(err)
			}
			var g vcfcall.GeneResult
			for _, x := range res.Genes {
				if x.Gene == tc.gene {
					g = x
				}
			}
			got := want{Interpretation: g.Interpretation}
			if len(g.Diplotypes) > 0 {
				got.Phenotype = g.Diplotypes[0].Phenotype
			}
			text := g.Summary + " | " + strings.Join(g.Notes, " | ") + " | " + strings.Join(g.Uninterpreted, " | ")
			for _, w := range tc.want.Words {
				if strings.Contains(text, w) {
					got.Words = append(got.Words, w)
				}
			}
			if len(checks) != 1 {
				t.Fatalf("%d codeine checks", len(checks))
			}
			for _, gc := range checks[0].Genotype {
				if gc.Gene == "CYP2D6" && tc.gene == "CYP2D6" {
					got.Codeine = gc.Phenotype
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s\n%s", d, text)
			}
			if g.NeedsReview != (tc.want.Interpretation == vcfcall.InterpretationReview) {
				t.Errorf("needs_review %v for %s", g.NeedsReview, g.Interpretation)
			}
			if tc.want.Codeine != "" && tc.want.Interpretation == vcfcall.InterpretationCalled {
				// The check's advice is the Intermediate Metabolizer one, never
				// a review or the VCF's provisional CYP2D6.
				var advice bool
				for _, a := range checks[0].Alerts {
					if a.Gene == "CYP2D6" && strings.Contains(a.Message+a.Recommendation, tc.want.Codeine) {
						advice = true
					}
				}
				if !advice {
					t.Errorf("no CYP2D6 %s alert in the codeine check: %+v", tc.want.Codeine, checks[0].Alerts)
				}
			}
		})
	}
}

// TestOutsideCallsRefused: a call naming a sample the VCF does not hold,
// and a call naming none beside a VCF of several samples, are refused
// before any sample is answered, naming the call.
func TestOutsideCallsRefused(t *testing.T) {
	kb := loadKB(t)
	for _, tc := range []struct {
		name, vcf, outside string
		words              []string
	}{
		{"absent sample", threeSamples, "Sample\tGenotype\tFilter\nNA00000\t*1/*5\tPASS\n", []string{"NA00000", "line 2", "does not hold"}},
		{"no sample, several in the file", threeSamples, "CYP2C19\t*1/*2\n", []string{"line 1", "names no sample", "3 samples"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks, _, _, err := runAll(t, kb, []byte(tc.vcf), vcfcall.Options{OutsideCalls: readOutside(t, tc.outside)})
			var oe *vcfcall.OutsideCallError
			if !errors.As(err, &oe) {
				t.Fatalf("err %v, want an *OutsideCallError", err)
			}
			if len(chunks) != 0 {
				t.Errorf("%d chunks answered before the refusal", len(chunks))
			}
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not name %q", err, w)
				}
			}
		})
	}
}

// TestOutsideHLATyping: a passing HLA typing (arcasHLA's JSON) makes its
// alleles that the knowledge has rows for positive in the drug checks:
// HLA-B*15:02 with carbamazepine gives the HLA-B alert. A typing without
// such an allele is named and reads no allele, never a negative.
func TestOutsideHLATyping(t *testing.T) {
	kb := loadKB(t)
	for _, tc := range []struct {
		name, typing string
		positive     bool
		words        string
	}{
		{"HLA-B*15:02 typed", `{"A": ["A*01:01:01", "A*03:01:01"], "B": ["B*15:02:01", "B*40:01:02"]}`, true, "HLA-B*15:02 positive in the drug checks"},
		{"no allele the knowledge has rows for", `{"B": ["B*39:01:01", "B*07:02:01"]}`, false, "no allele the knowledge has rows for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var checks []engine.Result
			opt := vcfcall.Options{OutsideCalls: readOutside(t, tc.typing), Drugs: []string{"carbamazepine"},
				Wire: func(r engine.Result) any { checks = append(checks, r); return nil }}
			chunks, _, _, err := runAll(t, kb, []byte(gvcfHeader), opt)
			if err != nil {
				t.Fatal(err)
			}
			var res vcfcall.SampleResult
			if err := json.Unmarshal(chunks[0].Samples[0].Result, &res); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Warnings, " | "), tc.words) {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.words)
			}
			positive := false
			for _, a := range checks[0].Alerts {
				for _, g := range a.Genotype {
					if g.Gene == "HLA-B" && strings.Contains(g.Diplotype+g.Phenotype, "15:02") && strings.Contains(strings.ToLower(g.Phenotype+g.Diplotype), "positive") {
						positive = true
					}
				}
				if a.Gene == "HLA-B" && a.Severity == engine.SeverityHigh {
					positive = true
				}
				if a.Gene == "HLA-B" && strings.Contains(strings.ToLower(a.Message), "negative") {
					t.Errorf("HLA-B read as negative: %+v", a)
				}
			}
			if positive != tc.positive {
				t.Errorf("HLA-B*15:02 positive in the check: %v, want %v; alerts %+v", positive, tc.positive, checks[0].Alerts)
			}
		})
	}
}
