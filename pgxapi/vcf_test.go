package pgxapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/audittest"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/datapacktest"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// formPart is one part of a multipart body: a file when fileName is set.
type formPart struct {
	name, fileName string
	data           []byte
}

func multipartBody(t testing.TB, parts ...formPart) (*bytes.Buffer, string) {
	t.Helper()
	body := &bytes.Buffer{}
	mw := multipart.NewWriter(body)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.fileName != "" {
			w, err = mw.CreateFormFile(p.name, p.fileName)
		} else {
			w, err = mw.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return body, mw.FormDataContentType()
}

func (ts testServer) postVCF(t testing.TB, accept string, parts ...formPart) *httptest.ResponseRecorder {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	req := httptest.NewRequest(http.MethodPost, "/pgx/vcf", body)
	req.Header.Set("Content-Type", ct)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec
}

func vcfFile(name string, data []byte) formPart {
	return formPart{name: "file", fileName: name, data: data}
}

// vcfSample is one sample of an answer.
type vcfSample struct {
	Kind       string               `json:"kind"`
	Index      int                  `json:"index"`
	AuditLogID string               `json:"audit_log_id"`
	Sample     string               `json:"sample"`
	Genes      []vcfcall.GeneResult `json:"genes"`
	Warnings   []string             `json:"warnings"`
}

type vcfAnswer struct {
	Kind              string `json:"kind"`
	APIVersion        string `json:"api_version"`
	RequestID         string `json:"request_id"`
	AuditLogID        string `json:"audit_log_id"`
	Timestamp         string `json:"timestamp"`
	LatencyMs         *int64 `json:"latency_ms"`
	GroundingContract string `json:"grounding_contract"`
	KnowledgeVersion  string `json:"knowledge_version"`
	File              struct {
		Name   string `json:"name"`
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	} `json:"file"`
	Drugs           []string    `json:"drugs"`
	SamplesInFile   int         `json:"samples_in_file"`
	SamplesAnswered int         `json:"samples_answered"`
	Records         int         `json:"records"`
	RecordsUsed     int         `json:"records_used"`
	Warnings        []string    `json:"warnings"`
	Samples         []vcfSample `json:"samples"`
}

// TestVCFPharmCATTestVCFs sends every PharmCAT test VCF to POST /pgx/vcf:
// each is answered for every sample, with audit ids, or refused with 422
// naming the line exactly as documented.
func TestVCFPharmCATTestVCFs(t *testing.T) {
	dir := datapacktest.PharmCATTestVCFs(t)
	want := datapacktest.PharmCATRefused(t)
	ts := newServer(t)
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".vcf") || strings.HasSuffix(path, ".vcf.bgz")) {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rec := ts.postVCF(t, "", vcfFile(filepath.Base(path), data))
		if reason, refused := want[rel]; refused {
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422 (%s)", rel, rec.Code, reason)
				return nil
			}
			p := decode[httpx.Problem](t, rec)
			wantP := httpx.Problem{Type: httpx.TypeInvalidVCF, Title: "Unprocessable Entity", Status: 422,
				Detail: "the VCF cannot be read: " + reason, RequestID: p.RequestID,
				InvalidParams: []httpx.Param{{Name: "file", Reason: reason}}}
			if diff := cmp.Diff(wantP, p); diff != "" {
				t.Errorf("%s: problem (-want +got):\n%s", rel, diff)
			}
			return nil
		}
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d: %s", rel, rec.Code, rec.Body)
			return nil
		}
		a := decode[vcfAnswer](t, rec)
		if a.SamplesAnswered == 0 || a.SamplesAnswered != a.SamplesInFile || len(a.Samples) != a.SamplesAnswered ||
			a.AuditLogID == "" || a.File.Bytes != int64(len(data)) || a.File.SHA256 != sha(data) {
			t.Errorf("%s: answer %d/%d samples (%d listed), audit %q, file %+v", rel, a.SamplesAnswered, a.SamplesInFile, len(a.Samples), a.AuditLogID, a.File)
		}
		for i, s := range a.Samples {
			if s.Index != i || s.AuditLogID == "" || s.Sample == "" || len(s.Genes) != len(kb.Caller().DefinitionGenes()) {
				t.Errorf("%s: sample %d = index %d, audit %q, name %q, %d genes", rel, i, s.Index, s.AuditLogID, s.Sample, len(s.Genes))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 150 {
		t.Errorf("%d test VCFs found; expected the whole PharmCAT set", n)
	}
}

func readPharmCATVCF(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(datapacktest.PharmCATTestVCFs(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVCFAudit checks, for JSON and NDJSON, that every sample released is
// in the audit log: its chunk entry holds the SHA-256 of exactly the
// result bytes sent (the engine's answer for that sample), and the closing
// entry names the file, the samples asked for and the chunk entries.
func TestVCFAudit(t *testing.T) {
	data := readPharmCATVCF(t, "org/pharmgkb/pharmcat/multisample.vcf.bgz")
	// The engine's own answers, to compare the released bytes with.
	var engineSamples []vcfcall.Sample
	_, err := vcfcall.Run(context.Background(), kb, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		vcfcall.Options{}, func(c *vcfcall.Chunk) error { engineSamples = append(engineSamples, c.Samples...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"", pgxapi.NDJSONContentType} {
		ts := newServer(t)
		rec := ts.postVCF(t, accept, formPart{name: "sample", data: []byte("Sample_2")}, vcfFile("multi.vcf.bgz", data),
			formPart{name: "sample", data: []byte("Sample_1")})
		if rec.Code != http.StatusOK {
			t.Fatalf("accept %q: status %d: %s", accept, rec.Code, rec.Body)
		}
		var lines [][]byte
		var summary vcfAnswer
		if accept == "" {
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var raw struct {
				Samples []json.RawMessage `json:"samples"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			for _, s := range raw.Samples {
				lines = append(lines, s)
			}
			summary = decode[vcfAnswer](t, rec)
		} else {
			if ct := rec.Header().Get("Content-Type"); ct != pgxapi.NDJSONContentType {
				t.Errorf("Content-Type %q", ct)
			}
			sc := bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				lines = append(lines, append([]byte(nil), sc.Bytes()...))
			}
			if len(lines) == 0 {
				t.Fatal("no lines")
			}
			if err := json.Unmarshal(lines[len(lines)-1], &summary); err != nil || summary.Kind != "summary" {
				t.Fatalf("last line %s: %v", lines[len(lines)-1], err)
			}
			lines = lines[:len(lines)-1]
		}
		entries := auditEntries(t, ts.store)
		if len(entries) != 2 {
			t.Fatalf("accept %q: %d audit entries, want one chunk and one closing", accept, len(entries))
		}
		kind := ""
		if accept != "" {
			kind = "sample"
		}
		if len(lines) != 2 {
			t.Fatalf("accept %q: %d samples released, want 2", accept, len(lines))
		}
		for i, line := range lines {
			want := pgxapi.AppendVCFSampleJSON(nil, &engineSamples[i], entries[0].ID, kind)
			if !bytes.Equal(line, want) {
				t.Errorf("accept %q: sample %d released as\n%s\nwant\n%s", accept, i, line, want)
			}
		}
		type chunk struct {
			Request struct {
				Kind    string `json:"kind"`
				Samples []struct {
					Index int    `json:"index"`
					Name  string `json:"name"`
				} `json:"samples"`
			}
			Response struct {
				Samples []struct {
					Index        int    `json:"index"`
					ResultDigest string `json:"result_digest"`
				} `json:"samples"`
			}
		}
		c := readEntry[chunk](t, entries[0])
		if c.Request.Kind != "vcf.chunk" || len(c.Response.Samples) != 2 {
			t.Fatalf("chunk entry %+v", c)
		}
		for i, s := range c.Response.Samples {
			if s.ResultDigest != engineSamples[i].ResultDigest || c.Request.Samples[i].Name != engineSamples[i].Name {
				t.Errorf("chunk entry sample %d: %+v, want digest %s of %s", i, s, engineSamples[i].ResultDigest, engineSamples[i].Name)
			}
		}
		type closing struct {
			Request struct {
				Kind       string   `json:"kind"`
				FileName   string   `json:"file_name"`
				FileBytes  int64    `json:"file_bytes"`
				FileSHA256 string   `json:"file_sha256"`
				Format     string   `json:"format"`
				Samples    []string `json:"samples"`
			}
			Response struct {
				Outcome         string   `json:"outcome"`
				SamplesReleased int      `json:"samples_released"`
				ChunkEntries    []string `json:"chunk_entries"`
			}
		}
		cl := readEntry[closing](t, entries[1])
		format := "json"
		if accept != "" {
			format = "ndjson"
		}
		if cl.Request.Kind != "vcf" || cl.Request.FileName != "multi.vcf.bgz" || cl.Request.FileBytes != int64(len(data)) ||
			cl.Request.FileSHA256 != sha(data) || cl.Request.Format != format || !cmp.Equal(cl.Request.Samples, []string{"Sample_2", "Sample_1"}) ||
			cl.Response.Outcome != "completed" || cl.Response.SamplesReleased != 2 || !cmp.Equal(cl.Response.ChunkEntries, []string{entries[0].ID}) {
			t.Errorf("closing entry %+v", cl)
		}
		if summary.AuditLogID != entries[1].ID || summary.SamplesAnswered != 2 || summary.SamplesInFile != 2 ||
			summary.GroundingContract == "" || summary.KnowledgeVersion != kb.Version.Label || summary.LatencyMs == nil {
			t.Errorf("accept %q: envelope %+v", accept, summary)
		}
	}
}

func manyParts(name string, n int) []formPart {
	parts := make([]formPart, n)
	for i := range parts {
		parts[i] = formPart{name: name, data: []byte("warfarin")}
	}
	return parts
}

func TestVCFRefusals(t *testing.T) {
	good := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n" +
		"chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\n")
	hg19 := []byte("##fileformat=VCFv4.2\n##reference=file:///ref/hg19.fa\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n")
	unsorted := append(append([]byte(nil), good...), "chr10\t94781858\t.\tG\tA\t.\tPASS\t.\tGT\t0/1\n"...)
	tests := []struct {
		name   string
		cfg    pgxapi.Config
		parts  []formPart
		status int
		typ    string
		params []httpx.Param
	}{
		{"GRCh37 reference", pgxapi.Config{}, []formPart{vcfFile("a.vcf", hg19)}, 422, httpx.TypeInvalidVCF,
			[]httpx.Param{{Name: "file", Reason: `line 2: ##reference: "file:///ref/hg19.fa" names GRCh37/hg19: only GRCh38 is read`}}},
		{"REF of another build at a definition position, no build header", pgxapi.Config{},
			[]formPart{vcfFile("a.vcf", []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\nchr10\t94781859\trs4244285\tC\tA\t.\tPASS\t.\tGT\t0/1\n"))}, 422, httpx.TypeInvalidVCF,
			[]httpx.Param{{Name: "file", Reason: "line 3: REF: C at chr10:94781859 is not the GRCh38 reference G (a position of the CYP2C19 allele definitions): the file looks like another genome build (GRCh37?); only GRCh38 is read"}}},
		{"unsorted", pgxapi.Config{}, []formPart{vcfFile("a.vcf", unsorted)}, 422, httpx.TypeInvalidVCF,
			[]httpx.Param{{Name: "file", Reason: "line 4: POS: the file is not sorted: chr10:94781858 comes after chr10:94781859"}}},
		{"not a VCF", pgxapi.Config{}, []formPart{vcfFile("a.csv", []byte("drug,variants\n"))}, 422, httpx.TypeInvalidVCF,
			[]httpx.Param{{Name: "file", Reason: `line 1: ##fileformat: the first line must be ##fileformat=VCFv4.x; got "drug,variants"`}}},
		{"no file", pgxapi.Config{}, []formPart{{name: "sample", data: []byte("S1")}}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "file", Reason: "is required: a multipart part named file holding the VCF"}}},
		{"empty file", pgxapi.Config{}, []formPart{vcfFile("a.vcf", nil)}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "file", Reason: "is empty"}}},
		{"two files", pgxapi.Config{}, []formPart{vcfFile("a.vcf", good), vcfFile("b.vcf", good)}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "file", Reason: "must be sent once: the request holds a second part named file; send one VCF per request"}}},
		{"unknown field", pgxapi.Config{}, []formPart{vcfFile("a.vcf", good), {name: "drugs", data: []byte("codeine")}}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "drugs", Reason: "is not a field of this endpoint (the fields are file, drug, sample, format and outside_calls)"}}},
		{"empty sample", pgxapi.Config{}, []formPart{vcfFile("a.vcf", good), {name: "sample", data: []byte(" ")}}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "sample[0]", Reason: "is empty"}}},
		{"unknown sample", pgxapi.Config{}, []formPart{vcfFile("a.vcf", good), {name: "sample", data: []byte("NA12878")}}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "sample", Reason: `sample "NA12878": the file has no such sample (its samples: S1)`}}},
		{"empty drug", pgxapi.Config{}, []formPart{vcfFile("a.vcf", good), {name: "drug", data: []byte("clopidogrel")}, {name: "drug", data: nil}}, 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "drug[1]", Reason: "is empty"}}},
		{"too many drugs", pgxapi.Config{}, append([]formPart{vcfFile("a.vcf", good)}, manyParts("drug", 60)...), 422, httpx.TypeInvalidParams,
			[]httpx.Param{{Name: "drug", Reason: "at most 50 drugs per request"}}},
		{"too large", pgxapi.Config{VCFMaxBytes: 50}, []formPart{vcfFile("a.vcf", good)}, 413, httpx.TypeTooLarge,
			[]httpx.Param{{Name: "file", Reason: "must be at most 50 bytes"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServerCfg(t, tt.cfg)
			rec := ts.postVCF(t, "", tt.parts...)
			p := problem(t, rec, tt.status)
			if p.Type != tt.typ {
				t.Errorf("type %q, want %q", p.Type, tt.typ)
			}
			if diff := cmp.Diff(tt.params, p.InvalidParams); diff != "" {
				t.Errorf("invalid_params (-want +got):\n%s", diff)
			}
			if n := len(auditEntries(t, ts.store)); n != 0 {
				t.Errorf("%d audit entries for a refused request", n)
			}
		})
	}
	t.Run("not multipart", func(t *testing.T) {
		ts := newServer(t)
		rec := ts.do(t, http.MethodPost, "/pgx/vcf", "text/plain", bytes.NewReader(good))
		if p := problem(t, rec, http.StatusUnsupportedMediaType); p.Type != httpx.TypeUnsupportedMedia {
			t.Errorf("problem %+v", p)
		}
	})
}

func TestVCFWithoutAuditGivesNoAdvice(t *testing.T) {
	data := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n" +
		"chr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT\t0/1\n")
	for _, accept := range []string{"", pgxapi.NDJSONContentType} {
		ts := newServer(t)
		if err := ts.store.Close(); err != nil {
			t.Fatal(err)
		}
		rec := ts.postVCF(t, accept, vcfFile("a.vcf", data))
		p := problem(t, rec, http.StatusServiceUnavailable)
		if p.Type != httpx.TypeAuditUnavailable || strings.Contains(rec.Body.String(), "genes") {
			t.Errorf("accept %q: problem %+v", accept, p)
		}
	}
}

// TestVCFDrugChecks: with drug parts, every sample carries one check per
// drug, equal to POST /pgx/check with the sample's genotypes as position
// calls, and the group entry records each check's overall severity.
func TestVCFDrugChecks(t *testing.T) {
	data := []byte("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n" +
		"chr10\t94781859\trs4244285\tG\tA,<*>\t.\tPASS\t.\tGT\t1/1\t0/2\n")
	ts := newServer(t)
	rec := ts.postVCF(t, "", vcfFile("a.vcf", data), formPart{name: "drug", data: []byte("clopidogrel")}, formPart{name: "drug", data: []byte("paracetamol")})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var a struct {
		Drugs   []string `json:"drugs"`
		Samples []struct {
			Sample   string   `json:"sample"`
			Warnings []string `json:"warnings"`
			Checks   []struct {
				Drug   string          `json:"drug"`
				Result json.RawMessage `json:"result"`
				Error  string          `json:"error"`
			} `json:"checks"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(a.Drugs, []string{"clopidogrel", "paracetamol"}) || len(a.Samples) != 2 {
		t.Fatalf("answer drugs %q, %d samples", a.Drugs, len(a.Samples))
	}
	calls := map[string]string{"S1": "1/1", "S2": "0/."}
	for _, s := range a.Samples {
		if len(s.Checks) != 2 {
			t.Fatalf("%s: %d checks", s.Sample, len(s.Checks))
		}
		for i, drug := range []string{"clopidogrel", "paracetamol"} {
			c := s.Checks[i]
			if c.Drug != drug || c.Error != "" {
				t.Errorf("%s: check %d = %q error %q", s.Sample, i, c.Drug, c.Error)
			}
			// The same check through POST /pgx/check with the calls.
			body := fmt.Sprintf(`{"drug":%q,"calls":[{"chrom":"chr10","pos":94781859,"ref":"G","alt":"A","genotype":%q}]}`, drug, calls[s.Sample])
			want := ts.check(t, body)
			if want.Code != http.StatusOK {
				t.Fatalf("check %s: %d %s", body, want.Code, want.Body)
			}
			var w map[string]any
			var got map[string]any
			if err := json.Unmarshal(want.Body.Bytes(), &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(c.Result, &got); err != nil {
				t.Fatal(err)
			}
			// The check's evidence ledger names its request's calls; the
			// VCF's evidence is accounted for in its gene entries.
			if _, ok := w["evidence"]; !ok {
				t.Errorf("%s %s: POST /pgx/check answer has no evidence ledger", s.Sample, drug)
			}
			for _, k := range []string{"api_version", "request_id", "audit_log_id", "timestamp", "latency_ms", "evidence"} {
				delete(w, k)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("%s %s: check differs from POST /pgx/check with the same calls (-check +vcf):\n%s", s.Sample, drug, diff)
			}
		}
	}
	if w := a.Samples[1].Warnings; len(w) == 0 || !strings.Contains(w[len(w)-1], "non-base ALT allele") {
		t.Errorf("S2 warnings %q lack the no-call note", w)
	}
	// The first entry is the VCF's group entry (the checks above came after).
	entries := auditEntries(t, ts.store)
	if len(entries) < 2 || !strings.Contains(string(entries[0].Request), `"kind":"vcf.chunk"`) ||
		!strings.Contains(string(entries[0].Response), `"checks":[{"drug":"clopidogrel","overall_severity":"`) {
		t.Errorf("group entry does not record the checks: %s", entries[0].Response)
	}
}

// BenchmarkVCF100Samples posts PharmCAT's 100-sample bgzip test VCF to
// POST /pgx/vcf (real router, SQLite audit log). Reported: samples/s.
func BenchmarkVCF100Samples(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(datapacktest.PharmCATTestVCFs(b), "org", "pharmgkb", "pharmcat", "100samples.vcf.bgz"))
	if err != nil {
		b.Fatal(err)
	}
	store, err := sqlstore.Open(context.Background(), "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	srv := pgxapi.New(service.New(kb, ck, store, fixedClock), store, zap.NewNop(), pgxapi.Config{})
	r := httpx.NewRouter()
	srv.Register(r)
	h := httpx.Wrap(r, zap.NewNop())
	body, ct := multipartBody(b, vcfFile("100samples.vcf.bgz", data))
	samples := 0
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/pgx/vcf", bytes.NewReader(body.Bytes()))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Accept", pgxapi.NDJSONContentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		samples += 100
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

// TestVCFStreamStopsAtRateLimit: groups are charged before release; a
// refused charge after lines were sent ends the stream with an error line
// naming how many samples were released, and the closing entry says the
// answer was aborted.
func TestVCFStreamStopsAtRateLimit(t *testing.T) {
	data := readPharmCATVCF(t, "org/pharmgkb/pharmcat/100samples.vcf.bgz")
	ts := newServer(t)
	// 3 drugs: the first group of 64 samples is 192 answers (2 units), the
	// second brings 300 (3 units). With 3 units the request (1) and the
	// first group pass, the second group does not.
	body, ct := multipartBody(t, vcfFile("100.vcf.bgz", data), formPart{name: "drug", data: []byte("clopidogrel")},
		formPart{name: "drug", data: []byte("warfarin")}, formPart{name: "drug", data: []byte("codeine")})
	req := httptest.NewRequest(http.MethodPost, "/pgx/vcf", body)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", pgxapi.NDJSONContentType)
	rec := httptest.NewRecorder()
	withLimiter(t, ts.h, 3).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	var last struct {
		Kind            string `json:"kind"`
		Status          int    `json:"status"`
		Type            string `json:"type"`
		SamplesReleased int    `json:"samples_released"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if len(lines) != vcfcall.DefaultSamplesPerPass+1 || last.Kind != "error" || last.Status != http.StatusTooManyRequests ||
		last.Type != httpx.TypeRateLimited || last.SamplesReleased != vcfcall.DefaultSamplesPerPass {
		t.Errorf("%d lines, last %+v", len(lines), last)
	}
	entries := auditEntries(t, ts.store)
	if len(entries) != 2 || !strings.Contains(string(entries[1].Response), `"outcome":"aborted"`) ||
		!strings.Contains(string(entries[1].Response), `"samples_released":64`) {
		t.Errorf("%d entries; closing %s", len(entries), entries[len(entries)-1].Response)
	}
}

// gatedStore is an audit store (a test double) whose second append waits
// until gate is closed: the answer's first group is out, the second is
// held while the test begins the shutdown.
type gatedStore struct {
	*audittest.Memory
	gate <-chan struct{}
	n    atomic.Int32
}

func (g *gatedStore) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if g.n.Add(1) == 2 {
		<-g.gate
	}
	return g.Memory.Append(ctx, e)
}

// TestVCFStreamCutByShutdownEndsWithErrorLine: an NDJSON VCF answer still
// running when the server begins to stop (Config.Stopping) ends with a
// parseable error line of type shutting-down naming how many samples were
// released, never mid-line and never with a summary.
func TestVCFStreamCutByShutdownEndsWithErrorLine(t *testing.T) {
	stopping := make(chan struct{})
	store := &gatedStore{Memory: audittest.NewMemory(), gate: stopping}
	srv := pgxapi.New(service.New(kb, ck, store, fixedClock), store, zap.NewNop(), pgxapi.Config{Stopping: stopping})
	r := httpx.NewRouter()
	srv.Register(r)
	hs := httptest.NewServer(httpx.Wrap(r, zap.NewNop()))
	defer hs.Close()

	// 300 samples: five groups of up to 64.
	var vcf strings.Builder
	vcf.WriteString("##fileformat=VCFv4.2\n##contig=<ID=chr10,length=133797422>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT")
	for i := range 300 {
		fmt.Fprintf(&vcf, "\tS%d", i)
	}
	vcf.WriteString("\nchr10\t94781859\trs4244285\tG\tA\t.\tPASS\t.\tGT" + strings.Repeat("\t0/1", 300) + "\n")
	body, ct := multipartBody(t, vcfFile("300.vcf", []byte(vcf.String())))
	req, err := http.NewRequest(http.MethodPost, hs.URL+"/pgx/vcf", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", pgxapi.NDJSONContentType)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	all, err := io.ReadAll(io.TeeReader(resp.Body, writerFunc(func(p []byte) {
		select {
		case <-stopping:
		default:
			if bytes.Contains(p, []byte("\n")) {
				close(stopping) // the first line is out: shutdown begins
			}
		}
	})))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[len(all)-1] != '\n' {
		t.Fatalf("the stream does not end with a whole line: %q", all[max(0, len(all)-200):])
	}
	lines := strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
	released, detail := wantShutdownLine(t, lines[len(lines)-1], "samples_released")
	if released != len(lines)-1 || released >= 300 || !strings.Contains(detail, "resubmit") {
		t.Errorf("samples_released = %d with %d sample lines before it; detail %q", released, len(lines)-1, detail)
	}
}

// wantShutdownLine checks that line is an NDJSON error line of type
// shutting-down (503) and returns its count named countKey and its detail.
func wantShutdownLine(t *testing.T, line, countKey string) (released int, detail string) {
	t.Helper()
	var last map[string]any
	if err := json.Unmarshal([]byte(line), &last); err != nil {
		t.Fatalf("last line %q: %v", line, err)
	}
	if last["kind"] != "error" || last["type"] != httpx.TypeShuttingDown || last["status"] != float64(http.StatusServiceUnavailable) {
		t.Errorf("last line = %s, want an error line of type %s", line, httpx.TypeShuttingDown)
	}
	n, _ := last[countKey].(float64)
	d, _ := last["detail"].(string)
	return int(n), d
}

type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
