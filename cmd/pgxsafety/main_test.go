package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

func runArgs(t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestVersion(t *testing.T) {
	out, stderr, err := runArgs(t, "version")
	if err != nil {
		t.Fatalf("version: %v\n%s", err, stderr)
	}
	for _, want := range []string{pgxapi.EngineVersion, pgxapi.APIVersion, runtime.Version(), "knowledge"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}

func TestKnowledgeValidate(t *testing.T) {
	out, stderr, err := runArgs(t, "knowledge", "validate")
	if err != nil {
		t.Fatalf("knowledge validate: %v\n%s%s", err, out, stderr)
	}
	if !strings.Contains(out, "no problems") {
		t.Errorf("output:\n%s", out)
	}
}

// TestKnowledgeStats: the statistics printed are those of the embedded
// knowledge, and they hold the counts the spec states.
func TestKnowledgeStats(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatal(err)
	}
	want := knowledge.Stats(b)
	out, stderr, err := runArgs(t, "knowledge", "stats", "--json")
	if err != nil {
		t.Fatalf("knowledge stats --json: %v\n%s", err, stderr)
	}
	var got knowledge.Statistics
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not the statistics: %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats differ from the embedded knowledge (-want +got):\n%s", diff)
	}
	rows := map[string]int{}
	for _, tc := range got.Tables {
		rows[tc.Name] = tc.Rows
	}
	// Counts the interface specification states.
	for name, n := range map[string]int{
		"tracked variants":               61,
		"classifier cohort variants":     16,
		"classifier protein sequences":   5,
		"classifier graph nodes":         62,
		"classifier graph edges":         54,
		"classifier demonstration cases": 4,
	} {
		if rows[name] != n {
			t.Errorf("%s: %d rows, want %d", name, rows[name], n)
		}
	}
	if rows["drugs"] == 0 || rows["recommendations"] == 0 || len(got.Sources) == 0 {
		t.Errorf("empty tables: drugs %d, recommendations %d, sources %d", rows["drugs"], rows["recommendations"], len(got.Sources))
	}
	text, stderr, err := runArgs(t, "knowledge", "stats")
	if err != nil {
		t.Fatalf("knowledge stats: %v\n%s", err, stderr)
	}
	for _, s := range []string{b.Engine.Version.Label, "tracked variants", "61"} {
		if !strings.Contains(text, s) {
			t.Errorf("text output lacks %q:\n%s", s, text)
		}
	}
}

func TestKnowledgeValidateBadDir(t *testing.T) {
	out, _, err := runArgs(t, "knowledge", "validate", "--dir", t.TempDir())
	if err == nil {
		t.Fatalf("validate of an empty directory succeeded:\n%s", out)
	}
}

func TestCheckJSON(t *testing.T) {
	out, stderr, err := runArgs(t, "check", "--drug", "clopidogrel", "--diplotype", "CYP2C19=*2/*2",
		"--genes-tested", "CYP2C19", "--indication", "ACS PCI", "--json")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, stderr)
	}
	var res pgxapi.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not a Result: %v\n%s", err, out)
	}
	if res.OverallSeverity != "HIGH" {
		t.Errorf("overall_severity = %q, want HIGH", res.OverallSeverity)
	}
	if res.GroundingContract != engine.GroundingContract {
		t.Errorf("grounding_contract = %q", res.GroundingContract)
	}
}

func TestCheckTable(t *testing.T) {
	out, stderr, err := runArgs(t, "check", "--drug", "clopidogrel", "--variants", "rs12769205,rs4244285",
		"--zygosity", "rs12769205=hom,rs4244285=hom", "--genes-tested", "CYP2C19",
		"--state", "Tamil Nadu", "--sex", "male", "--age", "54")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, stderr)
	}
	for _, want := range []string{"Drug:", "clopidogrel", "Sensitivity:", "Overall severity:", "HIGH", "Alert 1:", "CYP2C19", "Knowledge:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckInvalid(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{"bad rsID", []string{"check", "--drug", "clopidogrel", "--variants", "rsABC"}, "variants[0]", false},
		{"no drug", []string{"check", "--variants", "rs4244285"}, "drug", false},
		{"bad zygosity syntax", []string{"check", "--drug", "x", "--variants", "rs1", "--zygosity", "rs1"}, "KEY=VALUE", true},
		{"bad age", []string{"check", "--drug", "x", "--age", "old"}, "--age", true},
		{"positional", []string{"check", "--drug", "x", "extra"}, "unexpected argument", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runArgs(t, tc.args...)
			if err == nil {
				t.Fatal("succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if errors.Is(err, errUsage) != tc.usage {
				t.Errorf("usage error = %v, want %v (%v)", errors.Is(err, errUsage), tc.usage, err)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	_, stderr, err := runArgs(t, "frobnicate")
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("unknown subcommand: err = %v", err)
	}
	for _, sub := range []string{"serve", "check", "knowledge validate", "knowledge stats", "version"} {
		if !strings.Contains(stderr, "pgxsafety "+sub) {
			t.Errorf("usage does not list %q:\n%s", sub, stderr)
		}
	}
	if _, _, err := runArgs(t); !errors.Is(err, errUsage) {
		t.Errorf("no subcommand: err = %v", err)
	}
	out, _, err := runArgs(t, "help")
	if err != nil || !strings.Contains(out, "pgxsafety serve") {
		t.Errorf("help: %v\n%s", err, out)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	t.Setenv("PGXSAFETY_DATABASE_URL", "")
	for _, addr := range []string{"0.0.0.0:0", ":8080", "192.0.2.1:80"} {
		_, _, err := runArgs(t, "serve", "--addr", addr, "--data-dir", t.TempDir())
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("serve --addr %s: err = %v, want a loopback-only refusal", addr, err)
		}
	}
}

func TestServeRefusesUnsupportedDatabase(t *testing.T) {
	t.Setenv("PGXSAFETY_DATABASE_URL", "mysql://root:pw@localhost/audit")
	_, _, err := runArgs(t, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "sqlite:PATH") || strings.Contains(err.Error(), "pw@") {
		t.Errorf("err = %v, want the accepted forms and no credentials", err)
	}
}

func TestServe(t *testing.T) {
	t.Setenv("PGXSAFETY_DATABASE_URL", "")
	t.Setenv("PGXSAFETY_LOG_LEVEL", "debug")
	addrs := make(chan net.Addr, 1)
	serveListening = func(a net.Addr) { addrs <- a }
	t.Cleanup(func() { serveListening = nil })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, &bytes.Buffer{}, &stderr)
	}()

	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("serve returned before listening: %v\n%s", err, stderr.String())
	}

	resp, err := http.Get("http://" + addr.String() + "/pgx/version")
	if err != nil {
		t.Fatalf("GET /pgx/version: %v", err)
	}
	var ver struct {
		APIVersion    string `json:"api_version"`
		EngineVersion string `json:"engine_version"`
	}
	err = json.NewDecoder(resp.Body).Decode(&ver)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /pgx/version: %d %v", resp.StatusCode, err)
	}
	if ver.APIVersion != pgxapi.APIVersion || ver.EngineVersion != pgxapi.EngineVersion {
		t.Errorf("version = %+v", ver)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v after cancel\n%s", err, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"msg":"pgxsafety listening"`) || !strings.Contains(logs, addr.String()) ||
		!strings.Contains(logs, "knowledge_version") {
		t.Errorf("start-up log line missing:\n%s", logs)
	}
	if !strings.Contains(logs, `"route":"/pgx/version"`) {
		t.Errorf("access log line missing:\n%s", logs)
	}
}
