package pgxapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/outside"
	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// POST /pgx/vcf: a lab uploads a GRCh38 VCF (plain or bgzip) as the
// multipart part "file", with optional repeated "drug", "sample" and
// "outside_calls" parts.
// Every requested sample's pharmacogenes are called with the engine's allele
// matcher and answered per gene (see docs/vcf.md). The upload is written to
// a temporary file first (within the size limit), then read once per group
// of samples, so memory stays flat in the number of samples. Every sample's
// answer is audited (one entry per group of samples, then a closing entry)
// before it is released, as for /pgx/batch_csv.

// VCF endpoint defaults and fixed values.
const (
	// VCFEndpoint names POST /pgx/vcf in audit entries.
	VCFEndpoint = "POST /pgx/vcf"
	// DefaultVCFMaxBytes is the default limit of the uploaded file (as
	// sent: compressed or not).
	DefaultVCFMaxBytes = 200 << 20
	// VCFExpansionLimit bounds the decompressed size of a compressed
	// upload: at most this many times the upload limit.
	VCFExpansionLimit = 20
	// vcfMaxFieldBytes bounds a "drug" or "sample" part.
	vcfMaxFieldBytes = 1 << 10
	// vcfMaxDrugs and vcfMaxSamples bound the repeated parts.
	vcfMaxDrugs   = 50
	vcfMaxSamples = 10_000
	// vcfMaxOutsideParts and vcfMaxOutsideBytes bound the "outside_calls"
	// parts (caller outputs: a few kilobytes each).
	vcfMaxOutsideParts = 16
	vcfMaxOutsideBytes = 4 << 20
	// SamplesPerRateUnit: a VCF answer is charged one rate-limit unit
	// (beyond the request's own) per started SamplesPerRateUnit samples.
	SamplesPerRateUnit = 100
)

func (c Config) vcfMaxBytes() int64 {
	if c.VCFMaxBytes > 0 {
		return c.VCFMaxBytes
	}
	return DefaultVCFMaxBytes
}

// vcfForm is what the multipart body holds.
type vcfForm struct {
	fileName string
	path     string // the spooled upload
	bytes    int64
	sha256   string
	drugs    []string
	samples  []string
	// outside are the calls of the outside_calls parts; outsideFiles
	// describe the parts.
	outside      []outside.Call
	outsideFiles []service.OutsideCallFile
	format       string // the "format" part: "" or "fhir"
}

func vcfTooLarge(maxBytes int64) error {
	return &httpx.Error{Kind: httpx.KindTooLarge,
		Detail:        fmt.Sprintf("the file exceeds the limit of %d bytes (vcf_max_bytes in /pgx/version)", maxBytes),
		InvalidParams: []httpx.Param{{Name: "file", Reason: fmt.Sprintf("must be at most %d bytes", maxBytes)}}}
}

// readVCFForm reads the multipart body: the file goes to a temporary file
// (removed by the caller through form.path), the small parts are kept.
// tick is called as the upload progresses (to move the read deadline on).
func readVCFForm(w http.ResponseWriter, r *http.Request, maxBytes int64, tick func()) (form *vcfForm, err error) {
	mt, params, perr := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if perr != nil || mt != "multipart/form-data" {
		return nil, &httpx.Error{Kind: httpx.KindUnsupportedMedia,
			Detail: `Content-Type must be multipart/form-data with the VCF in a part named "file"`,
			Header: http.Header{"Accept": {"multipart/form-data"}}}
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, &httpx.Error{Kind: httpx.KindMalformed,
			Detail: "the multipart/form-data Content-Type has no boundary parameter"}
	}
	if r.ContentLength > maxBytes+multipartSlack {
		return nil, vcfTooLarge(maxBytes)
	}
	form = &vcfForm{}
	defer func() {
		if err != nil && form.path != "" {
			_ = os.Remove(form.path)
			form.path = ""
		}
	}()
	if r.Body == nil || r.Body == http.NoBody {
		return nil, fileError("file", "is required: a multipart part named file holding the VCF")
	}
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, maxBytes+multipartSlack), boundary)
	var problems []engine.FieldError
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return form, vcfTooLarge(maxBytes)
			}
			return form, &httpx.Error{Kind: httpx.KindMalformed,
				Detail: "the multipart/form-data body is malformed", Err: err}
		}
		switch name := part.FormName(); name {
		case "file":
			if form.path != "" {
				return form, fileError("file", "must be sent once: the request holds a second part named file; send one VCF per request")
			}
			if err := form.spool(part, maxBytes, tick); err != nil {
				return form, err
			}
		case "outside_calls":
			if len(form.outsideFiles) >= vcfMaxOutsideParts {
				problems = append(problems, engine.FieldError{Field: "outside_calls", Reason: fmt.Sprintf("at most %d parts", vcfMaxOutsideParts)})
				continue
			}
			if problem, err := form.readOutside(part); err != nil {
				return form, err
			} else if problem != nil {
				problems = append(problems, *problem)
			}
		case "drug", "sample":
			list, limit := &form.drugs, vcfMaxDrugs
			if name == "sample" {
				list, limit = &form.samples, vcfMaxSamples
			}
			if len(*list) > limit {
				continue // already over the limit (reported below): the rest is not read
			}
			v, err := readField(part)
			if err != nil {
				return form, err
			}
			field := fmt.Sprintf("%s[%d]", name, len(*list))
			switch {
			case v == "":
				problems = append(problems, engine.FieldError{Field: field, Reason: "is empty"})
			case len(v) > vcfMaxFieldBytes || !utf8.ValidString(v):
				problems = append(problems, engine.FieldError{Field: field, Reason: fmt.Sprintf("must be UTF-8 text of at most %d bytes", vcfMaxFieldBytes)})
			}
			*list = append(*list, v)
		case "format":
			v, err := readField(part)
			if err != nil {
				return form, err
			}
			if v != "json" && v != "fhir" {
				problems = append(problems, engine.FieldError{Field: "format", Reason: "must be json or fhir"})
			}
			form.format = v
		default:
			problems = append(problems, engine.FieldError{Field: safeFieldName(name),
				Reason: "is not a field of this endpoint (the fields are file, drug, sample, format and outside_calls)"})
		}
	}
	if form.path == "" {
		problems = append(problems, engine.FieldError{Field: "file", Reason: "is required: a multipart part named file holding the VCF"})
	}
	if len(form.drugs) > vcfMaxDrugs {
		problems = append(problems, engine.FieldError{Field: "drug", Reason: fmt.Sprintf("at most %d drugs per request", vcfMaxDrugs)})
	}
	if len(form.samples) > vcfMaxSamples {
		problems = append(problems, engine.FieldError{Field: "sample", Reason: fmt.Sprintf("at most %d samples named per request", vcfMaxSamples)})
	}
	if len(problems) > 0 {
		return form, &engine.ValidationError{Fields: problems}
	}
	return form, nil
}

// spool writes the file part to a temporary file, counting, hashing and
// limiting it.
func (f *vcfForm) spool(part *multipart.Part, maxBytes int64, tick func()) error {
	f.fileName = part.FileName()
	tmp, err := os.CreateTemp("", "pgxsafety-vcf-*")
	if err != nil {
		return fmt.Errorf("vcf: spool the upload: %w", err)
	}
	f.path = tmp.Name()
	in := &uploadReader{r: &tickingReader{r: part, every: 1 << 20, tick: tick}, max: maxBytes, h: sha256.New()}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("vcf: spool the upload: %w", cerr)
	}
	f.bytes, f.sha256 = in.n, hex.EncodeToString(in.h.Sum(nil))
	var ue *uploadError
	switch {
	case errors.Is(err, errFileTooLarge):
		return vcfTooLarge(maxBytes)
	case errors.As(err, &ue):
		return &httpx.Error{Kind: httpx.KindMalformed,
			Detail: "the upload could not be read to its end (malformed or interrupted multipart body)", Err: err}
	case err != nil:
		return err
	}
	if f.bytes == 0 {
		return fileError("file", "is empty")
	}
	return nil
}

// readOutside reads one outside_calls part: a caller's output, as
// engine/outside reads it. An unreadable output is a problem naming the
// part and line; a body cut short is an error.
func (f *vcfForm) readOutside(part *multipart.Part) (*engine.FieldError, error) {
	field := fmt.Sprintf("outside_calls[%d]", len(f.outsideFiles))
	h := sha256.New()
	b, err := io.ReadAll(io.TeeReader(io.LimitReader(part, vcfMaxOutsideBytes+1), h))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &httpx.Error{Kind: httpx.KindTooLarge, Detail: "the request body is too large"}
		}
		return nil, &httpx.Error{Kind: httpx.KindMalformed, Detail: "the multipart/form-data body is malformed", Err: err}
	}
	name := part.FileName()
	f.outsideFiles = append(f.outsideFiles, service.OutsideCallFile{Name: name, Bytes: int64(len(b)), SHA256: hex.EncodeToString(h.Sum(nil))})
	if len(b) > vcfMaxOutsideBytes {
		return &engine.FieldError{Field: field, Reason: fmt.Sprintf("must be at most %d bytes", vcfMaxOutsideBytes)}, nil
	}
	label := field
	if name != "" {
		label = fmt.Sprintf("%s (%s)", field, safeFieldName(name))
	}
	file, err := outside.ReadNamed(bytes.NewReader(b), vcfMaxOutsideBytes, label)
	if err != nil {
		var pe *outside.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			return &engine.FieldError{Field: field, Reason: fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)}, nil
		}
		if errors.As(err, &pe) {
			return &engine.FieldError{Field: field, Reason: pe.Msg}, nil
		}
		return nil, err
	}
	last := &f.outsideFiles[len(f.outsideFiles)-1]
	last.Format, last.Calls = file.Format, len(file.Calls)
	f.outside = append(f.outside, file.Calls...)
	return nil, nil
}

// tickingReader calls tick after every `every` bytes read.
type tickingReader struct {
	r     io.Reader
	every int64
	n     int64
	tick  func()
}

func (t *tickingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.n += int64(n)
	if t.n >= t.every && t.tick != nil {
		t.n = 0
		t.tick()
	}
	return n, err
}

// readField reads a small text part (up to one byte past the limit, so an
// over-long value is recognised).
func readField(part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, vcfMaxFieldBytes+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", &httpx.Error{Kind: httpx.KindTooLarge, Detail: "the request body is too large"}
		}
		return "", &httpx.Error{Kind: httpx.KindMalformed,
			Detail: "the multipart/form-data body is malformed", Err: err}
	}
	return strings.TrimSpace(string(b)), nil
}

// safeFieldName bounds a client-chosen part name echoed in a problem.
func safeFieldName(name string) string {
	if name == "" {
		return "(unnamed part)"
	}
	if len(name) > 64 || !utf8.ValidString(name) {
		return strconv.Quote(name[:min(len(name), 64)]) + "…"
	}
	return name
}

func (s *Server) vcf(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := httpx.StartTime(ctx)
	if start.IsZero() {
		start = time.Now()
	}
	rc := http.NewResponseController(w)
	// An upload of up to the size limit, and the readings of a large file,
	// may take longer than the server's per-request timeouts: progress
	// moves the deadlines on.
	_ = rc.SetReadDeadline(time.Now().Add(batchIODeadline))
	maxBytes := s.cfg.vcfMaxBytes()
	form, err := readVCFForm(w, r, maxBytes, func() { _ = rc.SetReadDeadline(time.Now().Add(batchIODeadline)) })
	if form != nil && form.path != "" {
		defer os.Remove(form.path)
	}
	if err != nil {
		return err
	}
	asFHIR := form.format == "fhir" || (form.format == "" && wantsFHIR(r.Header.Get("Accept")))
	stream := !asFHIR && wantsNDJSON(r.Header.Get("Accept"))
	format := answerFormat(stream)
	if asFHIR {
		format = "fhir"
	}
	// The calls table (callstsv.go) and the lab report (vcfreport.go) are
	// asked for by Accept; FHIR (a format part or Accept) wins, then
	// NDJSON, then the calls table, then the report.
	tsv := !stream && !asFHIR && acceptsMedia(r.Header.Get("Accept"), TSVContentType)
	if tsv {
		format = "tsv"
		if len(form.drugs) > 0 {
			return &engine.ValidationError{Fields: []engine.FieldError{{Field: "drug",
				Reason: "the calls table (Accept: text/tab-separated-values) has no drug checks: ask for application/json or application/x-ndjson to check drugs"}}}
		}
	}
	v := &vcfAnswer{s: s, r: r, ctx: ctx, w: w, rc: rc, stream: stream, tsv: tsv, fhir: asFHIR,
		call:  service.Call{Principal: httpx.PrincipalOrAnonymous(ctx), Endpoint: VCFEndpoint, RequestID: httpx.RequestID(ctx)},
		drugs: form.drugs}
	if !stream && !tsv && !asFHIR && wantsHTML(r.Header.Get("Accept")) {
		format = "html"
		v.report = &report.Meta{Origin: VCFEndpoint, RequestID: v.call.RequestID, FileName: form.fileName,
			Drugs: form.drugs, KnowledgeVersion: s.kb.Version.Label, Generated: s.svc.Now()}
	}
	v.op = s.svc.NewVCFCall(v.call, service.VCFFile{Name: form.fileName, Format: format, Bytes: form.bytes,
		SHA256: form.sha256, Samples: form.samples, Drugs: form.drugs, OutsideCalls: form.outsideFiles})
	v.file = vcfFileInfo{Name: form.fileName, Bytes: form.bytes, SHA256: form.sha256}
	if !stream {
		v.spill = &spillBuffer{limit: spillMemory}
		defer v.spill.Close()
	}
	_ = rc.SetWriteDeadline(time.Now().Add(batchIODeadline))
	opts := vcfcall.Options{Samples: form.samples, MaxBytes: maxBytes * VCFExpansionLimit, Wire: WireResult,
		MinGQ: s.cfg.VCFMinGQ, MinDP: s.cfg.VCFMinDP, OutsideCalls: form.outside,
		Progress: func(vcfcall.Progress) { _ = rc.SetWriteDeadline(time.Now().Add(batchIODeadline)) }}
	path := form.path
	runCtx, stopRun := s.stopAtShutdown(ctx)
	defer stopRun()
	v.runCtx = runCtx
	st, err := v.op.Run(runCtx, func() (io.ReadCloser, error) { return os.Open(path) }, opts, v.admit, v.release)
	v.stats = st
	var oe *vcfcall.OutsideCallError
	if errors.As(err, &oe) {
		err = &engine.ValidationError{Fields: []engine.FieldError{{Field: "outside_calls", Reason: oe.Error()}}}
	}
	if err != nil {
		return v.fail(err)
	}
	closing, err := v.op.Complete(ctx, st)
	if err != nil {
		return v.fail(err)
	}
	return v.finish(closing, start)
}

// vcfAnswer is the state of one POST /pgx/vcf answer.
type vcfAnswer struct {
	s      *Server
	r      *http.Request
	ctx    context.Context
	runCtx context.Context // ctx, canceled with errShuttingDown at shutdown
	w      http.ResponseWriter
	rc     *http.ResponseController
	call   service.Call
	op     *service.VCFCall
	stream bool
	tsv    bool // the calls table, buffered like the JSON document
	fhir   bool // answer with a FHIR collection Bundle (fhirout.go)
	drugs  []string
	file   vcfFileInfo
	stats  vcfcall.Stats

	started  bool
	charged  int
	emitted  int
	released int
	spill    *spillBuffer
	buf      []byte
	// report is set when the answer is the lab report (Accept: text/html):
	// each released sample is rendered from its audited result into spill.
	report *report.Meta
}

// vcfFileInfo describes the uploaded file in the answer.
type vcfFileInfo struct {
	Name   string `json:"name,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// AppendVCFSampleJSON writes one sample's answer: its result with the
// index, the audit id (left out when empty, as in the offline CLI) and, for
// NDJSON, the line kind in front.
func AppendVCFSampleJSON(dst []byte, smp *vcfcall.Sample, auditID, kind string) []byte {
	dst = append(dst, '{')
	if kind != "" {
		dst = append(dst, `"kind":`...)
		dst = strconv.AppendQuote(dst, kind)
		dst = append(dst, ',')
	}
	dst = append(dst, `"index":`...)
	dst = strconv.AppendInt(dst, int64(smp.Index), 10)
	if auditID != "" {
		dst = append(dst, `,"audit_log_id":`...)
		dst = strconv.AppendQuote(dst, auditID)
	}
	dst = append(dst, ',')
	return append(dst, smp.Result[1:]...)
}

// admit charges the rate limit for a group of samples before it is
// audited and released: one unit per started SamplesPerRateUnit answers
// (one per sample and drug, at least one per sample).
func (v *vcfAnswer) admit(samples int) error {
	n := samples * max(1, len(v.drugs))
	if units := (v.emitted+n+SamplesPerRateUnit-1)/SamplesPerRateUnit - v.charged; units > 0 {
		if err := httpx.RateLimitCost(v.r, units); err != nil {
			return err
		}
		v.charged += units
	}
	v.emitted += n
	return nil
}

// release sends (NDJSON) or buffers (JSON) one audited group of samples.
func (v *vcfAnswer) release(c *vcfcall.Chunk, ref service.Ref) error {
	auditID := ref.ID
	if v.stream {
		v.startStream()
		if ref.Receipt != "" {
			v.buf = appendReceiptLine(v.buf[:0], ref)
			if _, err := v.w.Write(v.buf); err != nil {
				return &clientGone{err}
			}
		}
	}
	for i := range c.Samples {
		v.buf = v.buf[:0]
		if v.stream {
			v.buf = AppendVCFSampleJSON(v.buf, &c.Samples[i], auditID, "sample")
			v.buf = append(v.buf, '\n')
			if _, err := v.w.Write(v.buf); err != nil {
				return &clientGone{err}
			}
		} else if v.report != nil {
			s := report.Sample{Result: c.Samples[i].Result, Digest: c.Samples[i].ResultDigest, AuditID: auditID}
			if err := report.WriteSample(v.spill, *v.report, v.released, s); err != nil {
				return fmt.Errorf("vcf: buffer results: %w", err)
			}
		} else if v.tsv {
			v.buf = AppendCallsTSV(v.buf, &c.Samples[i], v.s.kb.Version.Label, auditID)
			if _, err := v.spill.Write(v.buf); err != nil {
				return fmt.Errorf("vcf: buffer results: %w", err)
			}
		} else {
			if v.released > 0 {
				v.buf = append(v.buf, ',')
			}
			if v.fhir {
				var err error
				if v.buf, err = v.vcfSampleFHIR(v.buf, &c.Samples[i], auditID); err != nil {
					return err
				}
			} else {
				v.buf = AppendVCFSampleJSON(v.buf, &c.Samples[i], auditID, "")
			}
			if _, err := v.spill.Write(v.buf); err != nil {
				return fmt.Errorf("vcf: buffer results: %w", err)
			}
		}
		v.released++
	}
	if v.stream {
		if err := v.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return &clientGone{err}
		}
	}
	now := time.Now()
	_ = v.rc.SetWriteDeadline(now.Add(batchIODeadline))
	return nil
}

func (v *vcfAnswer) startStream() { startNDJSON(v.w, &v.started) }

// vcfEnvelope is the envelope of the JSON answer and of the NDJSON summary
// line.
type vcfEnvelope struct {
	Kind              string      `json:"kind,omitempty"`
	APIVersion        string      `json:"api_version"`
	RequestID         string      `json:"request_id"`
	AuditLogID        string      `json:"audit_log_id"`
	AuditReceipt      string      `json:"audit_receipt,omitempty"`
	Timestamp         string      `json:"timestamp"`
	LatencyMs         int64       `json:"latency_ms"`
	GroundingContract string      `json:"grounding_contract"`
	KnowledgeVersion  string      `json:"knowledge_version"`
	File              vcfFileInfo `json:"file"`
	Drugs             []string    `json:"drugs"`
	SamplesInFile     int         `json:"samples_in_file"`
	SamplesAnswered   int         `json:"samples_answered"`
	Records           int         `json:"records"`
	RecordsUsed       int         `json:"records_used"`
	Warnings          []string    `json:"warnings"`
}

func (v *vcfAnswer) finish(closing service.Audited[vcfcall.Stats], start time.Time) error {
	st := closing.Result
	env := vcfEnvelope{
		APIVersion:        APIVersion,
		RequestID:         v.call.RequestID,
		AuditLogID:        closing.AuditID,
		AuditReceipt:      closing.Receipt,
		Timestamp:         v.s.svc.Now().UTC().Format(TimestampFormat),
		LatencyMs:         time.Since(start).Milliseconds(),
		GroundingContract: engine.GroundingContract,
		KnowledgeVersion:  v.s.kb.Version.Label,
		File:              v.file,
		Drugs:             nonNilStrings(v.drugs),
		SamplesInFile:     st.SamplesInFile,
		SamplesAnswered:   st.Samples,
		Records:           st.Records,
		RecordsUsed:       st.RecordsUsed,
		Warnings:          nonNilStrings(st.Warnings),
	}
	if v.fhir {
		return v.finishFHIR(closing)
	}
	if v.stream {
		v.startStream() // a file whose requested samples are none still gets its summary
		env.Kind = "summary"
	}
	switch {
	case v.report != nil:
		return v.finishReport(closing)
	case v.tsv:
		return v.finishTSV(closing)
	}
	return finishStreamed(v.ctx, v.w, v.rc, v.spill, v.stream, env, closing.Receipt, "samples", "vcf")
}

// finishTSV writes the calls table: the header line, then the buffered
// rows (each naming the group entry that audited it); X-Audit-Log-ID names
// the closing entry, as the JSON envelope's audit_log_id does.
func (v *vcfAnswer) finishTSV(closing service.Audited[vcfcall.Stats]) error {
	head := AppendCallsTSVHeader(nil)
	h := v.w.Header()
	httpx.SetReceipt(v.w, closing.Receipt)
	h.Set("Content-Type", TSVContentType+"; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Audit-Log-ID", closing.AuditID)
	h.Set("Content-Length", strconv.FormatInt(int64(len(head))+v.spill.Len(), 10))
	v.w.WriteHeader(http.StatusOK)
	if _, err := v.w.Write(head); err != nil {
		return nil // the client has gone
	}
	if _, err := v.spill.WriteTo(v.w); err != nil {
		httpx.Logger(v.ctx).Info("vcf: results not delivered", zap.Error(err))
	}
	return nil
}

// vcfNDJSONError is the last line of an NDJSON answer that could not be
// completed: the problem that stopped it.
type vcfNDJSONError struct {
	ndjsonProblem
	SamplesReleased int `json:"samples_released"`
}

// fail ends an answer that could not be completed: the closing entry says
// so when groups were audited; before the response has started the
// problem is returned (and written by httpx.Handle), after it the problem
// is the last NDJSON line and no summary follows.
func (v *vcfAnswer) fail(err error) error {
	if shutdownCut(v.runCtx, v.ctx) {
		err = shuttingDown(fmt.Sprintf("samples after the first %d were not released and no summary follows: resubmit them", v.released))
	}
	var gone *clientGone
	if errors.As(err, &gone) || errors.Is(err, context.Canceled) {
		httpx.Logger(v.ctx).Info("vcf: client gone", zap.Int("samples_released", v.released), zap.Error(err))
		v.abort("the client went away")
		return nil
	}
	he := httpx.ProblemFor(err)
	v.abort(he.Detail)
	if !v.started {
		return err
	}
	log := httpx.Logger(v.ctx)
	if he.Status() >= 500 {
		log.Error("vcf stopped after the response started", zap.Int("status", he.Status()), zap.Error(err))
	}
	detail := he.Detail
	if errors.Is(err, audit.ErrUnavailable) {
		detail = fmt.Sprintf("audit log unavailable; samples after the first %d were not released and no summary follows", v.released)
	}
	writeLastLine(v.w, v.rc, vcfNDJSONError{newNDJSONProblem(he, detail, v.call.RequestID), v.released})
	return nil
}

func (v *vcfAnswer) abort(reason string) {
	if err := v.op.Abort(v.ctx, v.stats, reason); err != nil {
		httpx.Logger(v.ctx).Warn("vcf: closing entry of an aborted answer not written", zap.Error(err))
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
