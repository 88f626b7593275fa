package engine_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine"
)

// structuralCase is one CYP2D6 diplotype as a lab or a read-depth caller
// writes it, the CPIC spelling it means, and what the engine makes of it.
type structuralCase struct {
	written   string   // as written
	canonical string   // the same diplotype in the knowledge's CPIC names
	alleles   []string // the alleles read (nil for a review)
	score     string
	pheno     string
	review    string // for an arrangement with no CPIC value: the review names it
}

// structuralCases: the callers' notations are from their documentation
// and output as cited per row; the activity values and phenotypes are the
// knowledge's (CPIC CYP2D6 allele functionality and diplotype-phenotype
// tables via PharmCAT, data/pgx/pharmcat/RULES.md §3.8;
// data/pgx/diplotype_phenotype.csv lists *1/*1x≥3 as ≥4.0 Ultrarapid).
var structuralCases = []structuralCase{
	// Duplications: identical copies in cis; three or more copies of *1,
	// *2 or *4 share CPIC's bin x≥3.
	{written: "*1/*2x2", canonical: "*1/*2x2", alleles: []string{"*1", "*2x2"}, score: "3.0", pheno: "Ultrarapid Metabolizer"}, // Cyrius, PyPGx, StellarPGx README examples
	{written: "*2/*2x2", canonical: "*2/*2x2", alleles: []string{"*2", "*2x2"}, score: "3.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*1/*2×2", canonical: "*1/*2x2", alleles: []string{"*1", "*2x2"}, score: "3.0", pheno: "Ultrarapid Metabolizer"}, // multiplication sign (PharmVar's printed notation)
	{written: "*1/*1X2", canonical: "*1/*1x2", alleles: []string{"*1", "*1x2"}, score: "3.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*1/*1x3", canonical: "*1/*1x≥3", alleles: []string{"*1", "*1x≥3"}, score: "≥4.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*1/*1x>=3", canonical: "*1/*1x≥3", alleles: []string{"*1", "*1x≥3"}, score: "≥4.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*1/*1x≥4", canonical: "*1/*1x≥3", alleles: []string{"*1", "*1x≥3"}, score: "≥4.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*1/*1+*1+*1", canonical: "*1/*1x≥3", alleles: []string{"*1", "*1x≥3"}, score: "≥4.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*4/*2x3", canonical: "*4/*2x≥3", alleles: []string{"*4", "*2x≥3"}, score: "≥3.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*4+*4/*1", canonical: "*4x2/*1", alleles: []string{"*4x2", "*1"}, score: "1.0", pheno: "Intermediate Metabolizer"}, // Aldy writes copies one by one (0xTCG/aldy#45)
	{written: "*1/*41x3", canonical: "*1/*41x3", alleles: []string{"*1", "*41x3"}, score: "1.75", pheno: "Normal Metabolizer"},
	{written: "*1x1/*4", canonical: "*1/*4", alleles: []string{"*1", "*4"}, score: "1.0", pheno: "Intermediate Metabolizer"},
	// Deletion.
	{written: "*1/*5", canonical: "*1/*5", alleles: []string{"*1", "*5"}, score: "1.0", pheno: "Intermediate Metabolizer"},
	{written: "*5/*5", canonical: "*5/*5", alleles: []string{"*5", "*5"}, score: "0.0", pheno: "Poor Metabolizer"},
	// Tandems and hybrids, upstream copy first, with or without spaces.
	{written: "*36+*10/*10", canonical: "*36 + *10/*10", alleles: []string{"*36 + *10", "*10"}, score: "0.5", pheno: "Intermediate Metabolizer"}, // Cyrius
	{written: "*1/*36+*10", canonical: "*1/*36 + *10", alleles: []string{"*1", "*36 + *10"}, score: "1.25", pheno: "Normal Metabolizer"},         // Aldy
	{written: "*68+*4/*4", canonical: "*68 + *4/*4", alleles: []string{"*68 + *4", "*4"}, score: "0.0", pheno: "Poor Metabolizer"},               // Cyrius
	{written: "*36x2+*10/*1", canonical: "*36x2 + *10/*1", alleles: []string{"*36x2 + *10", "*1"}, score: "1.25", pheno: "Normal Metabolizer"},
	{written: "*36+*36+*10/*1", canonical: "*36x2 + *10/*1", alleles: []string{"*36x2 + *10", "*1"}, score: "1.25", pheno: "Normal Metabolizer"},
	{written: "*36+*36+*10+*10/*10", canonical: "*36x2 + *10x2/*10", alleles: []string{"*36x2 + *10x2", "*10"}, score: "0.75", pheno: "Intermediate Metabolizer"},
	{written: "*13+*68+*68+*4/*1", canonical: "*13 + *68x2 + *4/*1", alleles: []string{"*13 + *68x2 + *4", "*1"}, score: "1.0", pheno: "Intermediate Metabolizer"},
	{written: "*13+*2/*2", canonical: "*13 + *2/*2", alleles: []string{"*13 + *2", "*2"}, score: "2.0", pheno: "Normal Metabolizer"},
	{written: "*13/*1", canonical: "*13/*1", alleles: []string{"*13", "*1"}, score: "1.0", pheno: "Intermediate Metabolizer"},
	{written: "CYP2D6*36+CYP2D6*10/CYP2D6*1", canonical: "*36 + *10/*1", alleles: []string{"*36 + *10", "*1"}, score: "1.25", pheno: "Normal Metabolizer"},
	// GeT-RM (Gaedigk 2019) writes a hybrid in parentheses: read as
	// present only when CPIC gives the same value either way (*68 + *4
	// and *4 both 0.0).
	{written: "*3/(*68)+*4", canonical: "*3/*68 + *4", alleles: []string{"*3", "*68 + *4"}, score: "0.0", pheno: "Poor Metabolizer"},
	// Sub-allele numbers and legacy letters.
	{written: "*2A/*4.001", canonical: "*2/*4", alleles: []string{"*2", "*4"}, score: "1.0", pheno: "Intermediate Metabolizer"},
	{written: "*4N/*10B", canonical: "*4/*10", alleles: []string{"*4", "*10"}, score: "0.25", pheno: "Intermediate Metabolizer"},
	{written: "*2Ax2/*1", canonical: "*2x2/*1", alleles: []string{"*2x2", "*1"}, score: "3.0", pheno: "Ultrarapid Metabolizer"},
	{written: "*36.001+*10.002/*1.001", canonical: "*36 + *10/*1", alleles: []string{"*36 + *10", "*1"}, score: "1.25", pheno: "Normal Metabolizer"},
	// No CPIC value: review naming it, never a summed guess.
	{written: "*1/*2xN", review: `"*2xN": an unknown copy number (*2xN) cannot be linked to a CPIC activity value`},
	{written: "*1/*10x3", review: `"*10x3": CPIC gives *10x3 (3 copies of *10) no activity value`},
	{written: "*1/*4+*10", review: `"*4+*10": CPIC gives the arrangement *4 + *10 no activity value`},
	{written: "*1/*10+*36", review: "CPIC gives the arrangement *10 + *36 no activity value (a sum of its parts' values would be a guess); CPIC has *36 + *10, written with the upstream copy first"},
	{written: "*4/*68+*68+*4", review: `"*68+*68+*4": CPIC gives the arrangement *68x2 + *4 no activity value`}, // Cyrius's Tandem with two *68 copies
	{written: "*1x2+*4x2+*10/*1", review: "CPIC gives the arrangement *1x2 + *4x2 + *10 no activity value"},     // PyPGx's complex example, which PyPGx sums to 2.25
	{written: "*1/(*10)+*2", review: "the copy in parentheses ((*10)) may or may not be present, and CPIC gives the arrangement with it (*10 + *2) and without it (*2) different or no activity values"},
	{written: "*1/(*2)+*2", review: `the copy in parentheses ((*2)) may or may not be present, and CPIC gives the arrangement with it (*2x2) and without it (*2) different or no activity values`},
	{written: "*1/*2x≥2", review: "CPIC gives *2x≥2 (2 or more copies of *2) no activity value"},
}

// TestStructuralNotations: every written form reads as its CPIC spelling
// and that spelling reads as itself (both ways), with the activity score
// and phenotype the knowledge gives it; through the engine with codeine
// the genotype is the same for both; an arrangement CPIC gives no value
// is a review naming it (no phenotype, no score), not a 422.
func TestStructuralNotations(t *testing.T) {
	k := kb(t)
	for _, tc := range structuralCases {
		forms := []string{tc.written}
		if tc.canonical != "" && tc.canonical != tc.written {
			forms = append(forms, tc.canonical)
		}
		for _, d := range forms {
			got, err := k.Caller().ParseDiplotype("CYP2D6", d)
			if tc.review != "" {
				if err == nil || !strings.Contains(err.Error(), tc.review) {
					t.Errorf("ParseDiplotype(%q): %v, %v; want an error naming %q", d, got, err, tc.review)
				}
			} else if err != nil {
				t.Errorf("ParseDiplotype(%q): %v", d, err)
			} else if diff := cmp.Diff(tc.alleles, got); diff != "" {
				t.Errorf("ParseDiplotype(%q) (-want +got):\n%s", d, diff)
			}

			res, err := k.Evaluate(engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": d}})
			if err != nil {
				t.Errorf("codeine with CYP2D6 %q: %v", d, err)
				continue
			}
			var call engine.GenotypeCall
			for _, g := range res.Genotype {
				if g.Gene == "CYP2D6" {
					call = g
				}
			}
			if tc.review != "" {
				if call.Phenotype != "Could not interpret — review" || call.ActivityScore != "" || call.Diplotype != "" {
					t.Errorf("codeine with CYP2D6 %q: genotype %+v, want a review without phenotype or score", d, call)
				}
				if !anyAlertHas(res, "CYP2D6", tc.review) {
					t.Errorf("codeine with CYP2D6 %q: no CYP2D6 alert names %q; alerts %v", d, tc.review, alertMessages(res))
				}
				continue
			}
			want := engine.GenotypeCall{Gene: "CYP2D6", Diplotype: strings.Join(tc.alleles, "/"), Phenotype: tc.pheno, ActivityScore: tc.score}
			call.UntestedAlleles = nil
			if diff := cmp.Diff(want, call); diff != "" {
				t.Errorf("codeine with CYP2D6 %q (-want +got):\n%s", d, diff)
			}
		}
	}
}

// TestStructuralAllelesReadBack: every CYP2D6 copy-number and tandem
// allele of the knowledge, written the way read-depth callers write it
// (no spaces round "+"; a duplicated copy written copy by copy, as
// Aldy and Cyrius do), reads back as that allele.
func TestStructuralAllelesReadBack(t *testing.T) {
	k := kb(t)
	g, ok := k.Gene("CYP2D6")
	if !ok {
		t.Fatal("no CYP2D6 in the knowledge")
	}
	copyRe := regexp.MustCompile(`^(\*[0-9]+)x([0-9]+)$`)
	n := 0
	for _, a := range g.Alleles {
		if !strings.ContainsAny(a.Name, "x+") {
			continue
		}
		n++
		parts := strings.Split(a.Name, " + ")
		var spelled []string
		for _, p := range parts {
			if m := copyRe.FindStringSubmatch(p); m != nil {
				c, _ := strconv.Atoi(m[2])
				for range c {
					spelled = append(spelled, m[1])
				}
				continue
			}
			spelled = append(spelled, p)
		}
		for _, w := range []string{strings.Join(parts, "+"), strings.Join(spelled, "+")} {
			got, err := k.Caller().ParseDiplotype("CYP2D6", "*1/"+w)
			want := []string{"*1", a.Name}
			if a.Name == "*41x3" && w == "*41+*41+*41" {
				// Three copies written one by one are *41x3; CPIC has it.
				want = []string{"*1", "*41x3"}
			}
			if err != nil {
				t.Errorf("*1/%s (for %s): %v", w, a.Name, err)
			} else if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("*1/%s (-want +got):\n%s", w, diff)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d CYP2D6 copy-number or tandem alleles in the knowledge; the test expects the CPIC ones (32)", n)
	}
}

func anyAlertHas(res engine.Result, gene, text string) bool {
	for _, a := range res.Alerts {
		if a.Gene == gene && strings.Contains(a.Message, text) {
			return true
		}
	}
	return false
}

func alertMessages(res engine.Result) []string {
	var out []string
	for _, a := range res.Alerts {
		out = append(out, fmt.Sprintf("%s %s: %s", a.Severity, a.Gene, a.Message))
	}
	return out
}
