package outside

import (
	"archive/zip"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testMax = 1 << 20

type readCase struct {
	name string
	in   string
	want []Call
	// errLine, when errMsg is set, is the line the refusal must name.
	errLine int
	errMsg  string
}

func runReadCases(t *testing.T, format string, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.in), testMax)
			checkRead(t, format, got, err, tc)
		})
	}
}

func checkRead(t *testing.T, format string, got File, err error, tc readCase) {
	t.Helper()
	if tc.errMsg != "" {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want a *ParseError containing %q", err, tc.errMsg)
		}
		if pe.Line != tc.errLine || !strings.Contains(pe.Msg, tc.errMsg) {
			t.Fatalf("err = line %d %q, want line %d containing %q", pe.Line, pe.Msg, tc.errLine, tc.errMsg)
		}
		return
	}
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got.Format != format {
		t.Errorf("Format = %q, want %q", got.Format, format)
	}
	if diff := cmp.Diff(tc.want, got.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestPharmCAT(t *testing.T) {
	pc := func(gene, dip, pheno, as, src string) Call {
		return Call{Gene: gene, Diplotype: dip, Phenotype: pheno, ActivityScore: as, Caller: FormatPharmCAT, Passing: true, Source: src}
	}
	runReadCases(t, FormatPharmCAT, []readCase{{
		// The example file of https://pharmcat.org/specifications/outside-call-format/
		name: "pharmcat.org example",
		in:   "CYP2D6\t*1/*3\nG6PD\tB (wildtype)/B (wildtype)\nMT-RNR1\t1555A>G\n",
		want: []Call{
			pc("CYP2D6", "*1/*3", "", "", "line 1"),
			pc("G6PD", "B (wildtype)/B (wildtype)", "", "", "line 2"),
			pc("MT-RNR1", "1555A>G", "", "", "line 3"),
		},
	}, {
		// https://pharmcat.org/using/Outside-Call-Format/: lines starting
		// with # ignored; the four fields used alone or together; the
		// *1/*6 with 4.0 example (PharmCAT warns; the reader keeps both).
		// HLA-B phenotype-only call: ../shared/data/pgx/pharmcat/RULES.md §3.9.
		name: "comments, phenotype only, activity score",
		in:   "# outside calls\nCYP2D6\t*1/*6\t\t4.0\nHLA-B\t\t*57:01 positive\nCYP2C9\t\t\t1.0\n",
		want: []Call{
			pc("CYP2D6", "*1/*6", "", "4.0", "line 2"),
			pc("HLA-B", "", "*57:01 positive", "", "line 3"),
			pc("CYP2C9", "", "", "1.0", "line 4"),
		},
	}, {
		// RULES.md §3.8: "a TSV line with the gene and *1x2/[*2 + *6]".
		name: "structural diplotype kept as written",
		in:   "CYP2D6\t*1x2/[*2 + *6]\n",
		want: []Call{pc("CYP2D6", "*1x2/[*2 + *6]", "", "", "line 1")},
	}, {
		name: "five fields refused", in: "CYP2D6\t*1/*2\tNM\t2.0\textra\n",
		errLine: 1, errMsg: "at most 4",
	}, {
		name: "gene with nothing refused", in: "CYP2D6\t*1/*2\nCYP2C19\t\t\n",
		errLine: 2, errMsg: "no diplotype, phenotype or activity score",
	}, {
		name: "lower-case gene on a later line refused", in: "CYP2D6\t*1/*2\ncyp2c19\t*1/*2\n",
		errLine: 2, errMsg: "not a gene symbol",
	}})
}

func TestCyrius(t *testing.T) {
	cy := func(sample, gt string, pass bool, q, src string) Call {
		return Call{Sample: sample, Gene: "CYP2D6", Diplotype: gt, Caller: FormatCyrius, Passing: pass, Quality: q, Source: src}
	}
	const h = "Sample\tGenotype\tFilter\n"
	runReadCases(t, FormatCyrius, []readCase{{
		// Header and the four Filter values: https://github.com/Illumina/Cyrius
		// README "Interpreting the output"; genotype strings from
		// caller/tests/test_match_star.py (get_final_call_clean).
		name: "every documented filter",
		in: h + "HG00611\t*2x2/*4\tPASS\n" +
			"NA23275\t*5/*10+*36\tPASS\n" +
			"S3\t*1/*46;*43/*45\tMore_than_one_possible_genotype\n" +
			"S4\t*1_*2_*68\tNot_assigned_to_haplotypes\n" +
			"S5\t*2x3/*4\tLowQ_high_CN\n" +
			"S6\tNone\tNone\n",
		want: []Call{
			cy("HG00611", "*2x2/*4", true, "", "line 2"),
			cy("NA23275", "*5/*10+*36", true, "", "line 3"),
			cy("S3", "*1/*46;*43/*45", false, "More_than_one_possible_genotype", "line 4"),
			cy("S4", "*1_*2_*68", false, "Not_assigned_to_haplotypes", "line 5"),
			cy("S5", "*2x3/*4", false, "LowQ_high_CN", "line 6"),
			cy("S6", "", false, "no call (Genotype None, Filter None)", "line 7"),
		},
	}, {
		name: "undocumented filter kept with its words",
		in:   h + "S1\t*1/*1\tSomething_new\n",
		want: []Call{cy("S1", "*1/*1", false, "Filter Something_new (not a value Cyrius documents)", "line 2")},
	}, {
		name: "PASS on a genotype that is not a diplotype is not passing",
		in:   h + "S1\t*1_*4\tPASS\n",
		want: []Call{cy("S1", "*1_*4", false, "Filter PASS but star alleles not assigned to haplotypes", "line 2")},
	}, {
		name: "short row refused", in: h + "S1\t*1/*1\tPASS\nS2\t*1/*2\n", errLine: 3, errMsg: "3 (Sample, Genotype, Filter)",
	}, {
		name: "header only refused", in: h, errLine: 1, errMsg: "no sample rows",
	}})
}

// aldyREADME is the .aldy example in https://github.com/0xTCG/aldy README
// ("Output"), its elided rows left out.
const aldyREADME = "#Sample\tGene\tSolutionID\tMajor\tMinor\tCopy\tAllele\tLocation\tType\tCoverage\tEffect\tdbSNP\tCode\tStatus\n" +
	"#Solution 1: *1 +42528223:SNP.GA, *4AW, *4N -42522391:SNP.GA\n" +
	"NA10860\tCYP2D6\t1\t*1/*4+*4\t1;4AW;4N\t0\t1\t42528223\tSNP.GA\t-1\tNEUTRAL\trs28588594\t-1426:C>T\n" +
	"NA10860\tCYP2D6\t1\t*1/*4+*4\t1;4AW;4N\t1\t4AW\t42522391\tSNP.GA\t-1\tNEUTRAL\trs28371738\t4401:C>T\n" +
	"NA10860\tCYP2D6\t1\t*1/*4+*4\t1;4AW;4N\t1\t4AW\t42522612\tSNP.CG\t-1\tDISRUPTING\trs1135840\t4180:G>C\n" +
	"#Solution 2: *1, *4AW +42528223:SNP.GA, *4N -42522391:SNP.GA\n" +
	"NA10860\tCYP2D6\t2\t*1/*4+*4\t1;4AW;4N\t0\t1\n" +
	"NA10860\tCYP2D6\t2\t*1/*4+*4\t1;4AW;4N\t1\t4AW\t42522391\tSNP.GA\t-1\tNEUTRAL\trs28371738\t4401:C>T\n"

func TestAldy(t *testing.T) {
	al := func(sample, gene, dip string, pass bool, q, src string) Call {
		return Call{Sample: sample, Gene: gene, Diplotype: dip, Caller: FormatAldy, Passing: pass, Quality: q, Source: src}
	}
	hdr := strings.SplitAfter(aldyREADME, "\n")[0]
	runReadCases(t, FormatAldy, []readCase{{
		// The README's two solutions differ only in minor alleles: the
		// major diplotype is one.
		name: "README example: solutions differing in minor alleles only",
		in:   aldyREADME,
		want: []Call{al("NA10860", "CYP2D6", "*1/*4+*4", true, "", "line 3")},
	}, {
		// "multiple optimal solutions" (aldy/genotype.py) with different
		// major diplotypes.
		name: "different major diplotypes are alternatives",
		in: hdr + "#Solution 1: *1, *4\nS1\tCYP2D6\t1\t*1/*4\t1;4\t0\t1\n" +
			"#Solution 2: *2, *4\nS1\tCYP2D6\t2\t*2/*4\t2;4\t0\t2\n",
		want: []Call{al("S1", "CYP2D6", "*1/*4;*2/*4", false, "2 solutions with different major star alleles: *1/*4, *2/*4", "line 3")},
	}, {
		// README: a novel functional SNP makes Aldy report "*1-like".
		name: "-like allele",
		in:   hdr + "S1\tCYP2D6\t1\t*1-like/*4\t1;4\t0\t1\n",
		want: []Call{al("S1", "CYP2D6", "*1-like/*4", false, "a '-like' allele: Aldy found a novel functional variant on it", "line 2")},
	}, {
		name: "several genes in one file, gene upper-cased",
		in:   hdr + "S1\tCYP2D6\t1\t*1/*2x2\t1;2\t0\t1\n" + hdr + "S1\tcyp2c19\t1\t*1/*17\t1;17\t0\t1\n",
		want: []Call{
			al("S1", "CYP2D6", "*1/*2x2", true, "", "line 2"),
			al("S1", "CYP2C19", "*1/*17", true, "", "line 4"),
		},
	}, {
		name: "bad solution id refused", in: hdr + "S1\tCYP2D6\tx\t*1/*1\t1;1\t0\t1\n", errLine: 2, errMsg: "SolutionID",
	}, {
		name: "no solution rows refused", in: hdr, errLine: 1, errMsg: "no solution rows",
	}})
}

// stellarSIM001 is the expected output for the test sample SIM001 in
// https://github.com/SBIMB/StellarPGx README ("Expected output").
const stellarSIM001 = "--------------------------------------------\n\nCYP2D6 Star Allele Calling with StellarPGx\n\n--------------------------------------------\n\n" +
	"Initially computed CN = 2\n\n\nCore variants:\n42126611~C>G~1/1;42127608~C>T~0/1;42127941~G>A~1/1;42129132~C>T~0/1;42129770~G>A~0/1\n\n\n" +
	"Candidate alleles:\n['17.v1_29.v1']\n\n\nResult:\n*17/*29\n\n\nActivity score:\n1.0\n\n\nMetaboliser status:\nIntermediate metaboliser (IM)\n\n"

func stellar(result, score, status string) string {
	return "--------------------------------------------\n\nCYP2D6 Star Allele Calling with StellarPGx\n\n--------------------------------------------\n\n" +
		"Initially computed CN = 3\n\nResult:\n" + result + "\n\nActivity score:\n" + score + "\n\nMetaboliser status:\n" + status + "\n"
}

func TestStellarPGx(t *testing.T) {
	st := func(dip, as, pheno string, pass bool, q, src string) Call {
		return Call{Gene: "CYP2D6", Diplotype: dip, ActivityScore: as, Phenotype: pheno, Caller: FormatStellarPGx, Passing: pass, Quality: q, Source: src}
	}
	// The non-passing results are the strings scripts/cyp2d6/b37/bin/stellarpgx.py prints.
	runReadCases(t, FormatStellarPGx, []readCase{{
		name: "README SIM001", in: stellarSIM001,
		want: []Call{st("*17/*29", "1.0", "Intermediate metaboliser (IM)", true, "", "line 19")},
	}, {
		name: "hybrid tandem", in: stellar("*1/*36+*10", "1.25", "Normal metaboliser (NM)"),
		want: []Call{st("*1/*36+*10", "1.25", "Normal metaboliser (NM)", true, "", "line 10")},
	}, {
		name: "novel allele", in: stellar("Possible novel allele or suballele present: interpret with caution; experimental validation and expert review through PharmVar is recommended", "Indeterminate", "Indeterminate"),
		want: []Call{st("", "Indeterminate", "Indeterminate", false, "Possible novel allele or suballele present: interpret with caution; experimental validation and expert review through PharmVar is recommended", "line 10")},
	}, {
		name: "alternatives with duplication", in: stellar("*1/*2 or *1/*34\tDuplication present", "Indeterminate", "Indeterminate"),
		want: []Call{st("*1/*2 or *1/*34", "Indeterminate", "Indeterminate", false, "alternatives (*1/*2 or *1/*34); Duplication present", "line 10")},
	}, {
		name: "*other", in: stellar("*5/*other", "Indeterminate", "Indeterminate"),
		want: []Call{st("*5/*other", "Indeterminate", "Indeterminate", false, "an allele StellarPGx names only '*other'", "line 10")},
	}, {
		name: "hybrid not resolved", in: stellar("Possible rare CYP2D6/2D7 hybrid present", "Indeterminate", "Indeterminate"),
		want: []Call{st("", "Indeterminate", "Indeterminate", false, "Possible rare CYP2D6/2D7 hybrid present", "line 10")},
	}, {
		name:    "no Result refused",
		in:      "CYP2D6 Star Allele Calling with StellarPGx\n\nInitially computed CN = 2\n",
		errLine: 3, errMsg: "no Result:",
	}})
}

// pypgxArchive builds a results.zip as PyPGx's Archive.to_file writes it
// (pypgx/sdk/utils.py): <dir>/metadata.txt and <dir>/data.tsv.
func pypgxArchive(t testing.TB, metadata, table string) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range map[string]string{"tmpdir/metadata.txt": metadata, "tmpdir/data.tsv": table} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

const pypgxMeta = "Gene=CYP2D6\nAssembly=GRCh37\nSemanticType=SampleTable[Results]\n"

// pypgxHeader and the rows below are from the GeT-RM WGS tutorial's
// "pypgx print-data grch37-CYP2D6-pipeline/results.zip" in
// https://github.com/sbslee/pypgx README.
const pypgxHeader = "\tGenotype\tPhenotype\tHaplotype1\tHaplotype2\tAlternativePhase\tVariantData\tCNV\n"

func TestPyPGx(t *testing.T) {
	py := func(sample, dip, pheno string, pass bool, q, src string) Call {
		return Call{Sample: sample, Gene: "CYP2D6", Diplotype: dip, Phenotype: pheno, Caller: FormatPyPGx, Passing: pass, Quality: q, Source: src}
	}
	table := pypgxHeader +
		"HG00589_PyPGx\t*1/*21\tIntermediate Metabolizer\t*21;*2;\t*1;\t;\t*21:22-42524213-C-CG:0.378;*1:22-42522613-G-C,22-42523943-A-G:0.645,0.625;*2:default;\tNormal\n" +
		"HG00436_PyPGx\t*2x2/*71\tIndeterminate\t*71;*1;\t*2;\t;\t*71:22-42526669-C-T:0.433;*1:22-42522613-G-C,22-42523943-A-G:0.462,0.353;*2:default;\tDuplication\n" +
		"NA19207_PyPGx\t*2x2/*10\tNormal Metabolizer\t*10;*2;\t*2;\t;\t*10:22-42523943-A-G,22-42526694-G-A:0.366,0.25;*2:default;\tDuplication\n" +
		// PyPGx's word for what it cannot determine (README: predict_phenotype 'Indeterminate').
		"NAXXXXX_PyPGx\tIndeterminate\tIndeterminate\t;\t;\t;\t;\tUnknown\n"
	runReadCases(t, FormatPyPGx, []readCase{{
		name: "README results", in: pypgxArchive(t, pypgxMeta, table),
		want: []Call{
			py("HG00589_PyPGx", "*1/*21", "Intermediate Metabolizer", true, "", "data.tsv line 2"),
			py("HG00436_PyPGx", "*2x2/*71", "Indeterminate", true, "", "data.tsv line 3"),
			py("NA19207_PyPGx", "*2x2/*10", "Normal Metabolizer", true, "", "data.tsv line 4"),
			py("NAXXXXX_PyPGx", "Indeterminate", "Indeterminate", false, "Genotype Indeterminate", "data.tsv line 5"),
		},
	}, {
		name: "results table without its archive refused", in: table,
		errLine: 1, errMsg: "names no gene",
	}, {
		name: "another semantic type refused", in: pypgxArchive(t, "Gene=CYP2D6\nSemanticType=SampleTable[Genotypes]\n", table),
		errLine: 0, errMsg: "SampleTable[Genotypes]",
	}, {
		name: "short row refused", in: pypgxArchive(t, pypgxMeta, pypgxHeader+"S1\t*1/*1\n"),
		errLine: 2, errMsg: "data.tsv: 2 fields",
	}})
}

func TestOptiType(t *testing.T) {
	const h = "\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective\n"
	ot := func(locus, dip string, two []string, pass bool, q, src string) Call {
		return Call{Gene: "HLA-" + locus, Diplotype: dip, HLAAlleles: two, Caller: FormatOptiType, Passing: pass, Quality: q, Source: src}
	}
	runReadCases(t, FormatOptiType, []readCase{{
		// The result row shown in https://github.com/FRED-2/OptiType README
		// ("Output") and PharmCAT's HLA outside-call tutorial.
		name: "one solution",
		in:   h + "0\tA*32:01\tA*68:03\tB*07:02\tB*35:01\tC*07:02\tC*07:02\t10191.0\t9915.832999999959\n",
		want: []Call{
			ot("A", "A*32:01/A*68:03", []string{"HLA-A*32:01", "HLA-A*68:03"}, true, "", "line 2"),
			ot("B", "B*07:02/B*35:01", []string{"HLA-B*07:02", "HLA-B*35:01"}, true, "", "line 2"),
			ot("C", "C*07:02/C*07:02", []string{"HLA-C*07:02", "HLA-C*07:02"}, true, "", "line 2"),
		},
	}, {
		// Loci OptiType could not type are left empty (a result seen in
		// pipelines parsing OptiType: "0\t\t\t\t\tC*06:04\tC*06:04\t4.0\t3.99").
		name: "untyped loci",
		in:   h + "0\t\t\t\t\tC*06:04\tC*06:04\t4.0\t3.99\n",
		want: []Call{
			ot("A", "", nil, false, "a copy not typed; a copy not typed", "line 2"),
			ot("B", "", nil, false, "a copy not typed; a copy not typed", "line 2"),
			ot("C", "C*06:04/C*06:04", []string{"HLA-C*06:04", "HLA-C*06:04"}, true, "", "line 2"),
		},
	}, {
		name: "enumerated solutions differing at B",
		in: h + "0\tA*02:01\tA*24:02\tB*15:02\tB*40:01\tC*07:02\tC*03:04\t900\t880\n" +
			"1\tA*02:01\tA*24:02\tB*15:13\tB*40:01\tC*07:02\tC*03:04\t890\t870\n",
		want: []Call{
			ot("A", "A*02:01/A*24:02", []string{"HLA-A*02:01", "HLA-A*24:02"}, true, "", "line 2"),
			ot("B", "B*15:02/B*40:01;B*15:13/B*40:01", nil, false, "OptiType reported 2 solutions that differ at HLA-B", "line 2"),
			ot("C", "C*07:02/C*03:04", []string{"HLA-C*07:02", "HLA-C*03:04"}, true, "", "line 2"),
		},
	}, {
		name: "short row refused", in: h + "0\tA*02:01\tA*24:02\n", errLine: 2, errMsg: "9 (index",
	}})
}

func TestHLALA(t *testing.T) {
	const h = "Locus\tChromosome\tAllele\tQ1\tQ2\tAverageCoverage\tCoverageFirstDecile\tMinimumCoverage\tproportionkMersCovered\tLocusAvgColumnError\tNColumns_UnaccountedAllele_fGT0.2\tperfectG\n"
	hl := func(locus, dip string, two []string, pass bool, q, src string) Call {
		return Call{Gene: "HLA-" + locus, Diplotype: dip, HLAAlleles: two, Caller: FormatHLALA, Passing: pass, Quality: q, Source: src}
	}
	runReadCases(t, FormatHLALA, []readCase{{
		// https://github.com/DiltheyLab/HLA-LA NA12878_example_output_G.txt (A, B and DRB1 rows).
		name: "NA12878 example",
		in: h + "A\t1\tA*11:01:01G\t1\t-70\t49.3338\t42\t37\t1\t0.0016452\t0\t1\n" +
			"A\t2\tA*01:01:01G\t1\t-70\t49.3338\t42\t37\t1\t0.0016452\t0\t1\n" +
			"B\t1\tB*08:01:01G\t1\t-6\t47.2549\t35\t28\t1\t0.000187273\t0\t1\n" +
			"B\t2\tB*56:01:01G\t1\t-6\t47.2549\t35\t28\t1\t0.000187273\t0\t1\n" +
			"DRB1\t1\tDRB1*01:01:01G\t1\t-5\t40.0509\t34\t30\t1\t0.000272381\t0\t1\n" +
			"DRB1\t2\tDRB1*03:01:01G\t1\t-5\t40.0509\t34\t30\t1\t0.000272381\t0\t1\n",
		want: []Call{
			hl("A", "A*11:01:01G/A*01:01:01G", []string{"HLA-A*11:01", "HLA-A*01:01"}, true, "", "line 2"),
			hl("B", "B*08:01:01G/B*56:01:01G", []string{"HLA-B*08:01", "HLA-B*56:01"}, true, "", "line 4"),
			hl("DRB1", "DRB1*01:01:01G/DRB1*03:01:01G", []string{"HLA-DRB1*01:01", "HLA-DRB1*03:01"}, true, "", "line 6"),
		},
	}, {
		// Null allele example from ../shared/data/names/hla/README.md step 6;
		// one-field and alternatives are the brief's "note, not passing".
		name: "null allele, one field, alternatives, missing copy",
		in: h + "A\t1\tA*01:01:01:02N\t1\n" + "A\t2\tA*02:01:01G\t1\n" +
			"B\t1\tB*15\t1\n" + "B\t2\tB*15:02:01G;B*15:13:01G\t1\n" +
			"C\t1\tC*07:01:01G\t1\n",
		want: []Call{
			hl("A", "A*01:01:01:02N/A*02:01:01G", nil, false, "A*01:01:01:02N is an expression variant (suffix N)", "line 2"),
			hl("B", "B*15/B*15:02:01G;B*15:13:01G", nil, false, "B*15 has one field only (two-field resolution needed); ambiguous: B*15:02:01G;B*15:13:01G", "line 4"),
			hl("C", "C*07:01:01G/", nil, false, "a copy not typed", "line 6"),
		},
	}, {
		name: "chromosome 3 refused", in: h + "A\t3\tA*01:01:01G\n", errLine: 2, errMsg: "writes 1 or 2",
	}, {
		name: "locus given twice refused", in: h + "A\t1\tA*01:01:01G\nA\t1\tA*02:01:01G\n", errLine: 3, errMsg: "given twice",
	}})
}

func TestArcasHLA(t *testing.T) {
	ar := func(locus, dip string, two []string, pass bool, q string) Call {
		return Call{Gene: "HLA-" + locus, Diplotype: dip, HLAAlleles: two, Caller: FormatArcasHLA, Passing: pass, Quality: q, Source: "$." + locus}
	}
	runReadCases(t, FormatArcasHLA, []readCase{{
		// https://github.com/RabadanLab/arcasHLA test/expected_output/test.genotype.json
		name: "test.genotype.json",
		in:   `{"A": ["A*01:01:01", "A*03:01:01"], "B": ["B*39:01:01", "B*07:02:01"], "C": ["C*08:01:01", "C*01:02:01"], "DPB1": ["DPB1*14:01:01", "DPB1*02:01:02"], "DQA1": ["DQA1*02:01:01", "DQA1*05:03"], "DQB1": ["DQB1*02:02:01", "DQB1*06:09:01"], "DRB1": ["DRB1*10:01:01", "DRB1*14:02:01"]}`,
		want: []Call{
			ar("A", "A*01:01:01/A*03:01:01", []string{"HLA-A*01:01", "HLA-A*03:01"}, true, ""),
			ar("B", "B*39:01:01/B*07:02:01", []string{"HLA-B*39:01", "HLA-B*07:02"}, true, ""),
			ar("C", "C*08:01:01/C*01:02:01", []string{"HLA-C*08:01", "HLA-C*01:02"}, true, ""),
			ar("DPB1", "DPB1*14:01:01/DPB1*02:01:02", []string{"HLA-DPB1*14:01", "HLA-DPB1*02:01"}, true, ""),
			ar("DQA1", "DQA1*02:01:01/DQA1*05:03", []string{"HLA-DQA1*02:01", "HLA-DQA1*05:03"}, true, ""),
			ar("DQB1", "DQB1*02:02:01/DQB1*06:09:01", []string{"HLA-DQB1*02:02", "HLA-DQB1*06:09"}, true, ""),
			ar("DRB1", "DRB1*10:01:01/DRB1*14:02:01", []string{"HLA-DRB1*10:01", "HLA-DRB1*14:02"}, true, ""),
		},
	}, {
		name: "one allele for a locus",
		in:   `{"B": ["B*15:02:01"]}`,
		want: []Call{ar("B", "B*15:02:01", nil, false, "1 alleles reported; two copies needed")},
	}, {
		name: "allele of another locus",
		in:   `{"B": ["A*01:01", "B*15:02"]}`,
		want: []Call{ar("B", "A*01:01/B*15:02", nil, false, `"A*01:01" is not an HLA-B allele name`)},
	}, {
		name: "JSON of another shape refused", in: "\n{\"genotype\": {\"A\": 1}}", errLine: 2, errMsg: "not an arcasHLA genotype",
	}})
}

func TestDetection(t *testing.T) {
	tests := []struct {
		name, in, format string
	}{
		{"PharmCAT", "CYP2D6\t*1/*3\n", FormatPharmCAT},
		{"PharmCAT after comments and CRLF", "# x\r\n\r\nCYP2D6\t*1/*3\r\n", FormatPharmCAT},
		{"Cyrius", "Sample\tGenotype\tFilter\nS\t*1/*1\tPASS\n", FormatCyrius},
		{"Aldy", aldyREADME, FormatAldy},
		{"StellarPGx", stellarSIM001, FormatStellarPGx},
		{"PyPGx archive", pypgxArchive(t, pypgxMeta, pypgxHeader+"S\t*1/*1\tNormal Metabolizer\t*1;\t*1;\t;\t;\tNormal\n"), FormatPyPGx},
		{"OptiType", "\tA1\tA2\tB1\tB2\tC1\tC2\tReads\tObjective\n0\tA*01:01\tA*01:01\tB*08:01\tB*08:01\tC*07:01\tC*07:01\t1\t1\n", FormatOptiType},
		{"HLA-LA", "Locus\tChromosome\tAllele\tQ1\nA\t1\tA*01:01:01G\t1\nA\t2\tA*01:01:01G\t1\n", FormatHLALA},
		{"arcasHLA", `{"A": ["A*01:01", "A*02:01"]}`, FormatArcasHLA},
		{"BOM", "\xEF\xBB\xBFCYP2D6\t*1/*3\n", FormatPharmCAT},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(strings.NewReader(tc.in), testMax)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if f.Format != tc.format {
				t.Errorf("Format = %q, want %q", f.Format, tc.format)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name, in string
		max      int64
		line     int
		msg      string
	}{
		{"unknown format names its first line", "\n\nhello world\n", testMax, 3, "format not recognised"},
		{"a VCF is not an outside call", "##fileformat=VCFv4.2\n#CHROM\tPOS\n", testMax, 1, "format not recognised"},
		{"empty input", "\n \n", testMax, 0, "empty input"},
		{"too large", "CYP2D6\t*1/*2\n", 5, 0, "larger than 5 bytes"},
		{"long line names the line", "CYP2D6\t*1/*2\nCYP2C19\t" + strings.Repeat("x", MaxLineBytes) + "\n", 4 * MaxLineBytes, 2, "longer than"},
		{"NUL byte names the line", "CYP2D6\t*1/*2\nCYP2C19\t*1\x00\n", testMax, 2, "not text"},
		{"a ZIP that is not PyPGx", pypgxArchiveNamed(t, "other.txt", "x"), testMax, 0, "not a PyPGx archive"},
		{"no limit", "CYP2D6\t*1/*2\n", 0, 0, "no input size limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), tc.max)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("err = line %d %q, want line %d containing %q", pe.Line, pe.Msg, tc.line, tc.msg)
			}
		})
	}
}

func pypgxArchiveNamed(t testing.TB, name, body string) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
