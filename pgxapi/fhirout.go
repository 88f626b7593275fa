package pgxapi

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// FHIR output (docs/fhir-output.md): /pgx/check and /pgx/vcf answer with
// Genomics Reporting IG Bundles when the client asks for
// application/fhir+json (Accept, or the /pgx/vcf part "format" = fhir).
// The Bundles render the audited answer: the bytes whose digest the audit
// entry holds are decoded, never evaluated again.

// wantsFHIR reports whether accept asks for application/fhir+json (with a
// q above 0).
func wantsFHIR(accept string) bool { return acceptsMedia(accept, fhir.MediaTypeFHIRJSON) }

// acceptsMedia reports whether accept names the media type mediaType with
// a q above 0.
func acceptsMedia(accept, mediaType string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || mt != mediaType {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f <= 0 {
				return false
			}
		}
		return true
	}
	return false
}

// writeFHIR writes a FHIR JSON body.
func writeFHIR(w http.ResponseWriter, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", fhir.MediaTypeFHIRJSON)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
	return nil
}

// checkFHIR is the Bundle of one audited /pgx/check answer.
func (s *Server) checkFHIR(w http.ResponseWriter, wire []byte, auditID, requestID string) error {
	rep, err := fhir.CheckReport(wire)
	if err != nil {
		return err
	}
	b, err := fhir.BuildGenomicsBundle(rep, fhir.ReportMeta{AuditID: auditID, RequestID: requestID,
		KnowledgeVersion: s.kb.Version.Label, Issued: s.svc.Now(), Source: CheckEndpoint})
	if err != nil {
		return err
	}
	return writeFHIR(w, b)
}

// vcfSampleFHIR appends one audited sample's Bundle as an entry of the
// collection Bundle of a /pgx/vcf answer.
func (v *vcfAnswer) vcfSampleFHIR(dst []byte, smp *vcfcall.Sample, auditID string) ([]byte, error) {
	rep, err := fhir.SampleReportFromJSON(smp.Result)
	if err != nil {
		return dst, err
	}
	b, err := fhir.BuildGenomicsBundle(rep, fhir.ReportMeta{AuditID: auditID, RequestID: v.call.RequestID,
		KnowledgeVersion: v.s.kb.Version.Label, Issued: v.s.svc.Now(),
		Source: fmt.Sprintf("%s file %s (SHA-256 %s) sample %s", VCFEndpoint, v.file.Name, v.file.SHA256, smp.Name)})
	if err != nil {
		return dst, err
	}
	dst = append(dst, `{"resource":`...)
	dst = append(dst, b...)
	return append(dst, '}'), nil
}

// finishFHIR writes the collection Bundle of a /pgx/vcf answer: one entry
// per sample, in order; the closing audit entry's id is the Bundle's
// identifier.
func (v *vcfAnswer) finishFHIR(closing service.Audited[vcfcall.Stats]) error {
	closingID := closing.AuditID
	httpx.SetReceipt(v.w, closing.Receipt)
	head := `{"resourceType":"Bundle","type":"collection","identifier":{"type":{"text":"pgxsafety audit log entry"},"value":` +
		strconv.Quote(closingID) + `},"timestamp":"` + v.s.svc.Now().UTC().Format(time.RFC3339) + `","entry":[`
	const tail = "]}\n"
	h := v.w.Header()
	h.Set("Content-Type", fhir.MediaTypeFHIRJSON)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.FormatInt(int64(len(head))+v.spill.Len()+int64(len(tail)), 10))
	v.w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(v.w, head); err != nil {
		return nil // the client has gone
	}
	if _, err := v.spill.WriteTo(v.w); err != nil {
		logGone(v.ctx, err)
		return nil
	}
	_, _ = io.WriteString(v.w, tail)
	return nil
}

func logGone(ctx context.Context, err error) {
	httpx.Logger(ctx).Info("vcf: FHIR results not delivered", zap.Error(err))
}
