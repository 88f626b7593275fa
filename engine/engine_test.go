package engine_test

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

func kb(t testing.TB) *evaluate.Engine {
	t.Helper()
	k, err := knowledge.Default()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	return k
}

func f(v float64) *float64 { return &v }

// anySeverity in a test table leaves the severity unchecked.
const anySeverity engine.Severity = -1

// check evaluates req and fails the test on a validation error.
func check(t *testing.T, req engine.Request) engine.Result {
	t.Helper()
	res, err := kb(t).Evaluate(req)
	if err != nil {
		t.Fatalf("Evaluate(%+v): %v", req, err)
	}
	return res
}

func confirmed(res engine.Result) []engine.Alert {
	var out []engine.Alert
	for _, a := range res.Alerts {
		if a.Category == engine.CategoryConfirmed {
			out = append(out, a)
		}
	}
	return out
}

// TestMustShow covers the foundation issue's clinical cases, each from
// rsIDs (with zygosity and genes_tested) and from diplotype or HLA input.
func TestMustShow(t *testing.T) {
	male := &engine.Patient{Sex: "male", AgeYears: f(54), MonthsOnDrug: f(0)}
	type want struct {
		gene, phenotype string
		severity        engine.Severity
		classification  string
		textContains    string
		alternatives    []string
	}
	tests := []struct {
		name string
		req  engine.Request
		want want
	}{
		{
			name: "clopidogrel CYP2C19 *2/*2 from rsIDs, ACS/PCI",
			req: engine.Request{Drug: "clopidogrel", Variants: []string{"rs12769205", "rs4244285"},
				Zygosity:    map[string]engine.Zygosity{"rs12769205": engine.Hom, "rs4244285": engine.Hom},
				GenesTested: []string{"CYP2C19"}, Indication: "acute coronary syndrome, PCI", Patient: male},
			want: want{"CYP2C19", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid clopidogrel", []string{"prasugrel", "ticagrelor"}},
		},
		{
			name: "clopidogrel CYP2C19 *2/*2 diplotype, ACS/PCI",
			req:  engine.Request{Drug: "Clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Indication: "ACS with stent (PCI)"},
			want: want{"CYP2C19", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid clopidogrel", []string{"prasugrel", "ticagrelor"}},
		},
		{
			name: "carbamazepine HLA-B*15:02 positive, naive",
			req:  engine.Request{Drug: "carbamazepine", HLA: map[string]string{"HLA-B*15:02": "positive"}, Patient: male},
			want: want{"HLA-B", "HLA-B*15:02 positive", engine.SeverityHigh, "Strong", "do not use carbamazepine", nil},
		},
		{
			name: "azathioprine TPMT and NUDT15 poor from rsIDs",
			req: engine.Request{Drug: "azathioprine", Variants: []string{"rs1800460", "rs1142345", "rs116855232"},
				Zygosity:    map[string]engine.Zygosity{"rs1800460": engine.Hom, "rs1142345": engine.Hom, "rs116855232": engine.Hom},
				GenesTested: []string{"TPMT", "NUDT15"}},
			want: want{"TPMT", "Poor Metabolizer", engine.SeverityHigh, "Strong", "non-thiopurine", nil},
		},
		{
			name: "azathioprine TPMT *3A/*3A and NUDT15 *3/*3 diplotypes",
			req:  engine.Request{Drug: "azathioprine", Diplotypes: map[string]string{"TPMT": "*3A/*3A", "NUDT15": "*3/*3"}},
			want: want{"TPMT", "Poor Metabolizer", engine.SeverityHigh, "Strong", "non-thiopurine", nil},
		},
		{
			name: "fluorouracil DPYD c.1905+1G>A homozygous from rsID",
			req: engine.Request{Drug: "fluorouracil", Variants: []string{"rs3918290"},
				Zygosity: map[string]engine.Zygosity{"rs3918290": engine.Hom}, GenesTested: []string{"DPYD"}},
			want: want{"DPYD", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid use of 5-fluorouracil", nil},
		},
		{
			name: "fluorouracil DPYD c.1905+1G>A homozygous diplotype",
			req:  engine.Request{Drug: " Fluorouracil ", Diplotypes: map[string]string{"DPYD": "c.1905+1G>A (*2A)/c.1905+1G>A (*2A)"}},
			want: want{"DPYD", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid use of 5-fluorouracil", nil},
		},
		{
			name: "codeine CYP2D6 *4/*4 from rsID",
			req: engine.Request{Drug: "codeine", Variants: []string{"rs3892097"},
				Zygosity: map[string]engine.Zygosity{"rs3892097": engine.Hom}, GenesTested: []string{"CYP2D6"}},
			want: want{"CYP2D6", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid codeine", nil},
		},
		{
			name: "codeine CYP2D6 *4/*4 diplotype",
			req:  engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*4/*4"}},
			want: want{"CYP2D6", "Poor Metabolizer", engine.SeverityHigh, "Strong", "Avoid codeine", nil},
		},
		{
			name: "simvastatin SLCO1B1 rs4149056 homozygous",
			req: engine.Request{Drug: "simvastatin", Variants: []string{"rs4149056"},
				Zygosity: map[string]engine.Zygosity{"rs4149056": engine.Hom}, GenesTested: []string{"SLCO1B1"}},
			want: want{"SLCO1B1", "Poor Function", engine.SeverityHigh, "Strong", "alternative statin", nil},
		},
		{
			name: "simvastatin SLCO1B1 *5/*5 diplotype",
			req:  engine.Request{Drug: "simvastatin", Diplotypes: map[string]string{"SLCO1B1": "*5/*5"}},
			want: want{"SLCO1B1", "Poor Function", engine.SeverityHigh, "Strong", "alternative statin", nil},
		},
		{
			name: "celecoxib CYP2C9 *3/*3 from rsID",
			req: engine.Request{Drug: "celecoxib", Variants: []string{"rs1057910"},
				Zygosity: map[string]engine.Zygosity{"rs1057910": engine.Hom}, GenesTested: []string{"CYP2C9"}},
			want: want{"CYP2C9", "Poor Metabolizer", anySeverity, "Moderate", "25-50% of the lowest recommended starting dose", nil},
		},
		{
			name: "celecoxib CYP2C9 *3/*3 diplotype",
			req:  engine.Request{Drug: "celecoxib", Diplotypes: map[string]string{"CYP2C9": "*3/*3"}},
			want: want{"CYP2C9", "Poor Metabolizer", anySeverity, "Moderate", "25-50% of the lowest recommended starting dose", nil},
		},
		{
			name: "rasburicase G6PD deficient male from rsID",
			req:  engine.Request{Drug: "rasburicase", Variants: []string{"rs5030868"}, GenesTested: []string{"G6PD"}, Patient: male},
			want: want{"G6PD", "Deficient", engine.SeverityHigh, "Strong", "Avoid use", nil},
		},
		{
			name: "rasburicase G6PD deficient male diplotype",
			req:  engine.Request{Drug: "rasburicase", Diplotypes: map[string]string{"G6PD": "A- 202A_376G"}, Patient: male},
			want: want{"G6PD", "Deficient", engine.SeverityHigh, "Strong", "Avoid use", nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.req)
			cs := confirmed(res)
			if len(cs) == 0 {
				t.Fatalf("no genotype-confirmed alert; alerts=%+v warnings=%v genotype=%+v", res.Alerts, res.Warnings, res.Genotype)
			}
			a := cs[0]
			var phen []string
			for _, g := range a.Genotype {
				if g.Gene == tt.want.gene {
					phen = append(phen, g.Phenotype)
				}
			}
			if !contains(phen, tt.want.phenotype) {
				t.Errorf("%s phenotypes %q (alert genotype %+v) do not include %q", tt.want.gene, phen, a.Genotype, tt.want.phenotype)
			}
			if tt.want.severity != anySeverity && a.Severity != tt.want.severity {
				t.Errorf("severity = %s, want %s (basis: %s)", a.Severity, tt.want.severity, a.Recommendation)
			}
			if a.Severity != engine.SeverityHigh && a.Severity != engine.SeverityModerate {
				t.Errorf("severity = %s, want HIGH or MODERATE", a.Severity)
			}
			if a.Classification != tt.want.classification {
				t.Errorf("classification = %q, want %q", a.Classification, tt.want.classification)
			}
			if !strings.Contains(a.Recommendation, tt.want.textContains) {
				t.Errorf("recommendation %q does not contain %q", a.Recommendation, tt.want.textContains)
			}
			for _, alt := range tt.want.alternatives {
				if !contains(a.Alternatives, alt) {
					t.Errorf("alternatives %q lack %q", a.Alternatives, alt)
				}
			}
			if a.Guideline == nil || a.Guideline.URL == "" || a.EvidenceLevel == "" {
				t.Errorf("guideline/evidence missing: %+v %q", a.Guideline, a.EvidenceLevel)
			}
			if !citesAlert(res, a.ID) {
				t.Errorf("no citation for the top alert %q: %+v", a.ID, res.SourceCitations)
			}
			if res.OverallSeverity != res.Alerts[0].Severity {
				t.Errorf("overall_severity %s != top alert %s", res.OverallSeverity, res.Alerts[0].Severity)
			}
			if len(tt.req.Diplotypes) > 0 || len(tt.req.HLA) > 0 {
				if a.Variant != "" {
					t.Errorf("variant %q invented for diplotype/HLA input", a.Variant)
				}
			}
		})
	}
}

func citesAlert(res engine.Result, id string) bool {
	for _, c := range res.AlertCitations(id) {
		if c.Target.Kind == engine.CitesAlert && c.URL != "" && c.Source != "" {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestNoFalseAlerts: a tested gene with no variant gives no HIGH/MODERATE
// genotype-confirmed alert; a variant of an unrelated gene gives none for
// the drug. So that an engine answering nothing cannot pass, each case
// also names what the answer must hold: the drug recognised, and either
// the tested gene interpreted (called) or the drug's untested gene flagged
// with a genotype-unknown alert.
func TestNoFalseAlerts(t *testing.T) {
	tests := []struct {
		name string
		req  engine.Request
		// called: genes that must appear interpreted in res.Genotype;
		// untested: genes that must have a genotype-unknown alert.
		called, untested []string
	}{
		{"clopidogrel, CYP2C19 tested, nothing found", engine.Request{Drug: "clopidogrel", GenesTested: []string{"CYP2C19"}, Indication: "PCI"}, []string{"CYP2C19"}, nil},
		{"clopidogrel, CYP2D6 variant only", engine.Request{Drug: "clopidogrel", Variants: []string{"rs3892097"}, Indication: "PCI"}, nil, []string{"CYP2C19"}},
		{"simvastatin, SLCO1B1 tested", engine.Request{Drug: "simvastatin", GenesTested: []string{"SLCO1B1"}}, []string{"SLCO1B1"}, nil},
		{"codeine, CYP2C19 variant only", engine.Request{Drug: "codeine", Variants: []string{"rs4244285"}}, nil, []string{"CYP2D6"}},
		{"fluorouracil, DPYD tested", engine.Request{Drug: "fluorouracil", GenesTested: []string{"DPYD"}}, []string{"DPYD"}, nil},
		{"azathioprine, TPMT and NUDT15 tested", engine.Request{Drug: "azathioprine", GenesTested: []string{"TPMT", "NUDT15"}}, []string{"TPMT", "NUDT15"}, nil},
		{"carbamazepine, HLA-B*15:02 negative and HLA-A*31:01 negative", engine.Request{Drug: "carbamazepine", HLA: map[string]string{"HLA-B*15:02": "negative", "HLA-A*31:01": "negative"}}, []string{"HLA-B"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.req)
			if !res.DrugRecognised {
				t.Fatalf("drug %q not recognised: nothing was checked", tt.req.Drug)
			}
			for _, g := range tt.called {
				found := false
				for _, c := range res.Genotype {
					found = found || c.Gene == g && c.Phenotype != ""
				}
				if !found {
					t.Errorf("%s was tested but is not interpreted: genotype %+v", g, res.Genotype)
				}
			}
			for _, g := range tt.untested {
				found := false
				for _, a := range res.Alerts {
					found = found || a.Gene == g && a.Category == engine.CategoryUnknown
				}
				if !found {
					t.Errorf("no genotype-unknown alert for the untested %s: alerts %+v", g, res.Alerts)
				}
			}
			for _, a := range confirmed(res) {
				if a.Severity == engine.SeverityHigh || a.Severity == engine.SeverityModerate {
					t.Errorf("unexpected %s alert for %s: %s", a.Severity, a.Gene, a.Message)
				}
			}
		})
	}
}

// TestPreTest: an untested level-A gene gives a genotype-unknown alert
// that recommends a test.
func TestPreTest(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrel", State: "Tamil Nadu"})
	var found bool
	for _, a := range res.Alerts {
		if a.Category == engine.CategoryUnknown && a.Gene == "CYP2C19" {
			found = true
			if !a.TestRecommended {
				t.Error("test_recommended false")
			}
			// CYP2C19 no-function alleles are common in India (*2 ≈ 0.36).
			if a.Severity != engine.SeverityModerate {
				t.Errorf("severity %s, want MODERATE", a.Severity)
			}
		}
	}
	if !found {
		t.Fatalf("no genotype-unknown CYP2C19 alert: %+v", res.Alerts)
	}
	if res.Confidence == "high" {
		t.Error("confidence high without a genotype")
	}
}

func TestUnknownDrug(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrl"})
	if res.DrugRecognised || res.Sensitivity != "none" {
		t.Errorf("drug_recognised=%v sensitivity=%s", res.DrugRecognised, res.Sensitivity)
	}
	if !contains(res.DidYouMean, "clopidogrel") {
		t.Errorf("did_you_mean = %v", res.DidYouMean)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[len(res.Warnings)-1], "does not mean it is safe") {
		t.Errorf("warnings = %v", res.Warnings)
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name   string
		req    engine.Request
		fields []string
	}{
		{"no drug", engine.Request{}, []string{"drug"}},
		{"bad rsid", engine.Request{Drug: "codeine", Variants: []string{"rs123", "rsABC", "12345"}}, []string{"variants[1]", "variants[2]"}},
		{"bad zygosity", engine.Request{Drug: "codeine", Variants: []string{"rs1"}, Zygosity: map[string]engine.Zygosity{"rs1": "double"}}, []string{"zygosity.rs1"}},
		{"zygosity for absent variant", engine.Request{Drug: "codeine", Zygosity: map[string]engine.Zygosity{"rs1": "hom"}}, []string{"zygosity.rs1"}},
		{"unknown gene", engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP9Z9": "*1/*1"}}, []string{"diplotypes.CYP9Z9"}},
		{"unknown allele", engine.Request{Drug: "codeine", Diplotypes: map[string]string{"CYP2D6": "*1/*999"}}, []string{"diplotypes.CYP2D6"}},
		{"bad hla", engine.Request{Drug: "abacavir", HLA: map[string]string{"B5701": "yes"}}, []string{"hla.B5701", "hla.B5701"}},
		{"bad sex", engine.Request{Drug: "abacavir", Patient: &engine.Patient{Sex: "x"}}, []string{"patient.sex"}},
		{"unknown tested gene", engine.Request{Drug: "abacavir", GenesTested: []string{"FOO"}}, []string{"genes_tested[0]"}},
		{"drug too long", engine.Request{Drug: strings.Repeat("x", 201)}, []string{"drug"}},
		{"indication too long", engine.Request{Drug: "codeine", Indication: strings.Repeat("x", 1001)}, []string{"indication"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kb(t).Evaluate(tt.req)
			var ve *engine.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, engine.ErrInvalid) {
				t.Fatalf("err = %v, want ValidationError", err)
			}
			var got []string
			for _, fe := range ve.Fields {
				got = append(got, fe.Field)
			}
			if diff := cmp.Diff(tt.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAmbiguousPhase: TPMT rs1800460 and rs1142345 (C) both heterozygous
// fit *1/*3A and *3B/*3C; PharmCAT's score prefers *1/*3A (the longer
// allele) and reports it with *3B/*3C named as the alternative
// (data/pgx/pharmcat/RULES.md §2.3, §3.3).
func TestAmbiguousPhase(t *testing.T) {
	res := check(t, engine.Request{Drug: "azathioprine", Variants: []string{"rs1800460", "rs1142345:C"},
		Zygosity:    map[string]engine.Zygosity{"rs1800460": engine.Het, "rs1142345": engine.Het},
		GenesTested: []string{"TPMT", "NUDT15"}})
	var diplotypes []string
	for _, g := range res.Genotype {
		if g.Gene == "TPMT" {
			diplotypes = append(diplotypes, g.Diplotype)
		}
	}
	if diff := cmp.Diff([]string{"*1/*3A"}, diplotypes); diff != "" {
		t.Fatalf("TPMT diplotypes (-want +got):\n%s", diff)
	}
	a := confirmed(res)
	if len(a) == 0 {
		t.Fatalf("no genotype-confirmed alert: %+v", res.Alerts)
	}
	if !strings.Contains(strings.Join(a[0].Assumptions, " "), "*3B/*3C (Poor Metabolizer)") {
		t.Errorf("the lower-scoring *3B/*3C reading is not named: %v", a[0].Assumptions)
	}
}

// TestBareRsID: rs4244285 alone still reads as CYP2C19*2, at least one
// copy, with the assumptions listed; CYP2D6 normal status is never called
// from rsIDs.
func TestBareRsID(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}, Indication: "PCI"})
	var got []string
	for _, g := range res.Genotype {
		got = append(got, g.Gene+" "+g.Diplotype+" "+g.Phenotype)
	}
	want := []string{"CYP2C19 *1/*2 Intermediate Metabolizer", "CYP2C19 *2/*38 Intermediate Metabolizer"}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("genotype (-want +got):\n%s", diff)
	}
	a := confirmed(res)
	if len(a) == 0 || a[0].Variant != "rs4244285" || a[0].StarAllele != "*2" {
		t.Fatalf("alert = %+v", a)
	}
	joined := strings.Join(a[0].Assumptions, "\n")
	for _, s := range []string{"assumed heterozygous", "rs3758581"} {
		if !strings.Contains(joined, s) {
			t.Errorf("assumptions lack %q:\n%s", s, joined)
		}
	}
	// The AMP tier-1 positions of *3 and *17 were not given: the reading
	// stays beside a review naming them.
	review := false
	for _, al := range res.Alerts {
		review = review || (al.Category == engine.CategoryUnknown && al.Gene == "CYP2C19" &&
			strings.Contains(al.Message, "AMP tier-1") && strings.Contains(al.Message, "rs12248560") && strings.Contains(al.Message, "rs4986893"))
	}
	if !review {
		t.Errorf("no review alert naming the tier-1 positions not given: %+v", res.Alerts)
	}

	res = check(t, engine.Request{Drug: "codeine", GenesTested: []string{"CYP2D6"}})
	for _, g := range res.Genotype {
		if g.Gene == "CYP2D6" && (g.Phenotype == "Normal Metabolizer" || g.Phenotype == "Ultrarapid Metabolizer") {
			t.Errorf("CYP2D6 %s called from rsIDs", g.Phenotype)
		}
	}
}

func TestG6PDFemaleHeterozygous(t *testing.T) {
	res := check(t, engine.Request{Drug: "rasburicase", Variants: []string{"rs5030868"}, GenesTested: []string{"G6PD"},
		Patient: &engine.Patient{Sex: "female"}})
	var phen []string
	for _, g := range res.Genotype {
		phen = append(phen, g.Phenotype)
	}
	if !contains(phen, "Variable") {
		t.Errorf("phenotypes = %v, want Variable", phen)
	}
	// CPIC: "enzyme activity must be measured" — shown, not silently
	// dropped, and MODERATE: rasburicase's Deficient row says avoid, so
	// the measurement decides (issue 21; it was INFO before).
	cs := confirmed(res)
	if len(cs) == 0 || cs[0].Severity != engine.SeverityModerate || !strings.Contains(cs[0].Recommendation, "enzyme activity") {
		t.Errorf("want a MODERATE alert with the enzyme-activity advice, got %+v", cs)
	}
}

// TestDiplotypeTable checks every row of CPIC's diplotype → phenotype
// table (knowledge/testdata copy of data/pgx/diplotype_phenotype.csv)
// against the engine's phenotype code.
func TestDiplotypeTable(t *testing.T) {
	k := kb(t)
	fh, err := os.Open("../knowledge/testdata/diplotype_phenotype.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bufio.NewReader(zr))
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	// RYR1 alleles CPIC reclassified from Malignant Hyperthermia associated
	// to uncertain function after the table's 2023-12 data (PharmCAT data
	// 2025-11-05; data/pgx/pharmcat/RULES.md §3.2): rows with them are
	// checked against the current function instead.
	reclassified := map[string]bool{"c.1209C>G": true, "c.7522C>G": true, "c.14387A>G": true, "c.14693T>C": true}
	rows, failures, changed := 0, 0, 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows++
		gene, dip := rec[col["gene"]], rec[col["diplotype"]]
		alleles, err := k.Caller().ParseDiplotype(gene, dip)
		if err == nil && rec[col["n_alleles"]] == "2" && len(alleles) == 1 {
			alleles = []string{dip, dip} // cannot happen for a real pair; keeps the count honest
		}
		var call calling.PhenotypeCall
		if err == nil {
			call, err = k.Caller().Phenotype(gene, alleles...)
		}
		if gene == "RYR1" && err == nil && (reclassified[alleles[0]] || reclassified[alleles[len(alleles)-1]]) {
			changed++
			want := "Uncertain Susceptibility"
			for _, f := range call.Functions {
				if f == "Malignant Hyperthermia associated" {
					want = "Malignant Hyperthermia Susceptibility"
				}
			}
			if call.Phenotype != want {
				t.Errorf("RYR1 %s: got %q, want %q from the current functions %v", dip, call.Phenotype, want, call.Functions)
			}
			continue
		}
		if err != nil || call.Phenotype != rec[col["phenotype"]] || call.ActivityScore != rec[col["activity_score"]] || call.LookupKey != rec[col["cpic_lookup_key"]] {
			failures++
			if failures <= 20 {
				t.Errorf("%s %s: got (%q, %q, %q, %v), want (%q, %q, %q)", gene, dip, call.Phenotype, call.ActivityScore, call.LookupKey, err,
					rec[col["phenotype"]], rec[col["activity_score"]], rec[col["cpic_lookup_key"]])
			}
		}
	}
	if rows < 50000 {
		t.Errorf("only %d rows read", rows)
	}
	if failures > 0 {
		t.Errorf("%d of %d rows disagree", failures, rows)
	}
	if changed == 0 {
		t.Error("no RYR1 row with a reclassified allele was seen")
	}
}

// TestMissingGeneNotInvented: carbamazepine with only HLA-B*15:02 given
// uses CPIC's HLA-A-negative row but never reports an HLA-A result, and
// asks for the HLA-A test.
func TestMissingGeneNotInvented(t *testing.T) {
	res := check(t, engine.Request{Drug: "carbamazepine", HLA: map[string]string{"HLA-B*15:02": "positive"}, Patient: &engine.Patient{MonthsOnDrug: f(0)}})
	cs := confirmed(res)
	if len(cs) != 1 {
		t.Fatalf("confirmed alerts = %+v", cs)
	}
	for _, g := range cs[0].Genotype {
		if g.Gene == "HLA-A" {
			t.Errorf("HLA-A result invented: %+v", g)
		}
	}
	if !strings.Contains(strings.Join(cs[0].Assumptions, " "), "HLA-A was not given") {
		t.Errorf("assumptions = %v", cs[0].Assumptions)
	}
	var pretest bool
	for _, a := range res.Alerts {
		pretest = pretest || (a.Category == engine.CategoryUnknown && a.Gene == "HLA-A" && a.TestRecommended)
	}
	if !pretest {
		t.Error("no HLA-A pre-test alert")
	}
}

// TestDPWGOnly: a drug with DPWG guidance only is answered from the DPWG
// rows and labelled so.
func TestDPWGOnly(t *testing.T) {
	res := check(t, engine.Request{Drug: "siponimod", Diplotypes: map[string]string{"CYP2C9": "*3/*3"}})
	cs := confirmed(res)
	if len(cs) == 0 || cs[0].Severity != engine.SeverityHigh || cs[0].GuidanceSource != "DPWG" {
		t.Fatalf("alerts = %+v", res.Alerts)
	}
	if !strings.Contains(res.SourceCitations[0].Source, "CC BY-SA 4.0") {
		t.Errorf("DPWG citation lacks the ClinPGx licence: %+v", res.SourceCitations[0])
	}
}

// TestCYP2D6AmbiguousCells: CPIC writes some *4 positions as IUPAC
// "either base" codes; a *4 carrier with *2/*10 markers is still read
// (*1/*4), not dropped, and as position data it is provisional.
func TestCYP2D6AmbiguousCells(t *testing.T) {
	// *1/*4 from position data is provisional: a *1x2/*4 patient reads
	// the same and is a normal metabolizer, so no phenotype is given and
	// the review asks for copy number.
	res := check(t, engine.Request{Drug: "codeine", Variants: []string{"rs16947", "rs1135840", "rs1065852", "rs3892097"}, GenesTested: []string{"CYP2D6"}})
	for _, g := range res.Genotype {
		if g.Gene == "CYP2D6" && g.Phenotype != "Could not interpret — review" {
			t.Errorf("CYP2D6 reading %s %s, want a review", g.Diplotype, g.Phenotype)
		}
	}
	if cs := confirmed(res); len(cs) > 0 {
		t.Errorf("confirmed alerts from a provisional CYP2D6 reading: %+v", cs)
	}
	found := false
	for _, a := range res.Alerts {
		found = found || (a.Gene == "CYP2D6" && strings.Contains(a.Message, "*1/*4 (provisional)") && strings.Contains(a.Message, "copy-number call"))
	}
	if !found {
		t.Fatalf("want a CYP2D6 review naming the provisional *1/*4 and asking for copy number, got %+v", res.Alerts)
	}
}

// TestEveryGeneTested: listing any knowledge gene in genes_tested, alone or
// with a variant of it, never fails an evaluation.
func TestEveryGeneTested(t *testing.T) {
	k := kb(t)
	for _, g := range k.Genes {
		for _, drug := range []string{"clopidogrel", "amikacin", "codeine", "carbamazepine"} {
			req := engine.Request{Drug: drug, GenesTested: []string{g.Symbol}}
			if _, err := k.Evaluate(req); err != nil {
				t.Errorf("%s tested, %s: %v", g.Symbol, drug, err)
			}
		}
	}
	for _, r := range k.RsIDs {
		for _, z := range []engine.Zygosity{engine.Het, engine.Hom} {
			req := engine.Request{Drug: "warfarin", Variants: []string{r.RsID}, Zygosity: map[string]engine.Zygosity{r.RsID: z}, GenesTested: []string{r.Gene}}
			if _, err := k.Evaluate(req); err != nil {
				t.Errorf("%s %s: %v", r.RsID, z, err)
			}
		}
	}
}

// TestDiplotypesAcrossDrugs evaluates a sample of CPIC diplotypes (every
// 97th row of the table) against every drug whose recommendations use the
// gene: each must evaluate, and a HIGH alert must carry a guideline.
func TestDiplotypesAcrossDrugs(t *testing.T) {
	k := kb(t)
	byGene := map[string][]string{}
	for _, r := range k.Recommendations {
		for _, g := range r.Genes {
			if !contains(byGene[g], r.Drug) {
				byGene[g] = append(byGene[g], r.Drug)
			}
		}
	}
	fh, err := os.Open("../knowledge/testdata/diplotype_phenotype.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(zr)
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	n := 0
	for i := 0; ; i++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i%97 != 0 {
			continue
		}
		gene, dip := rec[0], rec[1]
		for _, drug := range byGene[gene] {
			n++
			sex := "female"
			if rec[col["n_alleles"]] == "1" {
				sex = "male" // a one-allele G6PD row is a hemizygous genotype
			}
			res, err := k.Evaluate(engine.Request{Drug: drug, Diplotypes: map[string]string{gene: dip}, Patient: &engine.Patient{Sex: sex}})
			if err != nil {
				t.Errorf("%s %s %s: %v", drug, gene, dip, err)
				continue
			}
			for _, a := range res.Alerts {
				if a.Severity == engine.SeverityHigh && (a.Guideline == nil || a.Guideline.Name == "") {
					t.Errorf("%s %s %s: HIGH alert without a guideline", drug, gene, dip)
				}
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d evaluations", n)
	}
	t.Logf("%d evaluations", n)
}

// TestNoGenotypeNoReassurance: with no genotype at all, no drug gets a
// genotype-confirmed alert or a "needs no change" note (CPIC multi-gene
// tables have Normal/Normal rows that must not match on assumptions).
func TestNoGenotypeNoReassurance(t *testing.T) {
	k := kb(t)
	for _, d := range k.Drugs {
		res, err := k.Evaluate(engine.Request{Drug: d.Name})
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if cs := confirmed(res); len(cs) > 0 {
			t.Errorf("%s: genotype-confirmed alert without a genotype: %s", d.Name, cs[0].Message)
		}
		for _, w := range res.Warnings {
			if strings.Contains(w, "needs no change") {
				t.Errorf("%s: %q without a genotype", d.Name, w)
			}
		}
	}
}

// TestPartialGene: a gene read from rsIDs without genes_tested keeps a
// test recommendation unless its answer is already HIGH, and confidence is
// not high.
func TestPartialGene(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrel", Variants: []string{"rs12248560"}, Indication: "PCI"})
	// rs12248560 alone leaves the other AMP tier-1 positions of CYP2C19
	// without evidence: a review alert names them.
	var partial bool
	for _, a := range res.Alerts {
		partial = partial || (a.Category == engine.CategoryUnknown && a.Gene == "CYP2C19" && strings.Contains(a.Message, "rs4244285"))
	}
	if !partial || res.Confidence == "high" {
		t.Errorf("partial=%v confidence=%s alerts=%+v", partial, res.Confidence, res.Alerts)
	}
	res = check(t, engine.Request{Drug: "clopidogrel", Variants: []string{"rs12248560"}, GenesTested: []string{"CYP2C19"}, Indication: "PCI"})
	for _, a := range res.Alerts {
		if a.Category == engine.CategoryUnknown {
			t.Errorf("unexpected test alert with CYP2C19 in genes_tested: %s", a.Message)
		}
	}
}

// TestCompositeAlleleNames: labs write DPYD *2A as "*2A" or
// "c.1905+1G>A"; both resolve to CPIC's "c.1905+1G>A (*2A)".
func TestCompositeAlleleNames(t *testing.T) {
	for _, d := range []string{"*2A/*2A", "c.1905+1G>A/c.1905+1G>A", "c.1905+1G>A (*2A)/*2A"} {
		res := check(t, engine.Request{Drug: "fluorouracil", Diplotypes: map[string]string{"DPYD": d}})
		if res.OverallSeverity != engine.SeverityHigh {
			t.Errorf("%s: overall %s", d, res.OverallSeverity)
		}
	}
}
