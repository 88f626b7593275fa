package pgxapi

import (
	"bytes"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/report"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// HTMLContentType is the media type of the lab report of POST /pgx/vcf.
const HTMLContentType = "text/html"

// wantsHTML reports whether Accept asks for the lab report: it names
// text/html with a non-zero q. (application/x-ndjson, when also named,
// wins: it is checked first.)
func wantsHTML(accept string) bool { return acceptsMedia(accept, HTMLContentType) }

// finishReport writes the lab report: its head, the samples rendered (from
// their audited results) as they were released, and the run record with
// the closing entry. The page may load nothing but its own inline style
// sheet (report.ContentSecurityPolicy).
func (v *vcfAnswer) finishReport(closing service.Audited[vcfcall.Stats]) error {
	st := closing.Result
	var head, tail bytes.Buffer
	if err := report.WriteHead(&head, *v.report); err != nil {
		return err
	}
	if err := report.WriteTail(&tail, *v.report, report.Closing{FileBytes: v.file.Bytes, FileSHA256: v.file.SHA256,
		SamplesInFile: st.SamplesInFile, SamplesAnswered: st.Samples, AuditID: closing.AuditID, Warnings: st.Warnings}); err != nil {
		return err
	}
	h := v.w.Header()
	h.Set("Content-Type", HTMLContentType+"; charset=utf-8")
	h.Set("Content-Security-Policy", report.ContentSecurityPolicy())
	h.Set("Cache-Control", "no-store")
	httpx.SetReceipt(v.w, closing.Receipt)
	h.Set("Content-Length", strconv.FormatInt(int64(head.Len())+v.spill.Len()+int64(tail.Len()), 10))
	v.w.WriteHeader(http.StatusOK)
	if _, err := v.w.Write(head.Bytes()); err != nil {
		return nil // the client has gone
	}
	if _, err := v.spill.WriteTo(v.w); err != nil {
		httpx.Logger(v.ctx).Info("vcf: report not delivered", zap.Error(err))
		return nil
	}
	_, _ = v.w.Write(tail.Bytes())
	return nil
}
