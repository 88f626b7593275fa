package pgxapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/outside/outsidetest"
)

// TestVCFOutsideCallsGeTRM: every GeT-RM development genome whose CYP2D6
// consensus a VCF cannot decide (class "outside") gets the consensus
// phenotype from POST /pgx/vcf when the consensus is given as an
// outside_calls part in each CYP2D6 caller's format (issue 22), and the
// closing audit entry names the part.
func TestVCFOutsideCallsGeTRM(t *testing.T) {
	rows, dir := datapacktest.GeTRMTruth(t, "CYP2D6", "outside")
	ts := newServer(t)
	for _, r := range rows {
		data, err := os.ReadFile(filepath.Join(dir, r.Sample+".g.vcf.gz"))
		if err != nil {
			t.Fatal(err)
		}
		diplotype := strings.Split(r.Accepted, "|")[0]
		for _, format := range outsidetest.CYP2D6Formats {
			t.Run(r.Sample+"/"+format, func(t *testing.T) {
				calls := outsidetest.CYP2D6(t, format, r.Sample, diplotype)
				rec := ts.postVCF(t, "", vcfFile(r.Sample+".g.vcf.gz", data),
					formPart{name: "outside_calls", fileName: "calls.out", data: calls}, formPart{name: "drug", data: []byte("codeine")})
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				a := decode[vcfAnswer](t, rec)
				if len(a.Samples) != 1 {
					t.Fatalf("%d samples", len(a.Samples))
				}
				var got []string
				for _, g := range a.Samples[0].Genes {
					if g.Gene != "CYP2D6" {
						continue
					}
					if g.NeedsReview {
						t.Errorf("CYP2D6 in review: %s", g.Summary)
					}
					for _, d := range g.Diplotypes {
						got = append(got, d.Phenotype)
					}
				}
				if len(got) != 1 || got[0] != r.TruthPhenotype {
					t.Errorf("CYP2D6 phenotypes %q, want the consensus %q", got, r.TruthPhenotype)
				}
				closing := lastEntry(t, ts)
				var req struct {
					OutsideCalls []struct {
						Name, Format string
						Calls        int
						SHA256       string
					} `json:"outside_calls"`
				}
				if err := json.Unmarshal(closing.Request, &req); err != nil {
					t.Fatal(err)
				}
				if len(req.OutsideCalls) != 1 || req.OutsideCalls[0].Format != format || req.OutsideCalls[0].Calls != 1 || req.OutsideCalls[0].SHA256 == "" {
					t.Errorf("closing entry's outside_calls %+v, want the %s part with one call", req.OutsideCalls, format)
				}
			})
		}
	}
}

// TestVCFOutsideCallsRefused: an outside_calls part no reader knows, or a
// call naming a sample the VCF does not hold, is a 422 naming the part.
func TestVCFOutsideCallsRefused(t *testing.T) {
	rows, dir := datapacktest.GeTRMTruth(t, "CYP2D6", "outside")
	data, err := os.ReadFile(filepath.Join(dir, rows[0].Sample+".g.vcf.gz"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t)
	for _, tc := range []struct{ name, calls, field, reason string }{
		{"unknown format", "hello\tworld\tthis\n", "outside_calls[0]", "line 1: format not recognised"},
		{"absent sample", "Sample\tGenotype\tFilter\nNOSUCH\t*1/*1\tPASS\n", "outside_calls", `names sample "NOSUCH", which the VCF does not hold`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.postVCF(t, "", vcfFile("g.vcf.gz", data), formPart{name: "outside_calls", data: []byte(tc.calls)})
			p := problem(t, rec, http.StatusUnprocessableEntity)
			found := false
			for _, ip := range p.InvalidParams {
				if ip.Name == tc.field && strings.Contains(ip.Reason, tc.reason) {
					found = true
				}
			}
			if !found {
				t.Errorf("invalid_params %+v, want %s: %q", p.InvalidParams, tc.field, tc.reason)
			}
		})
	}
}

// TestCheckOutsideCalls: outside_calls on POST /pgx/check through the
// router: a Cyrius call it does not pass is a review with a not_passing
// evidence entry; an unreadable output is a 422 naming the item and line.
func TestCheckOutsideCalls(t *testing.T) {
	ts := newServer(t)
	body := `{"drug":"codeine","outside_calls":["Sample\tGenotype\tFilter\nS1\t*1/*2;*1/*34\tMore_than_one_possible_genotype\n"]}`
	rec := ts.check(t, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var got struct {
		OverallSeverity string `json:"overall_severity"`
		Evidence        []struct {
			Field, State, Reason string
		} `json:"evidence"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.OverallSeverity != "MODERATE" {
		t.Errorf("overall_severity %q, want MODERATE (review)", got.OverallSeverity)
	}
	if len(got.Evidence) != 1 || got.Evidence[0].Field != "outside_calls[0]" || got.Evidence[0].State != "not_passing" ||
		!strings.Contains(got.Evidence[0].Reason, "More_than_one_possible_genotype") {
		t.Errorf("evidence %+v, want outside_calls[0] not_passing naming Cyrius' words", got.Evidence)
	}
	entry := lastEntry(t, ts)
	if !strings.Contains(string(entry.Request), `"outside_calls"`) {
		t.Errorf("the audit entry's request does not hold the outside calls: %s", entry.Request)
	}

	rec = ts.check(t, `{"drug":"codeine","outside_calls":["Sample\tGenotype\tFilter\nS1\t*1/*1\n"]}`)
	p := problem(t, rec, http.StatusUnprocessableEntity)
	if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != "outside_calls[0]" || !strings.HasPrefix(p.InvalidParams[0].Reason, "line 2:") {
		t.Errorf("invalid_params %+v, want outside_calls[0] naming line 2", p.InvalidParams)
	}
}

// lastEntry is the audit log's newest entry.
func lastEntry(t *testing.T, ts testServer) audit.Entry {
	t.Helper()
	var last audit.Entry
	if err := ts.store.Entries(context.Background(), 0, func(e audit.Entry) error { last = e; return nil }); err != nil {
		t.Fatal(err)
	}
	return last
}
