package pgxapi_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
	"github.com/pgxsafety/pgxsafety/pgxapi/internal/labcsvgen"
)

// multipartCSV builds a multipart/form-data body with data as the part
// "file".
func multipartCSV(t testing.TB, data []byte) (body *bytes.Buffer, contentType string) {
	t.Helper()
	body = &bytes.Buffer{}
	mw := multipart.NewWriter(body)
	if err := mw.WriteField("note", "an extra part the server skips"); err != nil {
		t.Fatal(err)
	}
	fw, err := mw.CreateFormFile("file", "lab.csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return body, mw.FormDataContentType()
}

func (ts testServer) postCSV(t testing.TB, data []byte, accept string) *httptest.ResponseRecorder {
	t.Helper()
	body, ct := multipartCSV(t, data)
	req := httptest.NewRequest(http.MethodPost, "/pgx/batch_csv", body)
	req.Header.Set("Content-Type", ct)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec
}

func readCSV(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "csv", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rowResult is a row of a batch answer; Result keeps the exact bytes sent.
type rowResult struct {
	Kind       string          `json:"kind"`
	Row        int             `json:"row"`
	Line       int             `json:"line"`
	PatientRef string          `json:"patient_ref"`
	OK         bool            `json:"ok"`
	AuditLogID string          `json:"audit_log_id"`
	Result     json.RawMessage `json:"result"`
	Error      *labcsv.RowError
}

type csvAnswer struct {
	APIVersion        string      `json:"api_version"`
	RequestID         string      `json:"request_id"`
	AuditLogID        string      `json:"audit_log_id"`
	Timestamp         string      `json:"timestamp"`
	LatencyMs         *int64      `json:"latency_ms"`
	GroundingContract string      `json:"grounding_contract"`
	KnowledgeVersion  string      `json:"knowledge_version"`
	RowsTotal         int         `json:"rows_total"`
	RowsSucceeded     int         `json:"rows_succeeded"`
	RowsFailed        int         `json:"rows_failed"`
	Results           []rowResult `json:"results"`
}

// ndjsonTail is the last NDJSON line: the summary or an error.
type ndjsonTail struct {
	Kind         string `json:"kind"`
	Status       int    `json:"status"`
	Detail       string `json:"detail"`
	Type         string `json:"type"`
	RowsReleased int    `json:"rows_released"`
	// Summary is the line read as a summary.
	Summary csvAnswer `json:"-"`
}

func decodeNDJSON(t testing.TB, body []byte) (rows []rowResult, last ndjsonTail) {
	t.Helper()
	if len(body) == 0 || body[len(body)-1] != '\n' {
		t.Fatalf("NDJSON body does not end with a newline")
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var kind struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			t.Fatalf("line is not JSON: %v\n%s", err, sc.Bytes())
		}
		switch kind.Kind {
		case "row":
			var r rowResult
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		case "summary", "error":
			if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(sc.Bytes(), &last.Summary); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("line of unknown kind %q", kind.Kind)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, last
}

// canonicalGolden replaces the per-call values and pretty-prints a JSON
// value.
func canonicalGolden(t testing.TB, body []byte) string {
	t.Helper()
	for _, p := range placeholders {
		body = p.re.ReplaceAll(body, []byte(p.repl))
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatalf("indent: %v\n%s", err, body)
	}
	return pretty.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (rerun with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("body differs from %s (-golden +got); if the change is intended, rerun with -update:\n%s", golden, diff)
	}
}

func TestBatchCSVGolden(t *testing.T) {
	ts := newServer(t)

	rec := ts.postCSV(t, readCSV(t, "lab_clean.csv"), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("clean: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	checkGolden(t, "batch_csv_clean.json", canonicalGolden(t, rec.Body.Bytes()))

	rec = ts.postCSV(t, readCSV(t, "lab_messy.csv"), "application/x-ndjson")
	if rec.Code != http.StatusOK {
		t.Fatalf("messy: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != pgxapi.NDJSONContentType {
		t.Errorf("Content-Type = %q", ct)
	}
	var lines []string
	for _, l := range bytes.SplitAfter(rec.Body.Bytes(), []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, canonicalGolden(t, l))
		}
	}
	checkGolden(t, "batch_csv_messy.ndjson", strings.Join(lines, "\n"))
}

// messyWant is what every row of testdata/csv/lab_messy.csv must give.
var messyWant = []struct {
	row, line int
	ref       string
	ok        bool
	code      string
	field     string
	drug      string // result.drug_normalised of a row that succeeds
}{
	{1, 2, "MSY-001", true, "", "", "clopidogrel"},
	{2, 4, "MSY-002", true, "", "", "omeprazole"},
	{3, 7, "MSY-003", true, "", "", "warfarin"},
	{4, 8, "MSY-004", false, "missing_value", "drug", ""},
	{5, 9, "MSY-005", false, "invalid_value", "variants[0]", ""},
	{6, 10, "MSY-006", true, "", "", "tramadol"},
	{7, 12, "", false, "column_count", "patient_ref", ""},
	{8, 13, "", false, "column_count", "record", ""},
	{9, 14, "", false, "bad_quoting", "indication", ""},
	{10, 15, "", false, "bad_quoting", "indication", ""},
	{11, 16, "MSY-011", true, "", "", "clopidgrel"},
	{12, 17, "MSY-012", true, "", "", "abacavir"},
	{13, 18, "", false, "invalid_encoding", "patient_ref", ""},
	{14, 19, "MSY-014", true, "", "", "primaquine"},
	{15, 20, "MSY-015", true, "", "", "tacrolimus"},
	{16, 21, "MSY-016", true, "", "", "capecitabine"},
	{17, 22, "", false, "bad_quoting", "indication", ""},
	{18, 23, "MSY-018", true, "", "", "sertraline"},
}

func TestBatchCSVMessyRows(t *testing.T) {
	ts := newServer(t)
	data := readCSV(t, "lab_messy.csv")

	rec := ts.postCSV(t, data, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	ans := decode[csvAnswer](t, rec)
	ndRec := ts.postCSV(t, data, "application/x-ndjson")
	ndRows, summary := decodeNDJSON(t, ndRec.Body.Bytes())

	if ans.RowsTotal != len(messyWant) || ans.RowsSucceeded != 10 || ans.RowsFailed != 8 {
		t.Errorf("counts %d/%d/%d, want %d/10/8", ans.RowsTotal, ans.RowsSucceeded, ans.RowsFailed, len(messyWant))
	}
	if summary.Summary.RowsTotal != ans.RowsTotal || summary.Summary.RowsSucceeded != ans.RowsSucceeded || summary.Summary.RowsFailed != ans.RowsFailed {
		t.Errorf("NDJSON summary %+v differs from the JSON counts", summary.Summary)
	}
	if len(ans.Results) != len(messyWant) || len(ndRows) != len(messyWant) {
		t.Fatalf("%d JSON rows, %d NDJSON rows, want %d", len(ans.Results), len(ndRows), len(messyWant))
	}
	for i, w := range messyWant {
		got := ans.Results[i]
		if got.Row != w.row || got.Line != w.line || got.PatientRef != w.ref || got.OK != w.ok {
			t.Errorf("row %d: got row %d line %d ref %q ok %v, want line %d ref %q ok %v", w.row, got.Row, got.Line, got.PatientRef, got.OK, w.line, w.ref, w.ok)
		}
		if got.AuditLogID == "" {
			t.Errorf("row %d has no audit_log_id", w.row)
		}
		if w.ok {
			var res pgxapi.Result
			if err := json.Unmarshal(got.Result, &res); err != nil {
				t.Fatalf("row %d result: %v", w.row, err)
			}
			if res.DrugNormalised != w.drug || res.GroundingContract != engine.GroundingContract || got.Error != nil {
				t.Errorf("row %d: drug %q, error %+v", w.row, res.DrugNormalised, got.Error)
			}
		} else if got.Error == nil || got.Error.Code != w.code || got.Error.Field != w.field || got.Error.Detail == "" || got.Result != nil {
			t.Errorf("row %d: error %+v, want code %s field %s", w.row, got.Error, w.code, w.field)
		}
		// The streamed row is the same row.
		nd := ndRows[i]
		nd.Kind, nd.AuditLogID, got.AuditLogID = "", "", ""
		if diff := cmp.Diff(got, nd); diff != "" {
			t.Errorf("row %d: NDJSON differs from JSON (-json +ndjson):\n%s", w.row, diff)
		}
	}

	// A drug the knowledge does not cover is not a failure: the row says
	// so and suggests the likely name, as /pgx/check does.
	var typo pgxapi.Result
	if err := json.Unmarshal(ans.Results[10].Result, &typo); err != nil {
		t.Fatal(err)
	}
	if typo.DrugRecognised || !cmp.Equal(typo.DidYouMean, []string{"clopidogrel"}) {
		t.Errorf("typo row: drug_recognised %v, did_you_mean %v", typo.DrugRecognised, typo.DidYouMean)
	}
	// The same row through /pgx/check gives the same result.
	chk := ts.check(t, `{"drug":"clopidgrel","variants":["rs4244285"],"state":"Tamil Nadu","indication":"acute coronary syndrome"}`)
	var direct struct {
		pgxapi.Result
	}
	if err := json.Unmarshal(chk.Body.Bytes(), &direct); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(direct.Result, typo); diff != "" {
		t.Errorf("batch row differs from /pgx/check (-check +batch):\n%s", diff)
	}
}

// TestBatchCSV1000 is the acceptance case: 1,000 rows of which 10 are bad
// give 990 successes and 10 failures, each naming its row and field.
func TestBatchCSV1000(t *testing.T) {
	var gen bytes.Buffer
	if err := labcsvgen.Write(&gen, labcsvgen.Lab1000); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "csv", "lab_1000_10bad.csv")
	if *update {
		if err := os.WriteFile(path, gen.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := readCSV(t, "lab_1000_10bad.csv")
	if !bytes.Equal(data, gen.Bytes()) {
		t.Fatalf("%s is not what labcsvgen.Lab1000 writes; rerun with -update", path)
	}

	ts := newServer(t)
	for _, accept := range []string{"", pgxapi.NDJSONContentType} {
		t.Run("accept="+accept, func(t *testing.T) {
			rec := ts.postCSV(t, data, accept)
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			var (
				rows   []rowResult
				counts csvAnswer
			)
			if accept == "" {
				counts = decode[csvAnswer](t, rec)
				rows = counts.Results
			} else {
				var last ndjsonTail
				rows, last = decodeNDJSON(t, rec.Body.Bytes())
				counts = last.Summary
			}
			if counts.RowsTotal != 1000 || counts.RowsSucceeded != 990 || counts.RowsFailed != 10 {
				t.Errorf("rows_total %d, rows_succeeded %d, rows_failed %d; want 1000, 990, 10", counts.RowsTotal, counts.RowsSucceeded, counts.RowsFailed)
			}
			type failure struct{ Row, Code, Field string }
			var got, want []failure
			for i, r := range labcsvgen.Lab1000.BadRows {
				k := labcsvgen.BadKinds[i%len(labcsvgen.BadKinds)]
				want = append(want, failure{fmt.Sprint(r), k.Code, k.Field})
			}
			for i, r := range rows {
				if r.Row != i+1 {
					t.Fatalf("result %d is row %d", i, r.Row)
				}
				if !r.OK {
					got = append(got, failure{fmt.Sprint(r.Row), r.Error.Code, r.Error.Field})
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
		})
	}
}

// auditEntries reads the whole audit log.
func auditEntries(t *testing.T, store audit.Reader) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	if err := store.Entries(context.Background(), 0, func(e audit.Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

type chunkEntry struct {
	Request struct {
		Kind  string `json:"kind"`
		Chunk int    `json:"chunk"`
		Rows  []struct {
			Row   int              `json:"row"`
			Input *labcsv.RowInput `json:"input"`
		} `json:"rows"`
	}
	Response struct {
		Rows []struct {
			Row             int              `json:"row"`
			OK              bool             `json:"ok"`
			ResultDigest    string           `json:"result_digest"`
			OverallSeverity string           `json:"overall_severity"`
			Error           *labcsv.RowError `json:"error"`
		} `json:"rows"`
	}
}

type closingEntry struct {
	Request struct {
		Kind       string `json:"kind"`
		FileBytes  int64  `json:"file_bytes"`
		FileSHA256 string `json:"file_sha256"`
		Format     string `json:"format"`
	}
	Response struct {
		Outcome       string   `json:"outcome"`
		Reason        string   `json:"reason"`
		RowsTotal     int      `json:"rows_total"`
		RowsSucceeded int      `json:"rows_succeeded"`
		RowsFailed    int      `json:"rows_failed"`
		RowsReleased  int      `json:"rows_released"`
		ChunkEntries  []string `json:"chunk_entries"`
	}
}

func readEntry[T any](t *testing.T, e audit.Entry) T {
	t.Helper()
	var v T
	raw := fmt.Sprintf(`{"Request":%s,"Response":%s}`, e.Request, e.Response)
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("audit entry %s: %v", e.ID, err)
	}
	return v
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestBatchCSVAudit checks that every released row's advice is in the
// audit log: each row's result digest in its chunk entry is the SHA-256 of
// exactly the bytes sent, and the closing entry names the file and the
// chunks.
func TestBatchCSVAudit(t *testing.T) {
	ts := newServer(t)
	data := readCSV(t, "lab_1000_10bad.csv")
	rec := ts.postCSV(t, data, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	ans := decode[csvAnswer](t, rec)
	entries := auditEntries(t, ts.store)
	if len(entries) != 3 {
		t.Fatalf("%d audit entries, want 2 chunk entries (500 rows each) and 1 closing entry", len(entries))
	}
	byID := map[string]audit.Entry{}
	for _, e := range entries {
		byID[e.ID] = e
		if e.Endpoint != pgxapi.BatchCSVEndpoint || e.RequestID != ans.RequestID || e.Principal.Subject != "anonymous" {
			t.Errorf("entry %s: endpoint %q request %q principal %+v", e.ID, e.Endpoint, e.RequestID, e.Principal)
		}
	}
	closing := readEntry[closingEntry](t, byID[ans.AuditLogID])
	if closing.Request.Kind != "batch_csv" || closing.Request.FileSHA256 != sha(data) || closing.Request.FileBytes != int64(len(data)) || closing.Request.Format != "json" {
		t.Errorf("closing request = %+v", closing.Request)
	}
	if c := closing.Response; c.Outcome != "completed" || c.RowsTotal != 1000 || c.RowsSucceeded != 990 || c.RowsFailed != 10 ||
		c.RowsReleased != 1000 || len(c.ChunkEntries) != 2 {
		t.Errorf("closing response = %+v", c)
	}
	if entries[2].ID != ans.AuditLogID {
		t.Errorf("the closing entry is not the last: ids %s, %s, %s", entries[0].ID, entries[1].ID, entries[2].ID)
	}
	digests := map[int]string{}
	for i, id := range closing.Response.ChunkEntries {
		ce := readEntry[chunkEntry](t, byID[id])
		if ce.Request.Kind != "batch_csv.chunk" || ce.Request.Chunk != i || len(ce.Request.Rows) != 500 || len(ce.Response.Rows) != 500 {
			t.Fatalf("chunk entry %d: kind %q chunk %d, %d/%d rows", i, ce.Request.Kind, ce.Request.Chunk, len(ce.Request.Rows), len(ce.Response.Rows))
		}
		for _, r := range ce.Response.Rows {
			digests[r.Row] = r.ResultDigest
		}
		if in := ce.Request.Rows[0].Input; in == nil || in.PatientRef != fmt.Sprintf("LAB-%07d", 500*i+1) {
			t.Errorf("chunk %d first input = %+v", i, in)
		}
	}
	for _, r := range ans.Results {
		want := ""
		if r.OK {
			want = "sha256:" + sha(r.Result)
		}
		if digests[r.Row] != want {
			t.Fatalf("row %d: audited digest %q, digest of the bytes sent %q", r.Row, digests[r.Row], want)
		}
		if r.AuditLogID != closing.Response.ChunkEntries[(r.Row-1)/500] {
			t.Fatalf("row %d names audit entry %s, not its chunk's", r.Row, r.AuditLogID)
		}
	}
	if err := audit.Verify(context.Background(), ts.store); err != nil {
		t.Errorf("audit chain: %v", err)
	}
}

func TestBatchCSVRejects(t *testing.T) {
	ts := newServerCfg(t, pgxapi.Config{BatchCSVMaxBytes: 4096, BatchCSVMaxRows: 5})
	rows := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString(labcsv.Header + "\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "clopidogrel,,Kerala,,angina,R%d\n", i)
		}
		return b.Bytes()
	}
	tests := []struct {
		name       string
		data       []byte
		raw        string // a request body that is not multipart
		ct         string
		accept     string
		wantStatus int
		wantParam  string
		wantText   string
	}{
		{name: "wrong header", data: []byte("drug,variant,state,ethnicity,indication,patient_ref\nclopidogrel,,,,,\n"),
			wantStatus: 422, wantParam: "header", wantText: labcsv.Header},
		{name: "wrong header, NDJSON", data: []byte("drug;variants\n"), accept: pgxapi.NDJSONContentType,
			wantStatus: 422, wantParam: "header", wantText: labcsv.Header},
		{name: "empty file", data: []byte{}, wantStatus: 422, wantParam: "file", wantText: "empty"},
		{name: "header only", data: []byte(labcsv.Header + "\r\n\r\n"), wantStatus: 422, wantParam: "file", wantText: "no data rows"},
		{name: "too many rows", data: rows(6), wantStatus: 413, wantParam: "file", wantText: "5 data rows"},
		{name: "too large", data: append(rows(1), bytes.Repeat([]byte("\n"), 5000)...), wantStatus: 413, wantParam: "file", wantText: "4096 bytes"},
		{name: "too large, NDJSON", data: append(rows(1), bytes.Repeat([]byte("\n"), 5000)...), accept: pgxapi.NDJSONContentType,
			wantStatus: 413, wantParam: "file", wantText: "4096 bytes"},
		{name: "JSON body", raw: `{"drug":"clopidogrel"}`, ct: "application/json", wantStatus: 415},
		{name: "no file part", raw: "--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--b--\r\n",
			ct: "multipart/form-data; boundary=b", wantStatus: 422, wantParam: "file", wantText: "required"},
		{name: "no boundary", raw: "x", ct: "multipart/form-data", wantStatus: 400},
		{name: "truncated multipart", raw: "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n" + labcsv.Header + "\nclopidogrel,,,,,r\n",
			ct: "multipart/form-data; boundary=b", wantStatus: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec *httptest.ResponseRecorder
			if tc.raw != "" {
				rec = ts.do(t, http.MethodPost, "/pgx/batch_csv", tc.ct, strings.NewReader(tc.raw))
			} else {
				rec = ts.postCSV(t, tc.data, tc.accept)
			}
			p := problem(t, rec, tc.wantStatus)
			if tc.wantParam != "" {
				if len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != tc.wantParam {
					t.Fatalf("invalid_params = %+v, want %q", p.InvalidParams, tc.wantParam)
				}
				if text := p.Detail + " " + p.InvalidParams[0].Reason; !strings.Contains(text, tc.wantText) {
					t.Errorf("problem %q / %q does not say %q", p.Detail, p.InvalidParams[0].Reason, tc.wantText)
				}
			}
		})
	}
	rec := ts.do(t, http.MethodGet, "/pgx/batch_csv", "", nil)
	if p := problem(t, rec, http.StatusMethodNotAllowed); rec.Header().Get("Allow") != "POST" {
		t.Errorf("405 Allow = %q (%+v)", rec.Header().Get("Allow"), p)
	}
	// The too-large upload is refused from Content-Length alone.
	req := httptest.NewRequest(http.MethodPost, "/pgx/batch_csv", strings.NewReader("x"))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	req.ContentLength = 4096 + 2<<20
	r2 := httptest.NewRecorder()
	ts.h.ServeHTTP(r2, req)
	problem(t, r2, http.StatusRequestEntityTooLarge)

	if n := len(auditEntries(t, ts.store)); n != 0 {
		t.Errorf("%d audit entries written for rejected batches", n)
	}
}

// TestBatchCSVLimitAfterStreaming: the row limit found after rows were
// streamed ends the stream with an error line and no summary, and the
// audit log says the batch was aborted after the released rows.
func TestBatchCSVLimitAfterStreaming(t *testing.T) {
	ts := newServerCfg(t, pgxapi.Config{BatchCSVMaxRows: 600})
	var data bytes.Buffer
	if err := labcsvgen.Write(&data, labcsvgen.Options{Rows: 700, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	rec := ts.postCSV(t, data.Bytes(), pgxapi.NDJSONContentType)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	rows, last := decodeNDJSON(t, rec.Body.Bytes())
	if len(rows) != labcsv.DefaultChunkRows {
		t.Errorf("%d rows released, want the first chunk (%d)", len(rows), labcsv.DefaultChunkRows)
	}
	if last.Kind != "error" || last.Status != 413 || last.Type != httpx.TypeTooLarge || !strings.Contains(last.Detail, "600") ||
		last.RowsReleased != len(rows) {
		t.Errorf("last line = kind %q status %d type %q detail %q released %d", last.Kind, last.Status, last.Type, last.Detail, last.RowsReleased)
	}
	entries := auditEntries(t, ts.store)
	if len(entries) != 2 {
		t.Fatalf("%d audit entries, want 1 chunk and 1 closing", len(entries))
	}
	closing := readEntry[closingEntry](t, entries[1])
	if c := closing.Response; c.Outcome != "aborted" || c.RowsReleased != labcsv.DefaultChunkRows || !strings.Contains(c.Reason, "600") ||
		!cmp.Equal(c.ChunkEntries, []string{entries[0].ID}) {
		t.Errorf("closing entry = %+v", c)
	}
}

func TestBatchCSVWithoutAuditGivesNoAdvice(t *testing.T) {
	for _, accept := range []string{"", pgxapi.NDJSONContentType} {
		ts := newServer(t)
		if err := ts.store.Close(); err != nil {
			t.Fatal(err)
		}
		rec := ts.postCSV(t, readCSV(t, "lab_clean.csv"), accept)
		p := problem(t, rec, http.StatusServiceUnavailable)
		if p.Type != httpx.TypeAuditUnavailable || strings.Contains(rec.Body.String(), "alerts") {
			t.Errorf("accept %q: problem %+v", accept, p)
		}
	}
}

// TestBatchCSVStreams uploads through a real connection and reads the
// first chunk's lines while the rest of the file has not been sent: the
// answer streams, it is not computed after the upload.
func TestBatchCSVStreams(t *testing.T) {
	ts := newServer(t)
	srv := httptest.NewServer(ts.h)
	defer srv.Close()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	firstLine := make(chan struct{})
	writeErr := make(chan error, 1)
	go func() {
		writeErr <- func() error {
			fw, err := mw.CreateFormFile("file", "lab.csv")
			if err != nil {
				return err
			}
			var data bytes.Buffer
			if err := labcsvgen.Write(&data, labcsvgen.Options{Rows: 1200, Seed: 9}); err != nil {
				return err
			}
			lines := bytes.SplitAfter(data.Bytes(), []byte("\n"))
			if _, err := fw.Write(bytes.Join(lines[:labcsv.DefaultChunkRows+2], nil)); err != nil {
				return err
			}
			select {
			case <-firstLine:
			case <-time.After(30 * time.Second):
				return fmt.Errorf("no NDJSON line arrived while the upload was held back")
			}
			if _, err := fw.Write(bytes.Join(lines[labcsv.DefaultChunkRows+2:], nil)); err != nil {
				return err
			}
			if err := mw.Close(); err != nil {
				return err
			}
			return pw.Close()
		}()
	}()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/pgx/batch_csv", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", pgxapi.NDJSONContentType)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 1<<20)
	first, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatalf("first line: %v", err)
	}
	close(firstLine)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	rows, last := decodeNDJSON(t, append(first, rest...))
	if len(rows) != 1200 || last.Kind != "summary" || last.Summary.RowsTotal != 1200 {
		t.Errorf("%d rows, last line %q with rows_total %d", len(rows), last.Kind, last.Summary.RowsTotal)
	}
}

// BenchmarkCSVProcessor reports rows/s of the engine side of a batch
// (parse, evaluate on all cores, encode, digest) on a lab-shaped file,
// with the per-run result cache and without it (every row evaluated).
func BenchmarkCSVProcessor(b *testing.B) {
	var data bytes.Buffer
	if err := labcsvgen.Write(&data, labcsvgen.Options{Rows: 20000, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		cache int
	}{{"cache", 0}, {"nocache", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			proc := labcsv.NewProcessor(kb, labcsv.Options{CacheBytes: bc.cache, Wire: pgxapi.WireResult})
			rows, hits := 0, 0
			b.SetBytes(int64(data.Len()))
			for b.Loop() {
				st, err := proc.Run(context.Background(), bytes.NewReader(data.Bytes()), func(*labcsv.Chunk) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				rows += st.Rows
				hits += st.CacheHits
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(100*float64(hits)/float64(max(rows, 1)), "cache-hit-%")
		})
	}
}

// TestBatchCSVTwoFileParts: a second part named file is refused with 422
// naming the field (its rows would otherwise go unread and unreported), in
// both answer formats.
func TestBatchCSVTwoFileParts(t *testing.T) {
	ts := newServer(t)
	csv := []byte("drug,variants,state,ethnicity,indication,patient_ref\nclopidogrel,rs4244285,Tamil Nadu,,PCI,P1\n")
	for _, accept := range []string{"", "application/x-ndjson"} {
		body := &bytes.Buffer{}
		mw := multipart.NewWriter(body)
		for _, name := range []string{"a.csv", "b.csv"} {
			fw, err := mw.CreateFormFile("file", name)
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(csv)
		}
		mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/pgx/batch_csv", body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		if accept == "" {
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"name":"file"`) {
				t.Errorf("JSON: %d %s", rec.Code, rec.Body.String())
			}
			continue
		}
		// Streaming: the first file's row may already be out; the stream
		// must end with an error line, not a summary.
		if !strings.Contains(rec.Body.String(), `"kind":"error"`) || !strings.Contains(rec.Body.String(), `"name":"file"`) || strings.Contains(rec.Body.String(), `"kind":"summary"`) {
			t.Errorf("NDJSON: %d %s", rec.Code, rec.Body.String())
		}
	}
}

// TestBatchCSVStreamCutByShutdownEndsWithErrorLine starts an NDJSON batch
// over a real connection, lets rows come back, then signals shutdown while
// the upload is still going: the stream must end with an error line of
// type shutting-down naming how many rows were released, so the client
// can tell the cut from a complete answer.
func TestBatchCSVStreamCutByShutdownEndsWithErrorLine(t *testing.T) {
	store := audittest.NewMemory()
	stopping := make(chan struct{})
	srv := pgxapi.New(service.New(kb, ck, store, fixedClock), store, zap.NewNop(), pgxapi.Config{RateLimitPerMinute: 60, Stopping: stopping})
	r := httpx.NewRouter()
	srv.Register(r)
	hs := httptest.NewServer(httpx.Wrap(r, zap.NewNop()))
	defer hs.Close()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, err := http.NewRequest(http.MethodPost, hs.URL+"/pgx/batch_csv", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/x-ndjson")
	rows := func(from, n int) []byte {
		var b bytes.Buffer
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "clopidogrel,rs4244285,Tamil Nadu,,ACS,r%d\n", i)
		}
		return b.Bytes()
	}
	writeErr := make(chan error, 1)
	more := make(chan struct{})
	go func() {
		part, err := mw.CreateFormFile("file", "lab.csv")
		if err == nil {
			_, err = part.Write(append([]byte(labcsv.Header+"\n"), rows(0, 600)...))
		}
		if err != nil {
			writeErr <- err
			pw.CloseWithError(err)
			return
		}
		<-more // the rest of the upload comes after shutdown began
		_, _ = part.Write(rows(600, 600))
		_ = mw.Close()
		writeErr <- pw.Close()
	}()
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == 1 {
			close(stopping)
			close(more)
		}
	}
	if len(lines) < 2 {
		t.Fatalf("got %d lines, want rows and a final error line", len(lines))
	}
	released, _ := wantShutdownLine(t, lines[len(lines)-1], "rows_released")
	if released != len(lines)-1 || released >= 1200 {
		t.Errorf("rows_released = %d with %d row lines before it", released, len(lines)-1)
	}
}
