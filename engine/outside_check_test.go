package engine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Caller outputs in the formats engine/outside reads (each reader's own
// tests cite the tool's documentation for the layout).
const (
	cyriusHead   = "Sample\tGenotype\tFilter\n"
	arcasB1502   = `{"A": ["A*02:01:01", "A*24:02:01"], "B": ["B*15:02:01", "B*40:01:02"]}`
	arcasNoKnown = `{"A": ["A*02:01:01", "A*24:02:01"], "B": ["B*07:02:01", "B*40:01:02"]}`
)

// TestOutsideCallsOnCheck: the outside_calls of POST /pgx/check (issue
// 22 item 5). A passing call is its gene's diplotype, compared with the
// rest of the request; a non-passing or unreadable call, or one that
// disagrees with a diplotype or the variants, is a review naming it, never
// a phenotype; an HLA typing makes its known alleles positive; input that
// cannot be one patient's calls is refused naming the field and line.
func TestOutsideCallsOnCheck(t *testing.T) {
	k := kb(t)
	tests := []struct {
		name    string
		req     engine.Request
		gene    string
		want    []engine.GenotypeCall
		review  string
		refused string
		// severity is the overall severity wanted (checked when set).
		severity engine.Severity
		ledger   []string
		// warn is text a warning must contain.
		warn string
	}{
		{
			name:   "Cyrius *1/*2x2 passing: ultrarapid, codeine avoided",
			req:    engine.Request{Drug: "codeine", OutsideCalls: []string{cyriusHead + "S1\t*1/*2x2\tPASS\n"}},
			gene:   "CYP2D6",
			want:   []engine.GenotypeCall{{Gene: "CYP2D6", Diplotype: "*1/*2x2", Phenotype: "Ultrarapid Metabolizer", ActivityScore: "3.0"}},
			ledger: []string{"outside_calls[0] used [CYP2D6]"},
		},
		{
			name:     "Cyrius More_than_one_possible_genotype: review naming the caller's words",
			req:      engine.Request{Drug: "codeine", OutsideCalls: []string{cyriusHead + "S1\t*1/*2;*1/*34\tMore_than_one_possible_genotype\n"}},
			gene:     "CYP2D6",
			want:     []engine.GenotypeCall{{Gene: "CYP2D6", Phenotype: "Could not interpret — review"}},
			review:   "More_than_one_possible_genotype",
			severity: engine.SeverityModerate,
			ledger:   []string{"outside_calls[0] not_passing [CYP2D6]"},
		},
		{
			name: "PharmCAT outside call *1/*5 beside diplotypes *1/*1: conflicting, review",
			req: engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*1/*1"},
				OutsideCalls: []string{"CYP2D6\t*1/*5\n"}},
			gene:     "CYP2D6",
			want:     []engine.GenotypeCall{{Gene: "CYP2D6", Phenotype: "Could not interpret — review"}},
			review:   "diplotypes.CYP2D6 *1/*1 and the outside call *1/*5",
			severity: engine.SeverityModerate,
			ledger:   []string{"diplotypes.CYP2D6 conflicting [CYP2D6]", "outside_calls[0] conflicting [CYP2D6]"},
		},
		{
			name: "PharmCAT outside call *5/*1 beside diplotypes *1/*5: the same call, used",
			req: engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*1/*5"},
				OutsideCalls: []string{"CYP2D6\t*5/*1\n"}},
			gene:   "CYP2D6",
			want:   []engine.GenotypeCall{{Gene: "CYP2D6", Diplotype: "*1/*5", Phenotype: "Intermediate Metabolizer", ActivityScore: "1.0"}},
			ledger: []string{"diplotypes.CYP2D6 used [CYP2D6]", "outside_calls[0] used [CYP2D6]"},
		},
		{
			name: "CYP2C19 *1/*1 outside call beside rs4244285 homozygous: conflicting, review (never normal)",
			req: engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}, Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Hom},
				OutsideCalls: []string{"CYP2C19\t*1/*1\n"}},
			gene:     "CYP2C19",
			want:     []engine.GenotypeCall{{Gene: "CYP2C19", Phenotype: "Could not interpret — review"}},
			review:   "rs4244285",
			severity: engine.SeverityModerate,
			ledger:   []string{"variants[0] conflicting [CYP2C19]", "outside_calls[0] conflicting [CYP2C19]"},
		},
		{
			name:     "PharmCAT outside call CYP2C19 *2/*2: poor metabolizer, clopidogrel avoided",
			req:      engine.Request{Drug: "clopidogrel", OutsideCalls: []string{"CYP2C19\t*2/*2\tPoor Metabolizer\n"}},
			gene:     "CYP2C19",
			want:     []engine.GenotypeCall{{Gene: "CYP2C19", Diplotype: "*2/*2", Phenotype: "Poor Metabolizer"}},
			severity: engine.SeverityHigh,
			ledger:   []string{"outside_calls[0] used [CYP2C19]"},
		},
		{
			name:   "an arrangement without a CPIC value: review, not a summed guess",
			req:    engine.Request{Drug: "codeine", OutsideCalls: []string{"CYP2D6\t*1/*4x2+*10\n"}},
			gene:   "CYP2D6",
			want:   []engine.GenotypeCall{{Gene: "CYP2D6", Phenotype: "Could not interpret — review"}},
			review: "Could not interpret",
			ledger: []string{"outside_calls[0] not_passing [CYP2D6]"},
		},
		{
			name:     "PharmCAT outside call MT-RNR1 m.1555A>G (one allele): gentamicin high",
			req:      engine.Request{Drug: "gentamicin", OutsideCalls: []string{"MT-RNR1\tm.1555A>G\n"}},
			severity: engine.SeverityHigh,
			ledger:   []string{"outside_calls[0] used [MT-RNR1]"},
		},
		{
			name:     "a PharmCAT row with a phenotype only: review, the phenotype not used",
			req:      engine.Request{Drug: "codeine", OutsideCalls: []string{"CYP2D6\t\tPoor Metabolizer\n"}},
			gene:     "CYP2D6",
			want:     []engine.GenotypeCall{{Gene: "CYP2D6", Phenotype: "Could not interpret — review"}},
			review:   "gives no diplotype, only Poor Metabolizer",
			severity: engine.SeverityModerate,
			ledger:   []string{"outside_calls[0] not_passing [CYP2D6]"},
		},
		{
			name:     "arcasHLA B*15:02 with carbamazepine: positive, high",
			req:      engine.Request{Drug: "carbamazepine", OutsideCalls: []string{arcasB1502}},
			severity: engine.SeverityHigh,
			ledger:   []string{"outside_calls[0] used [HLA-A]", "outside_calls[0] used [HLA-B]"},
		},
		{
			name:   "arcasHLA without a known allele: nothing read as negative",
			req:    engine.Request{Drug: "carbamazepine", OutsideCalls: []string{arcasNoKnown}},
			ledger: []string{"outside_calls[0] used [HLA-A]", "outside_calls[0] used [HLA-B]"},
		},
		{
			name:   "arcasHLA with a one-field copy: not passing, HLA-B read as not typed",
			req:    engine.Request{Drug: "carbamazepine", OutsideCalls: []string{`{"B": ["B*15", "B*40:01:02"]}`}},
			ledger: []string{"outside_calls[0] not_passing [HLA-B]"},
			warn:   "HLA-B is read as not typed",
		},
		{
			name:    "an HLA typing contradicting the hla field is refused",
			req:     engine.Request{Drug: "carbamazepine", HLA: map[string]string{"HLA-B*15:02": "negative"}, OutsideCalls: []string{arcasB1502}},
			refused: "outside_calls[0]: the arcasHLA typing",
		},
		{
			name:    "an unreadable output is refused naming its line",
			req:     engine.Request{Drug: "codeine", OutsideCalls: []string{cyriusHead + "S1\t*1/*1\n"}},
			refused: "outside_calls[0]: line 2",
		},
		{
			name:    "calls of two samples are refused: a check is one patient",
			req:     engine.Request{Drug: "codeine", OutsideCalls: []string{cyriusHead + "S1\t*1/*1\tPASS\nS2\t*1/*2\tPASS\n"}},
			refused: "a check is one patient",
		},
		{
			name:    "two calls of one gene are refused",
			req:     engine.Request{Drug: "codeine", OutsideCalls: []string{"CYP2D6\t*1/*1\n", cyriusHead + "S1\t*1/*2\tPASS\n"}},
			refused: "CYP2D6 is called twice",
		},
		{
			name:   "a gene the knowledge lacks is not placeable, not silently dropped",
			req:    engine.Request{Drug: "codeine", OutsideCalls: []string{"CYP2A6\t*1/*1\n"}},
			ledger: []string{"outside_calls[0] not_placeable [CYP2A6]"},
			warn:   "the knowledge has no gene CYP2A6",
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
			if tt.gene != "" {
				if diff := cmp.Diff(tt.want, genotypeOf(res, tt.gene)); diff != "" {
					t.Errorf("genotype (-want +got):\n%s\nalerts %q", diff, alertMessages(res))
				}
			}
			if tt.severity != 0 && res.OverallSeverity != tt.severity {
				t.Errorf("overall severity %v, want %v; alerts %q", res.OverallSeverity, tt.severity, alertMessages(res))
			}
			if tt.warn != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q do not say %q", res.Warnings, tt.warn)
			}
			checkLedgerAndReview(t, res, tt.gene, tt.ledger, tt.review)
		})
	}
}

// TestGenotypeProvidedByEveryGenotypeField: position calls and outside
// calls are genotype input: data_completeness says so and the confidence
// is not lowered as if no genotype had been given.
func TestGenotypeProvidedByEveryGenotypeField(t *testing.T) {
	k := kb(t)
	for name, req := range map[string]engine.Request{
		"calls":         {Drug: "clopidogrel", GenesTested: nil, Calls: []engine.PositionCall{{Chrom: "chr10", Pos: 94781859, Ref: "G", Alt: "A", Genotype: "1/1"}}},
		"outside_calls": {Drug: "codeine", OutsideCalls: []string{cyriusHead + "S1\t*1/*2x2\tPASS\n"}},
	} {
		res, err := k.Evaluate(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.DataCompleteness.GenotypeProvided || res.Confidence == "low" {
			t.Errorf("%s: genotype_provided %v, confidence %q", name, res.DataCompleteness.GenotypeProvided, res.Confidence)
		}
	}
}
