// Package httpx is the HTTP plumbing shared by the REST surfaces (pgxapi,
// cdshooks): handlers that return errors, one table mapping error kinds to
// RFC 9457 problem responses, JSON intake with limits, buffered JSON
// output, request ids, panic recovery, access logging, Prometheus metrics,
// OpenID Connect bearer authentication (with a local development mode),
// per-caller rate limits, CORS and security headers, and the 404/405
// handlers of a gorilla/mux router. Chain assembles them for a server.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/vcf"
	"github.com/pgxsafety/pgxsafety/engine/vcfcall"
)

// ProblemContentType is the media type of every error body (RFC 9457).
const ProblemContentType = "application/problem+json"

// Problem type URIs. They identify the kind of problem; clients should
// switch on them (or on status), never on title or detail.
const (
	TypeMalformed        = "urn:pgxsafety:problem:malformed-request"
	TypeInvalidParams    = "urn:pgxsafety:problem:invalid-params"
	TypeInvalidVCF       = "urn:pgxsafety:problem:invalid-vcf"
	TypeTooLarge         = "urn:pgxsafety:problem:payload-too-large"
	TypeUnsupportedMedia = "urn:pgxsafety:problem:unsupported-media-type"
	TypeNotFound         = "urn:pgxsafety:problem:not-found"
	TypeMethodNotAllowed = "urn:pgxsafety:problem:method-not-allowed"
	TypeAuditUnavailable = "urn:pgxsafety:problem:audit-unavailable"
	TypeTimeout          = "urn:pgxsafety:problem:timeout"
	TypeClientClosed     = "urn:pgxsafety:problem:client-closed-request"
	TypeInternal         = "urn:pgxsafety:problem:internal"
)

// StatusClientClosedRequest is the status recorded (in the access log and
// the request metrics) for a request whose client went away before the
// answer was ready; the client never sees it. 499 is the code common
// proxies use for this.
const StatusClientClosedRequest = 499

// Param names one invalid request parameter and why it is invalid.
type Param struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Error is an error with an HTTP meaning. Handlers return it (directly or
// wrapped) to choose the status and the problem body; Header is added to
// the response (for example Allow or Retry-After). Err, when set, is the
// cause: it is logged, never sent.
type Error struct {
	Status        int
	Title         string
	Detail        string
	Type          string
	InvalidParams []Param
	Header        http.Header
	Err           error
}

// Error describes the error for logs, cause included.
func (e *Error) Error() string {
	msg := strconv.Itoa(e.Status) + " " + e.Title
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Problem is the RFC 9457 body of every error response.
type Problem struct {
	Type          string  `json:"type"`
	Title         string  `json:"title"`
	Status        int     `json:"status"`
	Detail        string  `json:"detail,omitempty"`
	RequestID     string  `json:"request_id,omitempty"`
	InvalidParams []Param `json:"invalid_params,omitempty"`
}

// errorKinds is THE table from error kinds to responses: the first row
// whose match accepts the error builds the problem. Anything no row
// matches is a 500 whose body says nothing about the cause.
var errorKinds = []struct {
	match   func(error) bool
	problem func(error) *Error
}{
	{
		match: func(err error) bool { var he *Error; return errors.As(err, &he) },
		problem: func(err error) *Error {
			var he *Error
			errors.As(err, &he)
			return he
		},
	},
	{
		match: func(err error) bool { var ve *engine.ValidationError; return errors.As(err, &ve) },
		problem: func(err error) *Error {
			var ve *engine.ValidationError
			errors.As(err, &ve)
			params := make([]Param, len(ve.Fields))
			for i, f := range ve.Fields {
				params[i] = Param{Name: f.Field, Reason: f.Reason}
			}
			return &Error{
				Status:        http.StatusUnprocessableEntity,
				Type:          TypeInvalidParams,
				Detail:        "the request has invalid values; see invalid_params",
				InvalidParams: params,
				Err:           err,
			}
		},
	},
	{
		match: func(err error) bool { var pe *vcf.ParseError; return errors.As(err, &pe) },
		problem: func(err error) *Error {
			var pe *vcf.ParseError
			errors.As(err, &pe)
			return &Error{
				Status:        http.StatusUnprocessableEntity,
				Type:          TypeInvalidVCF,
				Detail:        "the VCF cannot be read: " + pe.Error(),
				InvalidParams: []Param{{Name: "file", Reason: pe.Error()}},
				Err:           err,
			}
		},
	},
	{
		match: func(err error) bool { var se *vcfcall.SampleError; return errors.As(err, &se) },
		problem: func(err error) *Error {
			var se *vcfcall.SampleError
			errors.As(err, &se)
			return &Error{
				Status:        http.StatusUnprocessableEntity,
				Type:          TypeInvalidParams,
				Detail:        "the request has invalid values; see invalid_params",
				InvalidParams: []Param{{Name: "sample", Reason: se.Error()}},
				Err:           err,
			}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, engine.ErrInvalid) },
		problem: func(err error) *Error {
			return &Error{Status: http.StatusUnprocessableEntity, Type: TypeInvalidParams, Detail: err.Error(), Err: err}
		},
	},
	{
		// The client went away (its request context was cancelled) before
		// the answer was ready: no advice was given, and nobody reads the
		// response. Checked before the audit row: an append abandoned
		// because the caller left is not an audit failure.
		match: func(err error) bool { return errors.Is(err, context.Canceled) },
		problem: func(err error) *Error {
			return &Error{Status: StatusClientClosedRequest, Type: TypeClientClosed,
				Detail: "the client closed the request before the answer was ready; no advice was given", Err: err}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, audit.ErrUnavailable) },
		problem: func(err error) *Error {
			return &Error{
				Status: http.StatusServiceUnavailable,
				Type:   TypeAuditUnavailable,
				Detail: "audit log unavailable; no advice was given",
				Err:    err,
			}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		problem: func(err error) *Error {
			return &Error{Status: http.StatusServiceUnavailable, Type: TypeTimeout, Detail: "the request timed out; no advice was given", Err: err}
		},
	},
}

// internalError is the response to every error the table does not know.
func internalError(err error) *Error {
	return &Error{
		Status: http.StatusInternalServerError,
		Type:   TypeInternal,
		Detail: "an internal error occurred; quote the request_id when reporting it",
		Err:    err,
	}
}

// ProblemFor maps err to the response it gets, through the error table.
func ProblemFor(err error) *Error {
	for _, k := range errorKinds {
		if k.match(err) {
			return k.problem(err)
		}
	}
	return internalError(err)
}

// WriteError writes err as a problem response and logs it: 5xx with the
// cause at error level, 4xx at debug level without detail (details may
// echo request content).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	he := ProblemFor(err)
	log := Logger(r.Context())
	switch {
	case he.Status == StatusClientClosedRequest:
		log.Info("request cancelled by the client", zap.Int("status", he.Status), zap.String("problem", he.Type))
	case he.Status >= 500:
		log.Error("request failed", zap.Int("status", he.Status), zap.String("problem", he.Type), zap.Error(err))
	default:
		log.Debug("request rejected", zap.Int("status", he.Status), zap.String("problem", he.Type))
	}
	WriteProblem(w, r, he)
}

// WriteProblem writes he as an application/problem+json response. An
// empty Title becomes the status text, an empty Type "about:blank".
func WriteProblem(w http.ResponseWriter, r *http.Request, he *Error) {
	status := he.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	p := Problem{
		Type:          he.Type,
		Title:         he.Title,
		Status:        status,
		Detail:        he.Detail,
		RequestID:     RequestID(r.Context()),
		InvalidParams: he.InvalidParams,
	}
	if p.Type == "" {
		p.Type = "about:blank"
	}
	if p.Title == "" {
		p.Title = http.StatusText(status)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		// A Problem holds only strings and integers; this cannot happen.
		panic(fmt.Sprintf("httpx: encode problem: %v", err))
	}
	h := w.Header()
	for k, vs := range he.Header {
		// Replace, not add: a middleware may have set the header already
		// (RateLimit-*, Retry-After).
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	h.Set("Content-Type", ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}
