package pgxapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// newReceiptServer is newServer with receipts signed by the test log key.
func newReceiptServer(t *testing.T) testServer {
	t.Helper()
	store := audittest.NewMemory()
	svc := service.New(kb, ck, store, fixedClock, service.WithReceipts(audit.NewReceiptSigner(audittest.Signer())))
	r := httpx.NewRouter()
	pgxapi.New(svc, store, zap.NewNop(), pgxapi.Config{RateLimitPerMinute: 60}).Register(r)
	return testServer{h: httpx.Wrap(r, zap.NewNop()), store: store}
}

// openReceipt opens an encoded receipt with the test log key and checks it
// names the stored entry id.
func openReceipt(t *testing.T, ts testServer, enc, id string) {
	t.Helper()
	r, err := audit.OpenReceipt(audittest.Signer().Verifier(), enc)
	if err != nil {
		t.Fatalf("receipt %q: %v", enc, err)
	}
	e, err := ts.store.Entry(context.Background(), id)
	if r.ID != id || err != nil || e.EntryHash != r.EntryHash || e.Sequence != r.Sequence {
		t.Fatalf("receipt %+v is not the receipt of entry %s (%+v)", r, id, e)
	}
}

// jsonReceipt checks the receipt of a JSON answer: the header and the
// envelope's audit_receipt are the same receipt, of its audit_log_id.
func jsonReceipt(t *testing.T, ts testServer, rec *httptest.ResponseRecorder) {
	t.Helper()
	var env struct {
		AuditLogID   string `json:"audit_log_id"`
		AuditReceipt string `json:"audit_receipt"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if rec.Header().Get(httpx.ReceiptHeader) != env.AuditReceipt {
		t.Fatalf("header and envelope receipts differ")
	}
	openReceipt(t, ts, env.AuditReceipt, env.AuditLogID)
}

// TestStreamedAnswersCarryReceipts: the JSON answers of /pgx/batch_csv and
// /pgx/vcf carry the closing entry's receipt in the header and the
// envelope; their NDJSON answers put a receipt line before the lines of
// each chunk (naming the chunk's entry, whose id the lines carry) and the
// closing receipt in the summary.
func TestStreamedAnswersCarryReceipts(t *testing.T) {
	csv := readCSV(t, "lab_clean.csv")
	vcf := readPharmCATVCF(t, "org/pharmgkb/pharmcat/multisample.vcf.bgz")
	post := map[string]func(ts testServer, accept string) []byte{
		"batch_csv": func(ts testServer, accept string) []byte {
			rec := ts.postCSV(t, csv, accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("batch_csv: %d %s", rec.Code, rec.Body)
			}
			if accept == "" {
				jsonReceipt(t, ts, rec)
			}
			return rec.Body.Bytes()
		},
		"vcf": func(ts testServer, accept string) []byte {
			rec := ts.postVCF(t, accept, vcfFile("multi.vcf.bgz", vcf))
			if rec.Code != http.StatusOK {
				t.Fatalf("vcf: %d %s", rec.Code, rec.Body)
			}
			if accept == "" {
				jsonReceipt(t, ts, rec)
			}
			return rec.Body.Bytes()
		},
	}
	for name, run := range post {
		t.Run(name, func(t *testing.T) {
			run(newReceiptServer(t), "")
			ts := newReceiptServer(t)
			body := run(ts, pgxapi.NDJSONContentType)
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(nil, 16<<20)
			var chunk string
			receiptLines, items := 0, 0
			for sc.Scan() {
				var line struct {
					Kind         string `json:"kind"`
					AuditLogID   string `json:"audit_log_id"`
					AuditReceipt string `json:"audit_receipt"`
				}
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("line %q: %v", sc.Bytes(), err)
				}
				switch line.Kind {
				case "receipt":
					openReceipt(t, ts, line.AuditReceipt, line.AuditLogID)
					chunk = line.AuditLogID
					receiptLines++
				case "row", "sample":
					if line.AuditLogID == "" || line.AuditLogID != chunk {
						t.Fatalf("%s line of entry %q after the receipt of %q", line.Kind, line.AuditLogID, chunk)
					}
					items++
				case "summary":
					openReceipt(t, ts, line.AuditReceipt, line.AuditLogID)
				default:
					t.Fatalf("unexpected line %s", sc.Bytes())
				}
			}
			if receiptLines == 0 || items == 0 {
				t.Errorf("%d receipt lines, %d items", receiptLines, items)
			}
		})
	}
}
