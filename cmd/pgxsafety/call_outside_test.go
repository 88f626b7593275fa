package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// getrmCYP2D6 returns the accepted CYP2D6 diplotype and phenotype of a
// GeT-RM development sample (truth-dev.tsv).
func getrmCYP2D6(t *testing.T, dir, sample string) (diplotype, phenotype string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "truth-dev.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var cols map[string]int
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range fields {
				cols[c] = i
			}
			continue
		}
		if fields[cols["sample"]] == sample && fields[cols["gene"]] == "CYP2D6" {
			return fields[cols["accepted"]], fields[cols["truth_phenotype"]]
		}
	}
	t.Fatalf("no CYP2D6 truth for %s", sample)
	return "", ""
}

// TestCallOutsideCalls: "pgxsafety call" with --outside-calls reads the
// GeT-RM genome NA18855 with its CYP2D6 consensus as a PharmCAT outside
// call; CYP2D6 then reads the consensus phenotype, and the codeine check
// uses it. A file no reader recognises and a call naming a sample the VCF
// does not hold are refused, naming the file and line.
func TestCallOutsideCalls(t *testing.T) {
	dir := datapacktest.Path(t, "pgx", "getrm-dev")
	vcf := filepath.Join(dir, "NA18855.g.vcf.gz")
	dip, phenotype := getrmCYP2D6(t, dir, "NA18855")
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	calls := write("outside.tsv", "# CYP2D6 from the GeT-RM consensus\nCYP2D6\t"+dip+"\n")
	stdout, stderr, err := runArgs(t, "call", vcf, "--outside-calls", calls, "--drug", "codeine")
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	var doc struct {
		Samples []struct {
			Genes []struct {
				Gene, Interpretation, Summary string
				Notes                         []string
				Diplotypes                    []struct{ Diplotype, Phenotype string }
			}
			Checks []struct {
				Drug   string
				Result json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Samples) != 1 {
		t.Fatalf("%d samples", len(doc.Samples))
	}
	found := false
	for _, g := range doc.Samples[0].Genes {
		if g.Gene != "CYP2D6" {
			continue
		}
		found = true
		if g.Interpretation != "called" || len(g.Diplotypes) != 1 || g.Diplotypes[0].Phenotype != phenotype ||
			!strings.Contains(strings.Join(g.Notes, " "), "outside.tsv line 2") {
			t.Errorf("CYP2D6: %+v, want %s %s from outside.tsv line 2", g, dip, phenotype)
		}
	}
	if !found {
		t.Fatal("no CYP2D6 in the answer")
	}
	if len(doc.Samples[0].Checks) != 1 || !strings.Contains(string(doc.Samples[0].Checks[0].Result), phenotype) {
		t.Errorf("the codeine check does not read CYP2D6 as %s: %+v", phenotype, doc.Samples[0].Checks)
	}

	for _, tc := range []struct{ name, text, want string }{
		{"garbage.txt", "not a caller output\n", "call: --outside-calls " + filepath.Join(tmp, "garbage.txt") + " cannot be read: outside calls: line 1: "},
		{"cyrius.tsv", "Sample\tGenotype\tFilter\nNA00000\t*1/*5\tPASS\n", `call: --outside-calls: outside call at cyrius.tsv line 2: the Cyrius call of CYP2D6 names sample "NA00000", which the VCF does not hold`},
	} {
		_, _, err := runArgs(t, "call", vcf, "--outside-calls", write(tc.name, tc.text))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || errors.Is(err, errUsage) {
			t.Errorf("%s: error %v, want %q (not a usage error)", tc.name, err, tc.want)
		}
	}
}

// TestCheckOutsideCalls: pgxsafety check --outside-calls reads a caller's
// output as the check's outside_calls: a passing Cyrius call decides
// CYP2D6; a non-passing one is a review; an unreadable one exits naming the
// item and line.
func TestCheckOutsideCalls(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass := write("pass.tsv", "Sample\tGenotype\tFilter\nS1\t*1/*2x2\tPASS\n")
	ambiguous := write("ambiguous.tsv", "Sample\tGenotype\tFilter\nS1\t*1/*2;*1/*34\tMore_than_one_possible_genotype\n")
	broken := write("broken.tsv", "Sample\tGenotype\tFilter\nS1\t*1/*2x2\n")

	out, stderr, err := runArgs(t, "check", "--drug", "codeine", "--outside-calls", pass, "--json")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, stderr)
	}
	var res pgxapi.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.OverallSeverity != "HIGH" || len(res.Genotype) == 0 || res.Genotype[0].Phenotype != "Ultrarapid Metabolizer" {
		t.Errorf("passing call: %s %+v, want HIGH with CYP2D6 Ultrarapid Metabolizer", res.OverallSeverity, res.Genotype)
	}

	out, stderr, err = runArgs(t, "check", "--drug", "codeine", "--outside-calls", ambiguous, "--json")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, stderr)
	}
	res = pgxapi.Result{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.OverallSeverity != "MODERATE" || len(res.Evidence) != 1 || res.Evidence[0].State != "not_passing" {
		t.Errorf("non-passing call: %s %+v, want MODERATE with a not_passing entry", res.OverallSeverity, res.Evidence)
	}

	if _, _, err := runArgs(t, "check", "--drug", "codeine", "--outside-calls", broken); err == nil || !strings.Contains(err.Error(), "outside_calls[0]: line 2") {
		t.Errorf("unreadable call: error %v, want one naming outside_calls[0]: line 2", err)
	}
}
