package cdshooks_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// TestFHIRRoundTrip: the Genomics Reporting Bundle written for a sample
// (fhir.BuildGenomicsBundle of its /pgx/vcf answer), sent back as the
// pgxObservations prefetch of pgx-order-select for one of the drugs
// checked, gives the cards of the original answer: for every finding with
// a gene a card of the same indicator naming the gene — a confirmed
// finding, the review said beside an actionable reading (CYP2C19 *2/*2
// with a tier-1 position missing: critical and a review), the "may be
// incomplete" caution of a reading with definition positions not called
// (CYP2C9 in NA12878 for warfarin) — and
// no card the original has no finding for. A review of a gene whose
// Genotype is not interpreted may instead be named in the card of results
// that could not be used, and every such gene is named there, never read
// as normal.
func TestFHIRRoundTrip(t *testing.T) {
	cases := []struct {
		file  string
		drugs []string
	}{
		{datapacktest.Path(t, "pgx", "getrm-dev", "NA18855.g.vcf.gz"), []string{"clopidogrel", "codeine", "warfarin", "simvastatin"}},
		{datapacktest.Path(t, "pgx", "getrm-dev", "NA12878.g.vcf.gz"), []string{"clopidogrel", "codeine", "fluorouracil", "warfarin", "simvastatin"}},
		{filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "haplotype", "cyp2c19", "s2s2.vcf"), []string{"clopidogrel"}},
	}
	e := newEnv(t)
	base := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
	kinds := map[string]int{}
	for _, tc := range cases {
		open := func() (io.ReadCloser, error) { return os.Open(tc.file) }
		_, err := vcfcall.Run(context.Background(), kb, open, vcfcall.Options{Drugs: tc.drugs, Wire: pgxapi.WireResult}, func(c *vcfcall.Chunk) error {
			for _, s := range c.Samples {
				rep, err := fhir.SampleReportFromJSON(s.Result)
				if err != nil {
					return err
				}
				bundle, err := fhir.BuildGenomicsBundle(rep, fhir.ReportMeta{PatientID: "CGPatientExample01", AuditID: "a1",
					KnowledgeVersion: kb.Version.Label, Issued: time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)})
				if err != nil {
					return err
				}
				for _, chk := range rep.Checks {
					t.Run(filepath.Base(tc.file)+" "+s.Name+" "+chk.Drug, func(t *testing.T) {
						for k, n := range roundTrip(t, e, base, bundle, chk) {
							kinds[k] += n
						}
					})
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The cases hold each kind of finding the round trip must keep.
	for _, k := range []string{findingConfirmed, findingReviewBeside, findingCaution, findingReview} {
		if kinds[k] == 0 {
			t.Errorf("no case has a %s finding; the round trip of that kind is untested (%v)", k, kinds)
		}
	}
}

// Kinds of finding of the original answer.
const (
	findingConfirmed    = "confirmed"
	findingReviewBeside = "review beside a confirmed finding"
	findingCaution      = "may-be-incomplete caution"
	findingReview       = "review"
)

// findingKind sorts an alert of the original answer, and says what its
// card must say ("" anything).
func findingKind(a fhir.ReportAlert, confirmed map[string]bool) (kind, says string) {
	switch {
	case a.Category == "genotype-confirmed":
		return findingConfirmed, ""
	case a.Severity == "INFO" && a.TestRecommended:
		return findingCaution, "may be incomplete"
	case confirmed[a.Gene]:
		return findingReviewBeside, "review"
	}
	return findingReview, ""
}

// roundTrip checks one drug's cards against the original answer and counts
// the original's findings by kind.
func roundTrip(t *testing.T, e *env, base []byte, bundle json.RawMessage, chk fhir.ReportCheck) map[string]int {
	t.Helper()
	body := editJSON(t, base, func(m map[string]any) {
		ctx := m["context"].(map[string]any)
		med := ctx["draftOrders"].(map[string]any)["entry"].([]any)[0].(map[string]any)["resource"].(map[string]any)
		med["medicationCodeableConcept"] = map[string]any{"text": chk.Drug}
		delete(med, "reasonCode")
		pf := m["prefetch"].(map[string]any)
		pf["patient"] = map[string]any{"resourceType": "Patient", "id": "CGPatientExample01"}
		pf["activeMedications"] = map[string]any{"resourceType": "Bundle", "type": "searchset"}
		var b any
		_ = json.Unmarshal(bundle, &b)
		pf["pgxObservations"] = b
	})
	resp := decodeResponse(t, e.hook(body))
	var notice *cdshooks.Card
	var cards []cdshooks.Card // the cards of findings
	for i, c := range resp.Cards {
		if strings.HasPrefix(c.Summary, "Some genomic results could not be used") {
			notice = &resp.Cards[i]
			continue
		}
		cards = append(cards, c)
	}
	notInterpreted := map[string]bool{}
	for _, g := range reviewGenes(t, bundle) {
		notInterpreted[g] = true
	}
	confirmed := map[string]bool{}
	for _, a := range chk.Result.Alerts {
		if a.Category == "genotype-confirmed" {
			confirmed[a.Gene] = true
		}
	}
	kinds := map[string]int{}
	matched := make([]bool, len(cards))
	for _, a := range chk.Result.Alerts {
		ind := indicatorOf(a.Severity)
		if ind == "" || a.Gene == "" {
			continue
		}
		kind, says := findingKind(a, confirmed)
		kinds[kind]++
		found := false
		for i, c := range cards {
			if kind == findingConfirmed && strings.Contains(c.Summary, "not interpreted") {
				continue // a finding is not answered by a review
			}
			if c.Indicator == ind && strings.Contains(c.Summary, a.Gene) && strings.Contains(c.Summary, says) {
				found, matched[i] = true, true
			}
		}
		if !found && kind == findingReview && notInterpreted[a.Gene] && notice != nil && strings.Contains(notice.Detail, a.Gene) {
			found = true // a review named in the notice of results not used
		}
		if !found {
			t.Errorf("no %s card naming %s for its finding (%s) saying %q (original: %s)", ind, a.Gene, kind, says, a.Message)
		}
	}
	for i, c := range cards {
		if !matched[i] {
			t.Errorf("a %s card the original answer has no finding for: %s", c.Indicator, c.Summary)
		}
	}
	// A gene in review is never read back as a result to act on as normal.
	for g := range notInterpreted {
		for _, c := range resp.Cards {
			if strings.Contains(c.Summary, g+" Normal") {
				t.Errorf("%s is in review but a card reads it normal: %s", g, c.Summary)
			}
		}
		if notice == nil {
			t.Errorf("%s is in review and no card says results could not be used", g)
		} else if !strings.Contains(notice.Detail, g) {
			t.Errorf("%s is in review and the notice does not name it:\n%s", g, notice.Detail)
		}
	}
	return kinds
}

// reviewGenes are the genes whose Genotype the Bundle writes as not
// interpreted.
func reviewGenes(t *testing.T, bundle json.RawMessage) []string {
	t.Helper()
	var b struct {
		Entry []struct {
			Resource struct {
				Code  struct{ Coding []struct{ Code string } }
				Value *struct{ Text string } `json:"valueCodeableConcept"`
				Comp  []struct {
					Code  struct{ Coding []struct{ Code string } }
					Value *struct{ Text string } `json:"valueCodeableConcept"`
				} `json:"component"`
			} `json:"resource"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(bundle, &b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range b.Entry {
		r := e.Resource
		if len(r.Code.Coding) == 0 || r.Code.Coding[0].Code != fhir.LOINCGenotype || r.Value == nil || r.Value.Text != fhir.ReviewValue {
			continue
		}
		for _, c := range r.Comp {
			if len(c.Code.Coding) > 0 && c.Code.Coding[0].Code == fhir.LOINCGene && c.Value != nil {
				out = append(out, c.Value.Text)
			}
		}
	}
	return out
}

func indicatorOf(sev string) string {
	switch sev {
	case "HIGH":
		return "critical"
	case "MODERATE":
		return "warning"
	case "INFO":
		return "info"
	}
	return ""
}
