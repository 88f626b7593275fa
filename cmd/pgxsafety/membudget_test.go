package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/pgxsafety/pgxsafety/cdshooks"
	"github.com/pgxsafety/pgxsafety/knowledge"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// memUse is what one request cost in memory: the highest heap (objects,
// live and not yet swept) seen while it ran above the heap before it, and
// the bytes it allocated in all (runtime.MemStats.TotalAlloc).
type memUse struct {
	peak, total uint64
}

// measureMem runs fn after a GC and samples the heap every 200 µs.
func measureMem(fn func()) memUse {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var hi uint64
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			hi = max(hi, sample[0].Value.Uint64())
			select {
			case <-stop:
				peak <- hi
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	hi := <-peak
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	u := memUse{total: after.TotalAlloc - before.TotalAlloc}
	if hi > before.HeapAlloc {
		u.peak = hi - before.HeapAlloc
	}
	return u
}

// budgetRequest builds the largest request an endpoint accepts (or, for
// the streamed uploads, a large one: their memory does not grow with the
// file) and the status it must get.
type budgetRequest struct {
	build  func(t *testing.T) (body []byte, contentType string)
	status int
	// peak and total are the budgets, in MiB.
	peak, total uint64
}

const mib = 1 << 20

// TestMemoryBudgetPerEndpoint: every route of the real router has a
// stated memory budget, and its largest allowed request (the body limits
// of /pgx/version and cdshooks; the CDS call at every count limit) stays
// within it — the heap's peak above its level before the request, and
// everything allocated. A route added without a budget fails the test.
// Under the race detector allocations are larger: the budgets are then
// doubled. The streamed uploads (/pgx/batch_csv, /pgx/vcf) are measured at
// 2,000 rows and 640 samples (400 and 192 under the race detector): their peak does not grow with the file
// (measured the same at 5,000–20,000 rows and 160–2,560 samples; a JSON
// answer beyond 4 MiB spills to a temporary file), while what they
// allocate in all does.
func TestMemoryBudgetPerEndpoint(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	t.Setenv("PGXSAFETY_CDS_DEV_UNAUTHENTICATED", "true")
	t.Setenv("PGXSAFETY_RATE_LIMIT_PER_MINUTE", "100000")
	s := inProcess(t, dataDir, serverOptions{})
	token := devToken(t, dataDir, "budget", time.Now())

	rows, samples := 2000, 640
	if raceBuild {
		rows, samples = 400, 192 // the same bounds, in a test under ~10 s
	}
	get := budgetRequest{build: func(*testing.T) ([]byte, string) { return nil, "" }, status: http.StatusOK, peak: 16, total: 32}
	budgets := map[string]budgetRequest{
		"POST /pgx/check":     {build: paddedJSON(checkBody, 64<<10), status: http.StatusOK, peak: 8, total: 16},
		"POST /pgx/batch":     {build: largestBatch, status: http.StatusOK, peak: 32, total: 64},
		"POST /pgx/batch_csv": {build: csvUpload(rows), status: http.StatusOK, peak: 128, total: 256},
		"POST /pgx/vcf":       {build: vcfUpload(samples), status: http.StatusOK, peak: 96, total: 256},
		"POST /classifier_v2/classify": {build: paddedJSON(`{"gene":"TPMT","protein_change":"p.Ala154Thr"}`, pgxapi.ClassifyBodyLimit),
			status: http.StatusOK, peak: 8, total: 16},
		"POST /classifier_v2/demo/{case_name}": {build: func(*testing.T) ([]byte, string) { return nil, "" }, status: http.StatusOK, peak: 8, total: 16},
		"POST /cds-services/{id}":              {build: largestOrderSign, status: http.StatusOK, peak: 128, total: 256},
		"POST /cds-services/{id}/feedback":     {build: largestFeedback, status: http.StatusOK, peak: 8, total: 16},
	}
	paths := map[string]string{
		"POST /classifier_v2/demo/{case_name}": firstDemoCase(t, s.handler, token),
		"POST /cds-services/{id}":              "/cds-services/pgx-order-sign",
		"POST /cds-services/{id}/feedback":     "/cds-services/pgx-order-sign/feedback",
		"GET /pgx/audit/proof/inclusion":       "/pgx/audit/proof/inclusion?index=0&tree_size=1",
		"GET /pgx/audit/proof/consistency":     "/pgx/audit/proof/consistency?old=1&new=1",
	}
	// One check first, so that the log has an entry to prove.
	if rec := request(t, s.handler, http.MethodPost, "/pgx/check", token, checkBody); rec.Code != http.StatusOK {
		t.Fatalf("check: %d %s", rec.Code, rec.Body)
	}
	scale := uint64(1)
	if raceBuild {
		scale = 2
	}
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := route.GetMethods()
		for _, m := range methods {
			if m == http.MethodHead {
				continue
			}
			name := m + " " + tpl
			b, ok := budgets[name]
			if !ok && m == http.MethodGet {
				b, ok = get, true
			}
			if !ok {
				t.Errorf("%s has no memory budget", name)
				continue
			}
			path := tpl
			if p, ok := paths[name]; ok {
				path = p
			}
			t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
				body, ct := b.build(t)
				rec := &countingWriter{header: http.Header{}}
				use := measureMem(func() {
					req := httptest.NewRequest(m, path, bytes.NewReader(body))
					req.RemoteAddr = "127.0.0.1:40000" // a loopback client (the CDS development switch)
					if ct != "" {
						req.Header.Set("Content-Type", ct)
					}
					if !strings.HasPrefix(path, "/cds-services") {
						req.Header.Set("Authorization", "Bearer "+token) // CDS: the development switch, no token
					}
					s.handler.ServeHTTP(rec, req)
				})
				if rec.code != b.status && !(m == http.MethodGet && rec.code < 500) {
					t.Fatalf("status %d, want %d: %.300s", rec.code, b.status, rec.head)
				}
				t.Logf("request %d B, answer %d B: peak heap +%.1f MiB, allocated %.1f MiB", len(body), rec.n,
					float64(use.peak)/mib, float64(use.total)/mib)
				if use.peak > b.peak*scale*mib {
					t.Errorf("peak heap +%.1f MiB, budget %d MiB", float64(use.peak)/mib, b.peak*scale)
				}
				if use.total > b.total*scale*mib {
					t.Errorf("allocated %.1f MiB, budget %d MiB", float64(use.total)/mib, b.total*scale)
				}
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// countingWriter is a ResponseWriter that keeps the status, the first
// 300 bytes of the answer and its length: the answer itself is not held,
// so that the heap measured is the server's alone.
type countingWriter struct {
	header http.Header
	code   int
	head   []byte
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(w.head) < 300 {
		w.head = append(w.head, p[:min(len(p), 300-len(w.head))]...)
	}
	w.n += len(p)
	return len(p), nil
}

func (w *countingWriter) Flush() {}

// paddedJSON is body padded with spaces to exactly limit bytes.
func paddedJSON(body string, limit int) func(*testing.T) ([]byte, string) {
	return func(*testing.T) ([]byte, string) {
		return []byte(body + strings.Repeat(" ", limit-len(body))), "application/json"
	}
}

// largestBatch lists the most drugs /pgx/batch takes (BatchMaxDrugs),
// knowledge drugs in turn, padded to the body limit.
func largestBatch(t *testing.T) ([]byte, string) {
	kb, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	drugs := make([]string, pgxapi.BatchMaxDrugs)
	for i := range drugs {
		drugs[i] = kb.Drugs[i%len(kb.Drugs)].Name
	}
	b, _ := json.Marshal(map[string]any{"drugs": drugs, "diplotypes": map[string]string{"CYP2C19": "*2/*2", "CYP2D6": "*4/*4"},
		"genes_tested": []string{"CYP2C19", "CYP2D6"}, "state": "Tamil Nadu", "indication": "acute coronary syndrome, PCI"})
	return paddedJSON(string(b), pgxapi.BatchBodyLimit)(t)
}

// csvUpload is a lab CSV of rows distinct rows, streamed as NDJSON.
func csvUpload(rows int) func(*testing.T) ([]byte, string) {
	return func(t *testing.T) ([]byte, string) {
		return multipartFile(t, "lab.csv", benchCSVDistinctInputs(rows))
	}
}

// vcfUpload is a VCF of samples samples at the panel's CYP2C19 *2.
func vcfUpload(samples int) func(*testing.T) ([]byte, string) {
	return func(t *testing.T) ([]byte, string) {
		var b strings.Builder
		b.WriteString("##fileformat=VCFv4.2\n##contig=<ID=chr10,length=133797422>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT")
		for i := range samples {
			fmt.Fprintf(&b, "\tS%d", i)
		}
		b.WriteString("\nchr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT" + strings.Repeat("\t0/1", samples) + "\n")
		return multipartFile(t, "cohort.vcf", []byte(b.String()), "drug", "clopidogrel")
	}
}

func multipartFile(t *testing.T, name string, data []byte, fields ...string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// largestOrderSign is the bench's order-sign at every CDS count limit:
// MaxDraftOrders draft orders, MaxKeyResources active medications, and
// observations up to MaxCallResources resources in all.
func largestOrderSign(t *testing.T) ([]byte, string) {
	kb, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	base, err := benchOrderSignBody(kb)
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(base, &req); err != nil {
		t.Fatal(err)
	}
	grow := func(bundle map[string]any, n int) {
		entries := bundle["entry"].([]any)
		out := make([]any, n)
		for i := range out {
			var e map[string]any
			b, _ := json.Marshal(entries[i%len(entries)])
			json.Unmarshal(b, &e)
			res := e["resource"].(map[string]any)
			res["id"] = fmt.Sprint(res["id"], "-", i)
			out[i] = e
		}
		bundle["entry"] = out
	}
	prefetch := req["prefetch"].(map[string]any)
	grow(req["context"].(map[string]any)["draftOrders"].(map[string]any), cdshooks.MaxDraftOrders)
	grow(prefetch["activeMedications"].(map[string]any), cdshooks.MaxKeyResources)
	grow(prefetch["pgxObservations"].(map[string]any), cdshooks.MaxCallResources-cdshooks.MaxDraftOrders-cdshooks.MaxKeyResources-1)
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > cdshooks.HookBodyLimit {
		t.Fatalf("the largest order-sign is %d bytes, over the body limit", len(b))
	}
	return b, "application/json"
}

// largestFeedback posts the most feedback items of one call.
func largestFeedback(t *testing.T) ([]byte, string) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cds", "spec", "spec-2.0.1_feedback-accepted.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fb struct {
		Feedback []json.RawMessage `json:"feedback"`
	}
	if err := json.Unmarshal(raw, &fb); err != nil {
		t.Fatal(err)
	}
	items := make([]json.RawMessage, 100)
	for i := range items {
		items[i] = fb.Feedback[0]
	}
	b, _ := json.Marshal(map[string]any{"feedback": items})
	return b, "application/json"
}

// firstDemoCase names a classifier demo case.
func firstDemoCase(t *testing.T, h http.Handler, token string) string {
	rec := request(t, h, http.MethodGet, "/classifier_v2/demo_cases", token, "")
	var out struct {
		DemoCases []struct {
			Path string `json:"path"`
		} `json:"demo_cases"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.DemoCases) == 0 {
		t.Fatalf("demo cases: %v %s", err, rec.Body)
	}
	return out.DemoCases[0].Path
}
