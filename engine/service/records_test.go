package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/records")

// released is a stand-in for a surface's wire answer (pgxapi's), which the
// surface's own golden files pin.
type released struct {
	Drug     string `json:"drug"`
	Severity string `json:"overall_severity"`
}

func releasedOf(r engine.Result) released {
	return released{Drug: r.DrugNormalised, Severity: severityName[r.OverallSeverity]}
}

// severityName is the spec's name of each severity, as a surface writes it.
var severityName = map[engine.Severity]string{engine.SeverityNone: "NONE", engine.SeverityInfo: "INFO", engine.SeverityModerate: "MODERATE", engine.SeverityHigh: "HIGH"}

func fptr(f float64) *float64 { return &f }

// fullRequest sets every field of an engine.Request.
var fullRequest = engine.Request{
	Drug:        "clopidogrel",
	Variants:    []string{"rs4244285", "rs12248560"},
	Zygosity:    map[string]engine.Zygosity{"rs4244285": engine.Hom, "rs12248560": engine.Het},
	Diplotypes:  map[string]string{"CYP2D6": "*1/*4"},
	HLA:         map[string]string{"HLA-B*15:02": "negative"},
	GenesTested: []string{"CYP2C19", "CYP2D6"},
	Calls:       []engine.PositionCall{{Chrom: "chr10", Pos: 94781859, Ref: "G", Alt: "A", Genotype: "1/1"}},
	State:       "Tamil Nadu",
	Ethnicity:   "Tamil <& Brahmin>",
	Indication:  "acute coronary syndrome, PCI",
	IndicationCodes: []engine.Coding{
		{System: engine.SystemICD10URL, Code: "I21.9", Display: "Acute myocardial infarction"},
	},
	Patient: &engine.Patient{Sex: "female", AgeYears: fptr(61), MonthsOnDrug: fptr(2.5)},
}

// recordKinds runs every operation that appends an audit record, each
// with inputs that fill its record's fields, and returns the entries each
// kind wrote, by kind name.
func recordKinds(t *testing.T) (map[string]audit.Entry, *service.Service) {
	t.Helper()
	svc, log := newService(t)
	ctx := context.Background()
	out := map[string]audit.Entry{}
	entry := func(kind, id string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		e, ok := log.byID(id)
		if !ok {
			t.Fatalf("%s: entry %q not in the log", kind, id)
		}
		out[kind] = e
	}

	a, err := service.Check(ctx, svc, call, fullRequest, releasedOf)
	entry("check", a.AuditID, err)

	many, err := service.CheckMany(ctx, svc, call, service.MedicationList{Drugs: []string{"clopidogrel", "codeine"}, Patient: fullRequest},
		func(rs []engine.Result) ([]released, error) {
			out := make([]released, len(rs))
			for i, r := range rs {
				out[i] = releasedOf(r)
			}
			return out, nil
		})
	entry("check_many", many.AuditID, err)

	cls, err := svc.Classifier()
	if err != nil {
		t.Fatalf("classifier: %v", err)
	}
	demo := cls.DemoCases()[0]
	clsWire := func(r classify.Result) released { return released{Drug: r.EngineVersion, Severity: r.TierLabel} }
	c, err := service.Classify(ctx, svc, call, classify.DemoRequest(demo), clsWire)
	entry("classify", c.AuditID, err)
	d, err := service.Demo(ctx, svc, call, demo, func(_ classify.DemoCase, r classify.Result) released { return clsWire(r) })
	entry("demo", d.AuditID, err)

	h, err := service.EvaluateHook(ctx, svc, call, func(chk *service.HookChecker) (service.HookRecord, map[string]any, error) {
		_, _ = chk.Check("MedicationRequest/1", "clopidogrel", "rxnorm", fullRequest)
		_, _ = chk.Check("MedicationRequest/2", "codeine", "text", engine.Request{Drug: "codeine", Variants: []string{"not-an-rsid"}})
		return service.HookRecord{Hook: "order-sign", HookInstance: "hi-1", Service: "pgx-order-sign", FHIRServer: "https://ehr.example/fhir",
			PatientID: "p1", EncounterID: "e1", UserID: "Practitioner/1", Selections: []string{"MedicationRequest/1"},
			Data:       map[string]service.HookData{"patient": {Source: "prefetch"}, "genomics": {Source: "fhir", Error: "timeout"}},
			Issues:     []service.InputIssue{{Ref: "Observation/9", ResourceType: "Observation", Severity: "warning", Message: "no gene", Genomic: true}},
			ShownCards: []string{"card-1"}, Suppressed: []string{"card-2"},
		}, map[string]any{"cards": []string{"card-1"}}, nil
	})
	entry("cds_hook", h.AuditID, err)

	f, err := svc.Feedback(ctx, call, service.FeedbackRecord{Service: "pgx-order-sign",
		Feedback: []json.RawMessage{[]byte(`{"card":"card-1","outcome":"accepted"}`)}, Keys: []string{"card-1|accepted|2026-01-02T03:04:05Z"}},
		oneNewItem{log}, []service.FeedbackItem{{Key: "card-1|accepted|2026-01-02T03:04:05Z"}})
	entry("cds_feedback", f.AuditID, err)

	bad := fullRequest
	bad.Variants = []string{"not-an-rsid"}
	r, err := svc.ReviewView(ctx, call, service.ReviewInput{
		Record: service.ReviewRecord{Launch: "ehr", FHIRServer: "https://ehr.example/fhir", Patient: "p1", Encounter: "e1",
			Scope: "launch patient/*.read", AppContext: "card=1", CardDrug: "clopidogrel", PatientState: "Tamil Nadu",
			GenomicResults: []service.ReviewResult{{Ref: "Observation/1", Kind: "diplotype", Gene: "CYP2C19", Value: "*2/*2", Status: "final",
				Effective: "2025-01-01", Issued: "2025-01-02", Performer: "Lab", Used: true, Note: "n"}},
			Medications: []service.ReviewMedication{{Ref: "MedicationRequest/1", Label: "Plavix 75 mg", Drugs: []string{"clopidogrel"}, Identified: true}},
			Issues:      []service.InputIssue{{Ref: "Observation/2", Severity: "info", Message: "m"}},
		},
		Genotype: engine.Request{Diplotypes: map[string]string{"CYP2C19": "*2/*2", "CYP2D6": "*1/*4"}, State: "Tamil Nadu"},
		Checks:   []engine.Request{fullRequest, bad},
	})
	entry("smart_review", r.AuditID, err)

	b := svc.NewCSVBatch(call, service.CSVFile{Name: "lab.csv", Format: "ndjson", Bytes: 99, SHA256: "sha256:abc"},
		labcsv.Options{Wire: func(r engine.Result) any { return releasedOf(r) }})
	var chunkID string
	st, err := b.Run(ctx, strings.NewReader(labcsv.Header+"\nclopidogrel,rs4244285,Tamil Nadu,,ACS,p1\ncodeine,not-an-rsid,,,,p2\n"),
		func(int) error { return nil }, func(_ *labcsv.Chunk, ref service.Ref) error { chunkID = ref.ID; return nil })
	entry("batch_csv_chunk", chunkID, err)
	done, err := b.Complete(ctx, st)
	entry("batch_csv_closing", done.AuditID, err)

	v := svc.NewVCFCall(call, service.VCFFile{Name: "one.vcf", Format: "json", Bytes: 9, SHA256: "sha256:def", Samples: []string{"S1"}, Drugs: []string{"clopidogrel"}})
	var vcfChunkID string
	vst, err := v.Run(ctx, vcfOpener(oneSampleVCF), vcfcall.Options{Samples: []string{"S1"}, Drugs: []string{"clopidogrel"},
		Wire: func(r engine.Result) any { return releasedOf(r) }}, admitAll,
		func(_ *vcfcall.Chunk, ref service.Ref) error { vcfChunkID = ref.ID; return nil })
	entry("vcf_chunk", vcfChunkID, err)
	vdone, err := v.Complete(ctx, vst)
	entry("vcf_closing", vdone.AuditID, err)
	return out, svc
}

// recordJSON is an entry's two payloads as one indented JSON document
// (json.Compact of each part gives back the stored bytes exactly), with
// the knowledge version, which changes with every data edit, replaced by
// a placeholder.
func recordJSON(t *testing.T, e audit.Entry, knowledgeVersion string) string {
	t.Helper()
	var doc bytes.Buffer
	doc.WriteString(`{"request":`)
	doc.Write(e.Request)
	doc.WriteString(`,"response":`)
	doc.Write(e.Response)
	doc.WriteString(`}`)
	var out bytes.Buffer
	if err := json.Indent(&out, doc.Bytes(), "", "  "); err != nil {
		t.Fatalf("indent: %v", err)
	}
	return strings.ReplaceAll(out.String(), knowledgeVersion, "<knowledge_version>") + "\n"
}

// TestRecordFormats pins the JSON of every audit record type at its
// current version (testdata/records/<kind>.v<version>.json): a change to
// any record's format fails here, and needs the kind's next version. A
// version-1 record carries no version; from version 2 the request begins
// with "record_version".
func TestRecordFormats(t *testing.T) {
	entries, svc := recordKinds(t)
	versions := service.RecordVersionsForTest()
	for kind := range versions {
		if _, ok := entries[kind]; !ok {
			t.Errorf("record kind %s is not exercised by recordKinds", kind)
		}
	}
	for kind, e := range entries {
		t.Run(kind, func(t *testing.T) {
			version, ok := versions[kind]
			if !ok {
				t.Fatalf("record kind %s has no version in recordVersions", kind)
			}
			prefix := fmt.Sprintf(`{"record_version":%d,`, version)
			if has := bytes.HasPrefix(e.Request, []byte(prefix)); has != (version > 1) || (version == 1 && bytes.Contains(e.Request, []byte(`"record_version"`))) {
				t.Errorf("version %d request %.60s...: want the version field exactly from version 2", version, e.Request)
			}
			golden := filepath.Join("testdata", "records", fmt.Sprintf("%s.v%d.json", kind, version))
			got := recordJSON(t, e, svc.Knowledge().Version.Label)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file (rerun with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("audit record %s differs from %s (-golden +got); a format change needs a new record version:\n%s", kind, golden, diff)
			}
		})
	}
}

// TestOldRecordVersionsStillVerify: a log holding a version-1 SMART review
// entry (the bytes the service wrote before record versions) followed by
// a version-2 one verifies, and both read back as written: entries are
// hashed as stored, whatever their payloads' format.
func TestOldRecordVersionsStillVerify(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	old, err := os.ReadFile(filepath.Join("testdata", "records", "smart_review.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v1 struct{ Request, Response json.RawMessage }
	if err := json.Unmarshal(old, &v1); err != nil {
		t.Fatal(err)
	}
	var req, res bytes.Buffer
	if err := json.Compact(&req, v1.Request); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&res, v1.Response); err != nil {
		t.Fatal(err)
	}
	first, err := store.Append(ctx, audit.Entry{Time: fixedClock(), Endpoint: "GET /smart/review", RequestID: "old",
		KnowledgeVersion: "kv", Request: req.Bytes(), Response: res.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(b.Evaluator, b.Classifier, store, fixedClock)
	second, err := svc.ReviewView(ctx, call, service.ReviewInput{Record: service.ReviewRecord{Launch: "ehr", Patient: "p1"},
		Genotype: engine.Request{Diplotypes: map[string]string{"CYP2C19": "*2/*2"}},
		Checks:   []engine.Request{{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := audit.VerifyChain(ctx, store)
	if err != nil || sum.Entries != 2 {
		t.Fatalf("VerifyChain = %+v, %v; want 2 entries verified", sum, err)
	}
	var got []audit.Entry
	if err := store.Entries(ctx, 0, func(e audit.Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.AuditID ||
		!bytes.Equal(got[0].Request, req.Bytes()) || !bytes.Equal(got[0].Response, res.Bytes()) ||
		!bytes.HasPrefix(got[1].Request, []byte(`{"record_version":2,`)) {
		t.Errorf("entries read back: %d, first request %.40s, second request %.40s", len(got), got[0].Request, got[1].Request)
	}
}
