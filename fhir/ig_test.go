package fhir_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// igRead is what pgxsafety read from a set of Genomics Reporting IG
// examples.
type igRead struct {
	Diplotypes map[string]string
	HLA        map[string]string
	Variants   []string
	// Uninterpreted maps each result present but not interpreted to the
	// genes it may concern ("*" for any gene).
	Uninterpreted map[string]string
	// Implications maps each Therapeutic Implication to "drug: phenotype
	// (resolved|not checked)".
	Implications map[string]string
}

// igCase is one pharmacogenomic example of the IG package (or a set read
// as one patient's record) with what a pharmacist expects: what is read,
// and for a drug the top severity and the finding.
type igCase struct {
	name  string
	files []string
	read  igRead
	drug  string
	// severity is the engine's overall severity for drug (anySeverity:
	// not checked); finding is a
	// phrase the answer must hold (phenotype or allele status), or the
	// gene whose result must be reported present but not interpreted.
	severity engine.Severity
	finding  string
}

// anySeverity in a test table leaves the severity unchecked.
const anySeverity engine.Severity = -1

func igFiles(t *testing.T, names ...string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "ig", n))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := fhir.Resources(b)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, rs...)
	}
	return out
}

func readOf(g fhir.Genomics) igRead {
	r := igRead{Diplotypes: g.Diplotypes, HLA: g.HLA, Variants: g.Variants}
	for _, u := range g.Uninterpreted {
		if r.Uninterpreted == nil {
			r.Uninterpreted = map[string]string{}
		}
		switch {
		case u.AnyGene:
			r.Uninterpreted[u.Ref] = "*"
		case u.Gene != "":
			r.Uninterpreted[u.Ref] = u.Gene
		default:
			r.Uninterpreted[u.Ref] = strings.Join(u.Genes, ",")
		}
	}
	for _, im := range g.Implications {
		if r.Implications == nil {
			r.Implications = map[string]string{}
		}
		st := "not checked"
		if im.Resolved {
			st = "resolved"
		}
		r.Implications[im.Ref] = fmt.Sprintf("%s: %s (%s)", firstOf(im.Drug, im.Medication), im.Phenotype, st)
	}
	return r
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func grch37(refs ...string) map[string]string {
	m := map[string]string{}
	for _, r := range refs {
		gene, ref, _ := strings.Cut(r, "=")
		m["Observation/"+ref] = gene
	}
	return m
}

// TestIGExamples reads every pharmacogenomic example of the Genomics
// Reporting IG 3.0.0 package (testdata/fhir/ig, CC0) and checks what was
// read and, with a drug, the answer a pharmacist expects. The log lists,
// per example, what was read.
func TestIGExamples(t *testing.T) {
	pmVars := []string{"Observation-Pgx-var-1011.json", "Observation-Pgx-var-1012.json", "Observation-Pgx-var-1013.json",
		"Observation-Pgx-var-1014.json", "Observation-Pgx-var-1015.json", "Observation-Pgx-var-1016.json",
		"Observation-Pgx-var-1017.json", "Observation-Pgx-var-1018.json"}
	cases := []igCase{
		{
			name:  "HLA full bundle (GL Strings, G groups, haplotypes) with abacavir",
			files: []string{"Bundle-bundle-CG-IG-HLA-FullBundle-01.json"},
			read: igRead{HLA: map[string]string{"HLA-A*31:01": "negative", "HLA-B*15:02": "negative",
				"HLA-B*57:01": "positive", "HLA-B*58:01": "negative"}},
			drug: "abacavir", severity: engine.SeverityHigh, finding: "*57:01 positive",
		},
		{
			name:  "HLA full bundle with carbamazepine (HLA-A genotype malformed: its haplotypes are used)",
			files: []string{"Bundle-bundle-CG-IG-HLA-FullBundle-01.json"},
			read: igRead{HLA: map[string]string{"HLA-A*31:01": "negative", "HLA-B*15:02": "negative",
				"HLA-B*57:01": "positive", "HLA-B*58:01": "negative"}},
			drug: "carbamazepine", severity: engine.SeverityNone, finding: "*15:02 negative",
		},
		{
			name:  "HLA-B*15:02 genotype (ClinVar-coded display) and the lab's implication, with carbamazepine",
			files: []string{"Observation-GenotypeExample1.json", "Observation-TherapeuticImplicationExample1.json"},
			// One allele named: silent on *57:01 and *58:01 (an abacavir
			// order would ask for review, not a test).
			read: igRead{HLA: map[string]string{"HLA-B*15:02": "positive"}, Uninterpreted: map[string]string{"Observation/GenotypeExample1": "HLA-B"},
				Implications: map[string]string{"Observation/TherapeuticImplicationExample1": "carbamazepine: High risk (resolved)"}},
			drug: "carbamazepine", severity: engine.SeverityHigh, finding: "*15:02 positive",
		},
		{
			name:  "HLA-A GL String genotype with its haplotype",
			files: []string{"Observation-genotype-hla-a-glstring-r4.json", "Observation-haplotype-hla-a-1-r4.json"},
			read:  igRead{HLA: map[string]string{"HLA-A*31:01": "negative"}},
		},
		{
			name:  "HLA-A haplotypes *24:02 and *02:06 make a genotype",
			files: []string{"Observation-HLA-A-haplotype1.json", "Observation-HLA-A-haplotype2.json"},
			read:  igRead{HLA: map[string]string{"HLA-A*31:01": "negative"}},
		},
		{
			name:  "HLA-B haplotypes *35:01 twice, with abacavir",
			files: []string{"Observation-HLA-B-haplotype1.json", "Observation-HLA-B-haplotype2.json"},
			read:  igRead{HLA: map[string]string{"HLA-B*15:02": "negative", "HLA-B*57:01": "negative", "HLA-B*58:01": "negative"}},
			drug:  "abacavir", severity: engine.SeverityNone, finding: "*57:01 negative",
		},
		{
			name:  "HLA-C haplotypes (no guideline keys on HLA-C alleles)",
			files: []string{"Observation-HLA-C-haplotype1.json", "Observation-HLA-C-haplotype2.json"},
			read:  igRead{},
		},
		{
			name:  "one HLA-A haplotype alone is not a genotype",
			files: []string{"Observation-HLA-A-haplotype1.json"},
			read:  igRead{Uninterpreted: map[string]string{"Observation/HLA-A-haplotype1": "HLA-A"}},
		},
		{
			name:  "one HLA-A haplotype (IMGT name, four fields) alone",
			files: []string{"Observation-haplotype-hla-a-1-r4.json"},
			read:  igRead{Uninterpreted: map[string]string{"Observation/haplotype-hla-a-1-r4": "HLA-A"}},
		},
		{
			name: "HLA-B haplotype alone", files: []string{"Observation-HLA-B-haplotype1.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HLA-B-haplotype1": "HLA-B"}},
		},
		{
			name: "HLA-B haplotype 2 alone", files: []string{"Observation-HLA-B-haplotype2.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HLA-B-haplotype2": "HLA-B"}},
		},
		{
			name: "HLA-A haplotype 2 alone", files: []string{"Observation-HLA-A-haplotype2.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HLA-A-haplotype2": "HLA-A"}},
		},
		{
			name: "HLA-C haplotype alone", files: []string{"Observation-HLA-C-haplotype1.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HLA-C-haplotype1": "HLA-C"}},
		},
		{
			name: "HLA-C haplotype 2 alone", files: []string{"Observation-HLA-C-haplotype2.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HLA-C-haplotype2": "HLA-C"}},
		},
		{
			name: "HLA-A GL String genotype alone", files: []string{"Observation-genotype-hla-a-glstring-r4.json"},
			read: igRead{HLA: map[string]string{"HLA-A*31:01": "negative"}},
			drug: "carbamazepine", severity: engine.SeverityModerate, finding: "HLA-B, which was not genotyped",
		},
		{
			name:  "PharmVar sub-allele genotype CYP2D6*7.001 / CYP2D6*1.001, with codeine",
			files: []string{"Observation-GenotypeExamplePharmVar.json"},
			// The engine reads PharmVar sub-allele numbers itself.
			read: igRead{Diplotypes: map[string]string{"CYP2D6": "*7.001 / *1.001"}},
			drug: "codeine", severity: engine.SeverityModerate, finding: "Intermediate Metabolizer",
		},
		{
			name:  "PharmVar sub-allele haplotypes CYP2D6*7.001 and *1.001 make the same genotype",
			files: []string{"Observation-HaplotypeExamplePharmVar01.json", "Observation-HaplotypeExamplePharmVar02.json"},
			read:  igRead{Diplotypes: map[string]string{"CYP2D6": "*7.001/*1.001"}},
			drug:  "codeine", severity: engine.SeverityModerate, finding: "Intermediate Metabolizer",
		},
		{
			name: "PharmVar haplotype alone", files: []string{"Observation-HaplotypeExamplePharmVar01.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HaplotypeExamplePharmVar01": "CYP2D6"}},
		},
		{
			name: "PharmVar haplotype 2 alone", files: []string{"Observation-HaplotypeExamplePharmVar02.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/HaplotypeExamplePharmVar02": "CYP2D6"}},
		},
		{
			name:  "CYP2C19 *2/*2 with the lab's clopidogrel implication, with clopidogrel",
			files: []string{"Observation-Pgx-geno-1001.json", "Observation-TxImp01.json"},
			read:  igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Implications: map[string]string{"Observation/TxImp01": "clopidogrel: Poor metabolizer (resolved)"}},
			drug:  "clopidogrel", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name: "CYP2C19 *2/*2 with voriconazole", files: []string{"Observation-Pgx-geno-1001.json", "Observation-TxImp02.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Implications: map[string]string{"Observation/TxImp02": "voriconazole: Poor metabolizer (resolved)"}},
			drug: "voriconazole", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name: "CYP2C19 *2/*2 with citalopram", files: []string{"Observation-Pgx-geno-1001.json", "Observation-TxImp03.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Implications: map[string]string{"Observation/TxImp03": "citalopram: Poor metabolizer (resolved)"}},
			drug: "citalopram", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name: "CYP2C19 *2/*2 with escitalopram", files: []string{"Observation-Pgx-geno-1001.json", "Observation-TxImp04.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Implications: map[string]string{"Observation/TxImp04": "escitalopram: Poor metabolizer (resolved)"}},
			drug: "escitalopram", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name: "CYP2C19 *2/*2 with amitriptyline", files: []string{"Observation-Pgx-geno-1001.json", "Observation-TxImp05.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}, Implications: map[string]string{"Observation/TxImp05": "amitriptyline: Poor metabolizer (resolved)"}},
			drug: "amitriptyline", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name:  "CYP2C9 *1/*1 and VKORC1 rs9923231 C/T with the lab's warfarin implication, with warfarin",
			files: []string{"Observation-Pgx-geno-1002.json", "Observation-Pgx-geno-1003.json", "Observation-TxImp06.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C9": "*1/*1", "VKORC1": "rs9923231 reference (C)/rs9923231 variant (T)"},
				Implications: map[string]string{"Observation/TxImp06": "warfarin: Normal metabolizer (resolved)"}},
			drug: "warfarin", severity: engine.SeverityModerate, finding: "pharmacogenetic algorithm",
		},
		{
			name:  "the lab's implication without its genotype is not checked",
			files: []string{"Observation-TherapeuticImplicationExample1.json"},
			read:  igRead{Implications: map[string]string{"Observation/TherapeuticImplicationExample1": "carbamazepine: High risk (not checked)"}},
		},
		{
			name:  "CYP2C19 and CYP2C9 variants given by GRCh37 position or HGVS only, with clopidogrel",
			files: pmVars,
			read: igRead{Uninterpreted: grch37("CYP2C19=Pgx-var-1011", "CYP2C19=Pgx-var-1012", "CYP2C19=Pgx-var-1013",
				"CYP2C19=Pgx-var-1014", "CYP2C19=Pgx-var-1015", "CYP2C19=Pgx-var-1016", "CYP2C19=Pgx-var-1017", "CYP2C19=Pgx-var-1018")},
			drug: "clopidogrel", severity: engine.SeverityModerate, finding: "uninterpreted CYP2C19",
		},
		{
			name:  "VKORC1 and CYP2C9 variants by GRCh37 position or HGVS only",
			files: []string{"Observation-Pgx-var-1019.json", "Observation-Pgx-var-1020.json", "Observation-Pgx-var-1021.json"},
			read:  igRead{Uninterpreted: grch37("VKORC1=Pgx-var-1019", "CYP2C9=Pgx-var-1020", "CYP2C9=Pgx-var-1021")},
			drug:  "warfarin", severity: anySeverity, finding: "uninterpreted CYP2C9",
		},
		{
			name: "the IG's PGx record of CGPatientExample01 together: genotypes win over the GRCh37 variants",
			files: append(append([]string{"Observation-Pgx-geno-1001.json", "Observation-Pgx-geno-1002.json", "Observation-Pgx-geno-1003.json",
				"Observation-Pgx-var-1019.json", "Observation-Pgx-var-1020.json", "Observation-Pgx-var-1021.json"}, pmVars...), "Observation-TxImp01.json"),
			read: igRead{Diplotypes: map[string]string{"CYP2C19": "*2/*2", "CYP2C9": "*1/*1", "VKORC1": "rs9923231 reference (C)/rs9923231 variant (T)"},
				Implications: map[string]string{"Observation/TxImp01": "clopidogrel: Poor metabolizer (resolved)"}},
			drug: "clopidogrel", severity: engine.SeverityHigh, finding: "Poor Metabolizer",
		},
		{
			name:  "CYP2C19 bundle: 74 variants by GRCh37 position, no rsID (and a phase Observation), with clopidogrel",
			files: []string{"Bundle-bundle-CYP2C19.json"},
			drug:  "clopidogrel", severity: engine.SeverityModerate, finding: "uninterpreted CYP2C19",
		},
		{
			name:  "CYP2C19 phase-relation bundle: two GRCh37 variants",
			files: []string{"Bundle-bundle-sequence-phase-relation-CYP2C19.json"},
			read:  igRead{Uninterpreted: map[string]string{"Observation/dv-5c7e9e1ca8252": "CYP2C19,CYP2C9", "Observation/dv-5c7e9e1ca82e4": "CYP2C19,CYP2C9"}},
		},
		{
			name:  "PGx example bundle: CYP2C9 *4/*35B (legacy sub-allele), haplotypes and two rsIDs no definition knows",
			files: []string{"Bundle-bundle-pgxexample.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C9": "*4/*35"}, Variants: []string{"rs12345", "rs233455"},
				Implications: map[string]string{"Observation/med-impact-pgx-example": "mercaptopurine: Rapid metabolizer (resolved)"}},
			drug: "celecoxib", severity: anySeverity, finding: "rs12345",
		},
		{
			name:  "clinical-genomics example bundle: CYP2C9 *2/*5 with warfarin implications; a gene-less haplotype and CYP2D6 transcript HGVS",
			files: []string{"Bundle-bundle-cgexample.json"},
			read: igRead{Diplotypes: map[string]string{"CYP2C9": "*2/*5"},
				Uninterpreted: map[string]string{"Observation/complex-variant": "*", "Observation/complex-component-D": "*",
					"Observation/complex-component-E": "*", "Observation/haplotype": "*"},
				Implications: map[string]string{"Observation/metab": "warfarin: Rapid metabolizer (resolved)",
					"Observation/efficacy": "warfarin: Resistant (resolved)", "Observation/highrisk": "warfarin: Low risk (resolved)"}},
			drug: "warfarin", severity: engine.SeverityModerate, finding: "CYP2C9",
		},
		{
			name:  "APOE genotype and haplotypes (not CPIC allele names)",
			files: []string{"Observation-Genotype-Clinical-Trial-Example-using-haplotypes.json", "Observation-HaplotypeSet-Clinical-Trial-Example-1of2.json", "Observation-HaplotypeSet-Clinical-Trial-Example-2of2.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/Genotype-Clinical-Trial-Example-using-haplotypes": "APOE",
				"Observation/HaplotypeSet-Clinical-Trial-Example-1of2": "APOE"}},
		},
		{
			name:  "variants by position on chr17 (no pharmacogene), NCBI36 chr19 and GRCh37 chr10, and their phase",
			files: []string{"Observation-VariantExample.json", "Observation-VariantExample1.json", "Observation-VariantExample2.json", "Observation-SequencePhaseRelationExample1.json"},
			read: igRead{Uninterpreted: map[string]string{"Observation/VariantExample1": "CYP2B6,CYP4F2,IFNL3,RYR1",
				"Observation/VariantExample2": "CYP2C19,CYP2C9"}},
		},
		{
			// A pharmacist reads the results themselves: reports, groupers,
			// the lab's recommendation Tasks and a medication statement
			// carry none (they reference the Observations above).
			name: "reports, groupers, recommendation Tasks and a MedicationStatement hold no result of their own",
			files: []string{"DiagnosticReport-PGxGenomicReportEMERGE.json", "DiagnosticReport-PGxGenomicReportEMERGE-withGrouping.json",
				"DiagnosticReport-diagnosticreport-hla-glstring-r4.json", "Observation-GrouperEx01.json", "Observation-GrouperEx02.json",
				"Observation-GrouperEx03.json", "MedicationStatement-MedicationStatementWarfarin.json", "Task-PGxRecEx01.json",
				"Task-PGxRecEx02.json", "Task-PGxRecEx03.json", "Task-PGxRecEx04.json", "Task-PGxRecEx05.json",
				"Task-MedicationRecommendationExample1.json"},
			read: igRead{},
		},
	}
	covered := map[string]bool{}
	var summary []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mapper.ReadGenomics(igFiles(t, tc.files...), "", "ig")
			got := readOf(g)
			want := tc.read
			if tc.name == "CYP2C19 bundle: 74 variants by GRCh37 position, no rsID (and a phase Observation), with clopidogrel" {
				if n := len(got.Uninterpreted); n != 74 {
					t.Errorf("%d results present but not interpreted, want 74", n)
				}
				want.Uninterpreted = got.Uninterpreted
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("read (-want +got):\n%s", d)
			}
			for _, is := range g.Issues {
				if is.Severity == fhir.IssueError && !strings.HasPrefix(is.Message, "present but not interpreted") {
					t.Errorf("unexpected error: %+v", is)
				}
			}
			for _, f := range tc.files {
				covered[f] = true
			}
			line := fmt.Sprintf("%s: diplotypes %v, HLA %v, variants %v, not interpreted %d, implications %d", strings.Join(tc.files, " + "),
				got.Diplotypes, got.HLA, got.Variants, len(got.Uninterpreted), len(got.Implications))
			for _, r := range g.Results {
				if r.Note != "" {
					line += fmt.Sprintf("\n    %s: %s", r.Ref, r.Note)
				}
			}
			if tc.drug == "" {
				summary = append(summary, line)
				return
			}
			req := engine.Request{Drug: tc.drug}
			g.Apply(&req)
			res, err := kb.Evaluate(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := json.Marshal(res.Alerts)
			line += fmt.Sprintf("\n    %s → %s", tc.drug, res.OverallSeverity)
			summary = append(summary, line)
			if tc.severity != anySeverity && res.OverallSeverity != tc.severity {
				t.Errorf("%s: overall severity %s, want %s; alerts %s", tc.drug, res.OverallSeverity, tc.severity, answer)
			}
			if gene, ok := strings.CutPrefix(tc.finding, "uninterpreted "); ok {
				if len(g.UninterpretedFor(gene)) == 0 {
					t.Errorf("no %s result reported present but not interpreted", gene)
				}
				return
			}
			all, _ := json.Marshal(res)
			if !strings.Contains(string(all), tc.finding) {
				t.Errorf("%s: the answer does not say %q: %s", tc.drug, tc.finding, answer)
			}
		})
	}
	sort.Strings(summary)
	t.Logf("what was read, per example:\n%s", strings.Join(summary, "\n"))
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "fhir", "ig", "*.json"))
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("%s is not read by any case", filepath.Base(f))
		}
	}
}

// BenchmarkReadGenomicsIG reads two IG bundles: the HLA full bundle (GL
// Strings, 27 entries) and the CYP2C19 bundle (74 variants by position).
func BenchmarkReadGenomicsIG(b *testing.B) {
	for _, name := range []string{"Bundle-bundle-CG-IG-HLA-FullBundle-01.json", "Bundle-bundle-CYP2C19.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", "ig", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(strings.TrimPrefix(name, "Bundle-bundle-"), ".json"), func(b *testing.B) {
			for b.Loop() {
				raws, err := fhir.Resources(raw)
				if err != nil {
					b.Fatal(err)
				}
				if g := mapper.ReadGenomics(raws, "", "bench"); len(g.Results) == 0 {
					b.Fatal("nothing read")
				}
			}
		})
	}
}
