package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
)

// cwltool returns the path of the CWL reference runner: skipped without
// it, a failure in CI (.ci/run installs Debian's cwltool).
func cwltool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("cwltool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cwltool is not installed (.ci/run installs Debian's cwltool): the workflow cannot be run")
		}
		t.Skip("cwltool is not installed (apt-get install cwltool): the workflow is not run")
	}
	return p
}

// TestCWLWorkflow runs cmd/pgxsafety/workflows/cwl/pgxsafety-calls.cwl with cwltool on
// PharmCAT's 100-sample test VCF, four samples asked for and split over
// five jobs (so one job has no sample), with the static binary as the
// workflow builds it. The gathered calls table is byte for byte the one
// "pgxsafety call" writes for the same samples in one run (header once),
// and the per-sample directory holds exactly that run's per-sample files.
func TestCWLWorkflow(t *testing.T) {
	runner := cwltool(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot build the binary")
	}
	vcf := filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz")
	workflow := filepath.Join("workflows", "cwl", "pgxsafety-calls.cwl")
	tmp := t.TempDir()

	bin := filepath.Join(tmp, "pgxsafety")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	samples := filepath.Join(tmp, "samples.txt")
	if err := os.WriteFile(samples, []byte("s77\ns3\ns40\ns9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(tmp, "job.yml")
	jobText := "pgxsafety: {class: File, path: " + bin + "}\n" +
		"vcf: {class: File, path: " + vcf + "}\n" +
		"chunks: 5\n" +
		"samples_file: {class: File, path: " + samples + "}\n"
	if err := os.WriteFile(job, []byte(jobText), 0o600); err != nil {
		t.Fatal(err)
	}
	outdir := filepath.Join(tmp, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, runner, "--quiet", "--outdir", outdir,
		"--tmpdir-prefix", filepath.Join(tmp, "cwltmp")+string(filepath.Separator),
		"--tmp-outdir-prefix", filepath.Join(tmp, "cwlout")+string(filepath.Separator),
		workflow, job)
	cmd.Env = childEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cwltool: %v\n%s", err, out)
	}

	want := filepath.Join(tmp, "want")
	table, stderr, err := runArgs(t, "call", vcf, "--samples-file", samples, "--format", "tsv", "--per-sample", want)
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stderr)
	}
	got, err := os.ReadFile(filepath.Join(outdir, "calls.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(table, string(got)); diff != "" {
		t.Errorf("the workflow's calls table differs from one call's (-call +workflow):\n%s", diff)
	}
	if n := strings.Count(string(got), "Sample ID\t"); n != 1 {
		t.Errorf("the header is written %d times", n)
	}
	wantFiles, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	gotFiles, err := os.ReadDir(filepath.Join(outdir, "per-sample"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []os.DirEntry) (s []string) {
		for _, e := range es {
			s = append(s, e.Name())
		}
		return s
	}
	if diff := cmp.Diff([]string{"s3.json", "s40.json", "s77.json", "s9.json"}, names(gotFiles)); diff != "" {
		t.Fatalf("per-sample files (-want +got):\n%s", diff)
	}
	for _, e := range wantFiles {
		a, _ := os.ReadFile(filepath.Join(want, e.Name()))
		b, _ := os.ReadFile(filepath.Join(outdir, "per-sample", e.Name()))
		if string(a) != string(b) {
			t.Errorf("per-sample/%s differs from one call's", e.Name())
		}
	}
}
