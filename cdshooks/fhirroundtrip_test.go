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
// checked, gives a card for every finding of the original answer with
// the same indicator and gene (a review finding may instead be named in
// the card of results that could not be used), no info card, and every
// gene in review is named as not interpreted, never read as normal.
// Known differences, by input form: the "confirm with a complete
// genotype" INFO of a gene read from VCF positions is not repeated (a
// Genotype Observation states the whole gene), and the review said beside
// an actionable reading is in the Genotype's interpretation and notes, not
// a card.
func TestFHIRRoundTrip(t *testing.T) {
	cases := []struct {
		file  string
		drugs []string
	}{
		{datapacktest.Path(t, "pgx", "getrm-dev", "NA18855.g.vcf.gz"), []string{"clopidogrel", "codeine", "warfarin", "simvastatin"}},
		{datapacktest.Path(t, "pgx", "getrm-dev", "NA12878.g.vcf.gz"), []string{"clopidogrel", "codeine", "fluorouracil"}},
		{filepath.Join(datapacktest.PharmCATTestVCFs(t), "org", "pharmgkb", "pharmcat", "haplotype", "cyp2c19", "s2s2.vcf"), []string{"clopidogrel"}},
	}
	e := newEnv(t)
	base := readRequest(t, "order-select-clopidogrel-cyp2c19-pm")
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
						roundTrip(t, e, base, bundle, chk)
					})
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func roundTrip(t *testing.T, e *env, base []byte, bundle json.RawMessage, chk fhir.ReportCheck) {
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
	for i, c := range resp.Cards {
		if strings.HasPrefix(c.Summary, "Some genomic results could not be used") {
			notice = &resp.Cards[i]
		}
	}
	confirmed := map[string]bool{}
	for _, a := range chk.Result.Alerts {
		if a.Category == "genotype-confirmed" {
			confirmed[a.Gene] = true
		}
	}
	for _, a := range chk.Result.Alerts {
		ind := indicatorOf(a.Severity)
		switch {
		case a.Severity == "INFO" && a.TestRecommended:
			// "Confirm with a complete GENE genotype": said of a gene read
			// from positions only; a Genotype Observation is a complete
			// genotype, so the card is not expected.
			continue
		case ind == "" || a.Gene == "":
			continue
		case a.Category != "genotype-confirmed" && confirmed[a.Gene]:
			// A review beside an actionable reading: the Genotype holds the
			// reading (its interpretation and notes say review); the
			// reading's card is the one expected.
			continue
		}
		found := false
		for _, c := range resp.Cards {
			if c.Indicator == ind && strings.Contains(c.Summary, a.Gene) {
				found = true
			}
		}
		if !found && a.Category != "genotype-confirmed" && notice != nil && strings.Contains(notice.Detail, a.Gene) {
			found = true // a review named in the notice of results not used
		}
		if !found {
			t.Errorf("no %s card for %s (original: %s)", ind, a.Gene, a.Action)
		}
	}
	for _, c := range resp.Cards {
		if c.Indicator == "critical" || c.Indicator == "warning" {
			continue
		}
		t.Errorf("unexpected %s card: %s", c.Indicator, c.Summary)
	}
	// A gene in review is never read back as a result to act on as normal.
	for _, g := range reviewGenes(t, bundle) {
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
