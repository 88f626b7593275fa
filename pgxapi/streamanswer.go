package pgxapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// startNDJSON starts a 200 NDJSON answer unless started says it has
// started, and records that it has.
func startNDJSON(w http.ResponseWriter, started *bool) {
	if *started {
		return
	}
	h := w.Header()
	h.Set("Content-Type", NDJSONContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	*started = true
}

// answerFormat names the answer's format in the audit log.
func answerFormat(stream bool) string {
	if stream {
		return "ndjson"
	}
	return "json"
}

// finishStreamed writes the end of a streamed answer (/pgx/vcf,
// /pgx/batch_csv). For NDJSON (stream) env is the summary line, whose kind
// the caller has set; otherwise env is the envelope of the JSON document,
// written with the buffered items of spill under the key items and a
// Content-Length and receipt (the closing entry's) as its
// Pgxsafety-Receipt header. A client gone while writing is logged under op, not
// returned: the answer has been audited and nothing is left to say.
func finishStreamed(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, spill *spillBuffer,
	stream bool, env any, receipt, items, op string) error {
	if stream {
		line, err := json.Marshal(env)
		if err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			httpx.Logger(ctx).Info(op+": client gone before the summary", zap.Error(err))
			return nil
		}
		_ = rc.Flush()
		return nil
	}
	head, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode envelope: %w", err)
	}
	head = append(head[:len(head)-1], `,"`+items+`":[`...)
	const tail = "]}\n"
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.FormatInt(int64(len(head))+spill.Len()+int64(len(tail)), 10))
	httpx.SetReceipt(w, receipt)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(head); err != nil {
		return nil // the client has gone
	}
	if _, err := spill.WriteTo(w); err != nil {
		httpx.Logger(ctx).Info(op+": results not delivered", zap.Error(err))
		return nil
	}
	_, _ = io.WriteString(w, tail)
	return nil
}

// receiptLine is the NDJSON line that precedes the lines of one audited
// chunk: its entry's id and signed receipt.
type receiptLine struct {
	Kind         string `json:"kind"`
	AuditLogID   string `json:"audit_log_id"`
	AuditReceipt string `json:"audit_receipt"`
}

// appendReceiptLine appends the receipt line of ref (newline-terminated).
func appendReceiptLine(dst []byte, ref service.Ref) []byte {
	b, err := json.Marshal(receiptLine{Kind: "receipt", AuditLogID: ref.ID, AuditReceipt: ref.Receipt})
	if err != nil { // a struct of strings always encodes
		return dst
	}
	return append(append(dst, b...), '\n')
}

// ndjsonProblem opens the last line of an NDJSON answer that could not be
// completed: the problem that stopped it, as in a problem+json body. The
// line types embed it first and add how much was released.
type ndjsonProblem struct {
	Kind      string `json:"kind"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
	// InvalidParams names the fields, as in a problem+json body.
	InvalidParams []httpx.Param `json:"invalid_params,omitempty"`
}

// newNDJSONProblem is the problem line of he with detail (type, title and
// status from its kind).
func newNDJSONProblem(he *httpx.Error, detail, requestID string) ndjsonProblem {
	return ndjsonProblem{Kind: "error", Type: he.Kind.Type(), Title: he.Kind.Title(), Status: he.Kind.Status(),
		Detail: detail, RequestID: requestID, InvalidParams: he.InvalidParams}
}

// writeLastLine writes line as the last NDJSON line, best effort: the
// answer is already failing.
func writeLastLine(w http.ResponseWriter, rc *http.ResponseController, line any) {
	b, err := json.Marshal(line)
	if err == nil {
		_, _ = w.Write(append(b, '\n'))
		_ = rc.Flush()
	}
}

// stopAtShutdown returns ctx canceled with errShuttingDown when the server
// begins to stop (Config.Stopping), so that a streamed answer ends with
// its error line before the shutdown grace cuts the connection (a line
// cut in the middle cannot be parsed). stop releases it.
func (s *Server) stopAtShutdown(ctx context.Context) (_ context.Context, stop func()) {
	runCtx, cancel := context.WithCancelCause(ctx)
	if stopping := s.cfg.Stopping; stopping != nil {
		go func() {
			select {
			case <-stopping:
				cancel(errShuttingDown)
			case <-runCtx.Done():
			}
		}()
	}
	return runCtx, func() { cancel(nil) }
}

// shutdownCut reports whether runCtx (from stopAtShutdown) ended because
// the server is stopping while the client is still there.
func shutdownCut(runCtx, ctx context.Context) bool {
	return runCtx != nil && errors.Is(context.Cause(runCtx), errShuttingDown) && ctx.Err() == nil
}

// shuttingDown is the problem of an answer cut by shutdown; what says
// what was not sent.
func shuttingDown(what string) error {
	// Not the context error: that would read as the client gone.
	return &httpx.Error{Kind: httpx.KindShuttingDown, Detail: "the server is shutting down; " + what, Err: errShuttingDown}
}
