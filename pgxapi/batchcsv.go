package pgxapi

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// POST /pgx/batch_csv: a diagnostic lab uploads a CSV (spec §2.6) as the
// multipart part "file"; every row is checked by the same engine as
// /pgx/check and answered with a row result (spec §2.7). See docs/batch.md.
//
// Audit. Every row's advice is in the audit log before it is released:
// the service layer (service.CSVBatch) writes one entry per chunk of rows
// and a closing entry, and hands this file each chunk with its audit id.
// The summary is released only after the closing entry is durable.

// Batch CSV defaults and fixed values.
const (
	// BatchCSVEndpoint names POST /pgx/batch_csv in audit entries.
	BatchCSVEndpoint = "POST /pgx/batch_csv"
	// DefaultBatchCSVMaxBytes is the default limit of the uploaded file.
	DefaultBatchCSVMaxBytes = 50 << 20
	// DefaultBatchCSVMaxRows is the default limit of data rows per file.
	DefaultBatchCSVMaxRows = 100_000
	// NDJSONContentType is the media type of the streaming answer.
	NDJSONContentType = "application/x-ndjson"
	// multipartSlack is what the request body may hold beyond the file:
	// multipart framing and small extra parts.
	multipartSlack = 1 << 20
	// batchIODeadline is how long a batch may go without progress: the
	// connection's read and write deadlines are moved this far ahead after
	// every chunk, so a large file is not cut off by the server's
	// per-request timeouts while it is being processed.
	batchIODeadline = 60 * time.Second
	// spillMemory is how much of a JSON (non-streaming) answer is kept in
	// memory before it goes to a temporary file.
	spillMemory = 4 << 20
	// RowsPerRateUnit: a batch is charged one rate-limit unit (beyond the
	// request's own) per started RowsPerRateUnit rows or drugs.
	RowsPerRateUnit = 100
	// ndjsonWriteBatch is the size at which buffered NDJSON lines are
	// written out within a chunk.
	ndjsonWriteBatch = 256 << 10
)

func (c Config) batchCSVMaxBytes() int64 {
	if c.BatchCSVMaxBytes > 0 {
		return c.BatchCSVMaxBytes
	}
	return DefaultBatchCSVMaxBytes
}

func (c Config) batchCSVMaxRows() int {
	if c.BatchCSVMaxRows > 0 {
		return c.BatchCSVMaxRows
	}
	return DefaultBatchCSVMaxRows
}

// errFileTooLarge is returned by the upload reader past the size limit.
var errFileTooLarge = errors.New("the file exceeds the size limit")

// uploadError is a failure reading the request body (a broken or
// malformed upload), as opposed to a problem of the CSV.
type uploadError struct{ err error }

func (e *uploadError) Error() string { return "read upload: " + e.err.Error() }
func (e *uploadError) Unwrap() error { return e.err }

// uploadReader counts, hashes and limits the bytes of the file part.
type uploadReader struct {
	r   io.Reader
	max int64
	n   int64
	h   hash.Hash
}

// Read implements io.Reader.
func (u *uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	u.n += int64(n)
	u.h.Write(p[:n])
	if u.n > u.max {
		return n, errFileTooLarge
	}
	if err != nil && !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return n, errFileTooLarge
		}
		return n, &uploadError{err}
	}
	return n, err
}

// wantsNDJSON reports whether the Accept header asks for NDJSON (with a
// non-zero quality).
func wantsNDJSON(accept string) bool { return acceptsMedia(accept, NDJSONContentType) }

// openFilePart checks the request is multipart/form-data within the size
// limit and returns the part named "file".
func openFilePart(w http.ResponseWriter, r *http.Request, maxBytes int64) (*multipart.Part, *multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, nil, &httpx.Error{Kind: httpx.KindUnsupportedMedia,
			Detail: `Content-Type must be multipart/form-data with the CSV in a part named "file"`,
			Header: http.Header{"Accept": {"multipart/form-data"}}}
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, nil, &httpx.Error{Kind: httpx.KindMalformed,
			Detail: "the multipart/form-data Content-Type has no boundary parameter"}
	}
	if r.ContentLength > maxBytes+multipartSlack {
		return nil, nil, fileTooLarge(maxBytes)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil, fileError("file", "is required: a multipart part named file holding the CSV")
	}
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, maxBytes+multipartSlack), boundary)
	for {
		part, err := mr.NextPart()
		switch {
		case errors.Is(err, io.EOF):
			return nil, nil, fileError("file", "is required: a multipart part named file holding the CSV")
		case err != nil:
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, nil, fileTooLarge(maxBytes)
			}
			return nil, nil, &httpx.Error{Kind: httpx.KindMalformed,
				Detail: "the multipart/form-data body is malformed", Err: err}
		}
		if part.FormName() == "file" {
			return part, mr, nil
		}
		// Other parts are skipped (NextPart discards their content).
	}
}

// noSecondFilePart reads the parts after the CSV (discarding them) and
// fails with 422 when another part is named "file".
func noSecondFilePart(mr *multipart.Reader, maxBytes int64) error {
	for {
		part, err := mr.NextPart()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return fileTooLarge(maxBytes)
			}
			return &httpx.Error{Kind: httpx.KindMalformed,
				Detail: "the multipart/form-data body is malformed after the file part", Err: err}
		}
		if part.FormName() == "file" {
			return fileError("file", "must be sent once: the request holds a second part named file; send one CSV per request")
		}
	}
}

func fileTooLarge(maxBytes int64) error {
	return &httpx.Error{Kind: httpx.KindTooLarge,
		Detail:        fmt.Sprintf("the file exceeds the limit of %d bytes (batch_csv_max_bytes in /pgx/version)", maxBytes),
		InvalidParams: []httpx.Param{{Name: "file", Reason: fmt.Sprintf("must be at most %d bytes", maxBytes)}}}
}

func rowsTooMany(maxRows int) error {
	return &httpx.Error{Kind: httpx.KindTooLarge,
		Detail:        fmt.Sprintf("the file has more than %d data rows, the limit (batch_csv_max_rows in /pgx/version); split it", maxRows),
		InvalidParams: []httpx.Param{{Name: "file", Reason: fmt.Sprintf("must have at most %d data rows", maxRows)}}}
}

// batchProblem maps a batch failure to its HTTP problem.
func batchProblem(err error, maxBytes int64) error {
	var (
		rle *labcsv.RowLimitError
		ue  *uploadError
	)
	switch {
	case errors.As(err, &rle):
		return rowsTooMany(rle.Limit)
	case errors.Is(err, errFileTooLarge):
		return fileTooLarge(maxBytes)
	case errors.As(err, &ue):
		return &httpx.Error{Kind: httpx.KindMalformed,
			Detail: "the upload could not be read to its end (malformed or interrupted multipart body)", Err: err}
	}
	return err
}

func (s *Server) batchCSV(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := httpx.StartTime(ctx)
	if start.IsZero() {
		start = time.Now()
	}
	rc := http.NewResponseController(w)
	// An upload of up to the size limit may take longer than the server's
	// whole-request read timeout; progress moves the deadline on.
	_ = rc.SetReadDeadline(time.Now().Add(batchIODeadline))

	maxBytes, maxRows := s.cfg.batchCSVMaxBytes(), s.cfg.batchCSVMaxRows()
	part, mr, err := openFilePart(w, r, maxBytes)
	if err != nil {
		return err
	}
	stream := wantsNDJSON(r.Header.Get("Accept"))
	if stream {
		// Lines are written while the upload is still being read.
		_ = rc.EnableFullDuplex()
	}
	b := &csvBatch{
		s:      s,
		r:      r,
		ctx:    ctx,
		w:      w,
		rc:     rc,
		stream: stream,
		call: service.Call{
			Principal: httpx.PrincipalOrAnonymous(ctx),
			Endpoint:  BatchCSVEndpoint,
			RequestID: httpx.RequestID(ctx),
		},
	}
	format := answerFormat(stream)
	b.batch = s.svc.NewCSVBatch(b.call, service.CSVFile{Name: part.FileName(), Format: format}, labcsv.Options{MaxRows: maxRows, Wire: WireResult})
	if !stream {
		b.spill = &spillBuffer{limit: spillMemory}
		defer b.spill.Close()
	}
	in := &uploadReader{r: part, max: maxBytes, h: sha256.New()}
	// Rows read before a problem (the row limit, a broken upload, a
	// refused rate-limit charge) are still released, in order; a release
	// failure (the audit log, the client gone) is the batch's failure.
	runCtx, stopRun := s.stopAtShutdown(ctx)
	defer stopRun()
	b.runCtx = runCtx
	stats, err := b.batch.Run(runCtx, in, b.admit, b.release)
	b.batch.SetFile(in.n, hex.EncodeToString(in.h.Sum(nil)))
	if err != nil {
		return b.fail(stats, batchProblem(err, maxBytes))
	}
	// One file per request: a second part named "file" would otherwise go
	// unread and its rows unreported.
	if err := noSecondFilePart(mr, maxBytes); err != nil {
		return b.fail(stats, err)
	}
	closing, err := b.batch.Complete(ctx, stats)
	if err != nil {
		return b.fail(stats, err)
	}
	return b.finish(closing, start)
}

// csvBatch is the state of one POST /pgx/batch_csv answer.
type csvBatch struct {
	s      *Server
	r      *http.Request
	ctx    context.Context
	runCtx context.Context // ctx, canceled with errShuttingDown at shutdown
	w      http.ResponseWriter
	rc     *http.ResponseController
	call   service.Call
	stream bool
	batch  *service.CSVBatch

	started bool // the response has started (NDJSON)
	emitted int  // rows handed over by the processor
	charged int  // rate-limit units charged beyond the request's own
	spill   *spillBuffer
	buf     []byte
	// released counts the rows sent (NDJSON) or buffered for sending
	// (JSON).
	released int
}

// admit charges one rate-limit unit per started 100 rows, before the rows
// are audited and released.
func (b *csvBatch) admit(rows int) error {
	if units := (b.emitted+rows+RowsPerRateUnit-1)/RowsPerRateUnit - b.charged; units > 0 {
		if err := httpx.RateLimitCost(b.r, units); err != nil {
			return err
		}
		b.charged += units
	}
	b.emitted += rows
	return nil
}

// release releases one audited chunk: NDJSON lines are written and
// flushed, JSON rows go to the spill buffer.
func (b *csvBatch) release(c *labcsv.Chunk, ref service.Ref) error {
	auditID := ref.ID
	if b.stream {
		if err := b.writeLines(c, ref); err != nil {
			return err
		}
	} else {
		for i := range c.Rows {
			if b.released > 0 {
				b.buf = append(b.buf[:0], ',')
			} else {
				b.buf = b.buf[:0]
			}
			b.buf = AppendRowJSON(b.buf, &c.Rows[i], auditID, "")
			if _, err := b.spill.Write(b.buf); err != nil {
				return fmt.Errorf("batch_csv: buffer results: %w", err)
			}
			b.released++
		}
	}
	now := time.Now()
	_ = b.rc.SetReadDeadline(now.Add(batchIODeadline))
	_ = b.rc.SetWriteDeadline(now.Add(batchIODeadline))
	return nil
}

// clientGone wraps a failed write of a response that had started.
type clientGone struct{ err error }

func (e *clientGone) Error() string { return "write response: " + e.err.Error() }
func (e *clientGone) Unwrap() error { return e.err }

func (b *csvBatch) startStream() { startNDJSON(b.w, &b.started) }

func (b *csvBatch) writeLines(c *labcsv.Chunk, ref service.Ref) error {
	b.startStream()
	b.buf = b.buf[:0]
	if ref.Receipt != "" {
		b.buf = appendReceiptLine(b.buf, ref)
	}
	for i := range c.Rows {
		b.buf = AppendRowJSON(b.buf, &c.Rows[i], ref.ID, "row")
		b.buf = append(b.buf, '\n')
		if len(b.buf) >= ndjsonWriteBatch || i == len(c.Rows)-1 {
			if _, err := b.w.Write(b.buf); err != nil {
				return &clientGone{err}
			}
			b.buf = b.buf[:0]
		}
	}
	b.released += len(c.Rows)
	if err := b.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return &clientGone{err}
	}
	return nil
}

// batchEnvelope is the envelope of the JSON answer and of the NDJSON
// summary line.
type batchEnvelope struct {
	Kind string `json:"kind,omitempty"`
	Envelope
	GroundingContract string `json:"grounding_contract"`
	KnowledgeVersion  string `json:"knowledge_version"`
	RowsTotal         int    `json:"rows_total"`
	RowsSucceeded     int    `json:"rows_succeeded"`
	RowsFailed        int    `json:"rows_failed"`
}

func (b *csvBatch) finish(closing service.Audited[labcsv.Stats], start time.Time) error {
	st := closing.Result
	env := batchEnvelope{
		Envelope:          b.s.envelope(b.call.RequestID, closing.Ref(), start),
		GroundingContract: engine.GroundingContract,
		KnowledgeVersion:  b.s.kb.Version.Label,
		RowsTotal:         st.Rows,
		RowsSucceeded:     st.Succeeded,
		RowsFailed:        st.Failed,
	}
	if b.stream {
		env.Kind = "summary"
	}
	return finishStreamed(b.ctx, b.w, b.rc, b.spill, b.stream, env, closing.Receipt, "results", "batch_csv")
}

// ndjsonError is the last line of an NDJSON answer that could not be
// completed: the problem that stopped it.
type ndjsonError struct {
	ndjsonProblem
	RowsReleased int `json:"rows_released"`
}

// fail ends a batch that could not be completed. When chunk entries were
// written, a closing entry records that the batch was aborted and how many
// rows had been released. Before the response has started the problem is
// returned (and written by httpx.Handle); once NDJSON lines have gone out,
// the problem becomes the last line and no summary follows.
func (b *csvBatch) fail(st labcsv.Stats, err error) error {
	if shutdownCut(b.runCtx, b.ctx) {
		err = shuttingDown(fmt.Sprintf("rows after row %d were not released and no summary follows: resubmit them", b.released))
	}
	var gone *clientGone
	if errors.As(err, &gone) || errors.Is(err, context.Canceled) {
		httpx.Logger(b.ctx).Info("batch_csv: client gone", zap.Int("rows_released", b.released), zap.Error(err))
		b.recordAbort(st, "the client went away")
		return nil
	}
	he := httpx.ProblemFor(err)
	b.recordAbort(st, he.Detail)
	if !b.started {
		return err
	}
	log := httpx.Logger(b.ctx)
	if he.Status() >= 500 {
		log.Error("batch_csv stopped after the response started", zap.Int("status", he.Status()), zap.Error(err))
	} else {
		log.Debug("batch_csv stopped after the response started", zap.Int("status", he.Status()))
	}
	detail := he.Detail
	if errors.Is(err, audit.ErrUnavailable) {
		detail = fmt.Sprintf("audit log unavailable; rows after row %d were not released and no summary follows", b.released)
	}
	writeLastLine(b.w, b.rc, ndjsonError{newNDJSONProblem(he, detail, b.call.RequestID), b.released})
	return nil
}

// recordAbort writes the closing entry of an aborted batch when chunk
// entries exist (so the log says their rows were not all released). It is
// best effort: the failure being reported may be the audit log itself.
func (b *csvBatch) recordAbort(st labcsv.Stats, reason string) {
	if err := b.batch.Abort(b.ctx, st, reason); err != nil {
		httpx.Logger(b.ctx).Warn("batch_csv: closing entry of an aborted batch not written", zap.Error(err))
	}
}

// spillBuffer holds the rows of a JSON answer: in memory up to limit
// bytes, then in a temporary file (already unlinked where the system
// allows), so a large batch does not hold every result in memory.
type spillBuffer struct {
	limit int
	mem   []byte
	f     *os.File
	w     *bufio.Writer
	size  int64
}

// Write appends p.
func (s *spillBuffer) Write(p []byte) (int, error) {
	s.size += int64(len(p))
	if s.f == nil && len(s.mem)+len(p) <= s.limit {
		s.mem = append(s.mem, p...)
		return len(p), nil
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "pgxsafety-batch-*.json")
		if err != nil {
			return 0, err
		}
		_ = os.Remove(f.Name()) // the open file stays readable
		s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
		if _, err := s.w.Write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil
	}
	return s.w.Write(p)
}

// Len is the number of bytes written.
func (s *spillBuffer) Len() int64 { return s.size }

// WriteTo copies everything written to w.
func (s *spillBuffer) WriteTo(w io.Writer) (int64, error) {
	if s.f == nil {
		n, err := w.Write(s.mem)
		return int64(n), err
	}
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.f)
}

// Close releases the temporary file.
func (s *spillBuffer) Close() {
	if s.f != nil {
		name := s.f.Name()
		_ = s.f.Close()
		_ = os.Remove(name)
		s.f = nil
	}
}
