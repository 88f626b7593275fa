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
// switch on them (or on status), never on title or detail. They are
// declared here only: every surface takes them from the table of kinds.
const (
	TypeMalformed             = "urn:pgxsafety:problem:malformed-request"
	TypeInvalidParams         = "urn:pgxsafety:problem:invalid-params"
	TypeInvalidVCF            = "urn:pgxsafety:problem:invalid-vcf"
	TypeTooLarge              = "urn:pgxsafety:problem:payload-too-large"
	TypeUnsupportedMedia      = "urn:pgxsafety:problem:unsupported-media-type"
	TypeNotFound              = "urn:pgxsafety:problem:not-found"
	TypeMethodNotAllowed      = "urn:pgxsafety:problem:method-not-allowed"
	TypeUnauthorized          = "urn:pgxsafety:problem:unauthorized"
	TypeForbidden             = "urn:pgxsafety:problem:forbidden"
	TypeRateLimited           = "urn:pgxsafety:problem:rate-limited"
	TypeClientClosed          = "urn:pgxsafety:problem:client-closed-request"
	TypeAuditUnavailable      = "urn:pgxsafety:problem:audit-unavailable"
	TypeTimeout               = "urn:pgxsafety:problem:timeout"
	TypeIdentityUnavailable   = "urn:pgxsafety:problem:identity-unavailable"
	TypeShuttingDown          = "urn:pgxsafety:problem:shutting-down"
	TypeClassifierUnavailable = "urn:pgxsafety:problem:classifier-unavailable"
	TypeNotReady              = "urn:pgxsafety:problem:not-ready"
	TypeBusy                  = "urn:pgxsafety:problem:busy"
	TypeUpstream              = "urn:pgxsafety:problem:upstream-failed"
	TypeCDSUnauthorized       = "urn:pgxsafety:problem:cds-unauthorized"
	TypeCDSPrecondition       = "urn:pgxsafety:problem:cds-prefetch-missing"
	TypeCDSUnknown            = "urn:pgxsafety:problem:cds-unknown-service"
	TypeReplayCheck           = "urn:pgxsafety:problem:cds-replay-check-unavailable"
	TypeInternal              = "urn:pgxsafety:problem:internal"
)

// Kind is what went wrong, in the terms of every surface (REST, CDS Hooks,
// SMART pages). The table kinds maps each kind to its HTTP status, problem
// type and title; no surface picks a status or a problem type itself.
type Kind uint8

// The kinds. The zero Kind is KindInternal.
const (
	KindInternal              Kind = iota // 500: anything not known
	KindMalformed                         // 400: the request cannot be read
	KindInvalidParams                     // 422: values that are invalid (invalid_params names them)
	KindInvalidVCF                        // 422: a VCF that cannot be read
	KindTooLarge                          // 413: a body over its limit
	KindUnsupportedMedia                  // 415: a Content-Type not accepted
	KindNotFound                          // 404: no such resource
	KindMethodNotAllowed                  // 405: the path takes other methods
	KindUnauthorized                      // 401: no valid credentials (bearer token, SMART session)
	KindForbidden                         // 403: the caller may not (an EHR not registered, access refused)
	KindRateLimited                       // 429: the caller's budget is spent
	KindClientClosed                      // 499: the client went away; nobody reads the answer
	KindAuditUnavailable                  // 503: the audit log cannot be written; no advice
	KindTimeout                           // 503: the request ran out of time
	KindIdentityUnavailable               // 503: the identity provider's keys are unavailable
	KindShuttingDown                      // 503: the server is shutting down
	KindClassifierUnavailable             // 503: the classifier knowledge is not loaded
	KindNotReady                          // 503: GET /readyz: a dependency is not ready
	KindBusy                              // 503: too much in progress (SMART launches, sessions)
	KindUpstream                          // 502: the EHR's server failed or answered wrongly
	KindCDSUnauthorized                   // 401: the CDS client's JWT is missing or invalid
	KindCDSPrecondition                   // 412: prefetch the CDS service needs is missing
	KindCDSUnknown                        // 404: no CDS service has the id
	KindReplayCheck                       // 503: the CDS token replay check is unavailable
	kindCount
)

// kindInfo is one row of the table of kinds.
type kindInfo struct {
	status int
	typ    string
	title  string
}

// kinds is THE table from kinds to responses. Titles are the status texts.
var kinds = [kindCount]kindInfo{
	KindInternal:              {http.StatusInternalServerError, TypeInternal, http.StatusText(http.StatusInternalServerError)},
	KindMalformed:             {http.StatusBadRequest, TypeMalformed, http.StatusText(http.StatusBadRequest)},
	KindInvalidParams:         {http.StatusUnprocessableEntity, TypeInvalidParams, http.StatusText(http.StatusUnprocessableEntity)},
	KindInvalidVCF:            {http.StatusUnprocessableEntity, TypeInvalidVCF, http.StatusText(http.StatusUnprocessableEntity)},
	KindTooLarge:              {http.StatusRequestEntityTooLarge, TypeTooLarge, http.StatusText(http.StatusRequestEntityTooLarge)},
	KindUnsupportedMedia:      {http.StatusUnsupportedMediaType, TypeUnsupportedMedia, http.StatusText(http.StatusUnsupportedMediaType)},
	KindNotFound:              {http.StatusNotFound, TypeNotFound, http.StatusText(http.StatusNotFound)},
	KindMethodNotAllowed:      {http.StatusMethodNotAllowed, TypeMethodNotAllowed, http.StatusText(http.StatusMethodNotAllowed)},
	KindUnauthorized:          {http.StatusUnauthorized, TypeUnauthorized, http.StatusText(http.StatusUnauthorized)},
	KindForbidden:             {http.StatusForbidden, TypeForbidden, http.StatusText(http.StatusForbidden)},
	KindRateLimited:           {http.StatusTooManyRequests, TypeRateLimited, http.StatusText(http.StatusTooManyRequests)},
	KindClientClosed:          {StatusClientClosedRequest, TypeClientClosed, http.StatusText(StatusClientClosedRequest)},
	KindAuditUnavailable:      {http.StatusServiceUnavailable, TypeAuditUnavailable, http.StatusText(http.StatusServiceUnavailable)},
	KindTimeout:               {http.StatusServiceUnavailable, TypeTimeout, http.StatusText(http.StatusServiceUnavailable)},
	KindIdentityUnavailable:   {http.StatusServiceUnavailable, TypeIdentityUnavailable, http.StatusText(http.StatusServiceUnavailable)},
	KindShuttingDown:          {http.StatusServiceUnavailable, TypeShuttingDown, http.StatusText(http.StatusServiceUnavailable)},
	KindClassifierUnavailable: {http.StatusServiceUnavailable, TypeClassifierUnavailable, http.StatusText(http.StatusServiceUnavailable)},
	KindNotReady:              {http.StatusServiceUnavailable, TypeNotReady, http.StatusText(http.StatusServiceUnavailable)},
	KindBusy:                  {http.StatusServiceUnavailable, TypeBusy, http.StatusText(http.StatusServiceUnavailable)},
	KindUpstream:              {http.StatusBadGateway, TypeUpstream, http.StatusText(http.StatusBadGateway)},
	KindCDSUnauthorized:       {http.StatusUnauthorized, TypeCDSUnauthorized, http.StatusText(http.StatusUnauthorized)},
	KindCDSPrecondition:       {http.StatusPreconditionFailed, TypeCDSPrecondition, http.StatusText(http.StatusPreconditionFailed)},
	KindCDSUnknown:            {http.StatusNotFound, TypeCDSUnknown, http.StatusText(http.StatusNotFound)},
	KindReplayCheck:           {http.StatusServiceUnavailable, TypeReplayCheck, http.StatusText(http.StatusServiceUnavailable)},
}

// info is k's row; a Kind outside the table is internal.
func (k Kind) info() kindInfo {
	if k >= kindCount {
		return kinds[KindInternal]
	}
	return kinds[k]
}

// Status is the HTTP status of k.
func (k Kind) Status() int { return k.info().status }

// Type is the problem type URI of k.
func (k Kind) Type() string { return k.info().typ }

// Title is the problem title of k.
func (k Kind) Title() string { return k.info().title }

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
// wrapped): its Kind chooses the status, the problem type and the title
// (the table kinds); Detail and InvalidParams complete the problem body;
// Header is added to the response (for example Allow or Retry-After). Err,
// when set, is the cause: it is logged, never sent.
type Error struct {
	Kind          Kind
	Detail        string
	InvalidParams []Param
	Header        http.Header
	Err           error
}

// Status is the HTTP status of the error's kind.
func (e *Error) Status() int { return e.Kind.Status() }

// Error describes the error for logs, cause included.
func (e *Error) Error() string {
	msg := strconv.Itoa(e.Kind.Status()) + " " + e.Kind.Title()
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

// errorKinds maps the errors of the layers below (engine, audit, VCF
// reading, the context) to kinds: the first row whose match accepts the
// error builds the problem. Anything no row matches is a 500 whose body
// says nothing about the cause.
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
				Kind:          KindInvalidParams,
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
				Kind:          KindInvalidVCF,
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
				Kind:          KindInvalidParams,
				Detail:        "the request has invalid values; see invalid_params",
				InvalidParams: []Param{{Name: "sample", Reason: se.Error()}},
				Err:           err,
			}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, engine.ErrInvalid) },
		problem: func(err error) *Error {
			return &Error{Kind: KindInvalidParams, Detail: err.Error(), Err: err}
		},
	},
	{
		// The client went away (its request context was cancelled) before
		// the answer was ready: no advice was given, and nobody reads the
		// response. Checked before the audit row: an append abandoned
		// because the caller left is not an audit failure.
		match: func(err error) bool { return errors.Is(err, context.Canceled) },
		problem: func(err error) *Error {
			return &Error{Kind: KindClientClosed,
				Detail: "the client closed the request before the answer was ready; no advice was given", Err: err}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, audit.ErrUnavailable) },
		problem: func(err error) *Error {
			return &Error{
				Kind:   KindAuditUnavailable,
				Detail: "audit log unavailable; no advice was given",
				Err:    err,
			}
		},
	},
	{
		match: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		problem: func(err error) *Error {
			return &Error{Kind: KindTimeout, Detail: "the request timed out; no advice was given", Err: err}
		},
	},
}

// internalError is the response to every error the table does not know.
func internalError(err error) *Error {
	return &Error{
		Kind:   KindInternal,
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
	status, typ := he.Kind.Status(), he.Kind.Type()
	switch {
	case he.Kind == KindClientClosed:
		log.Info("request cancelled by the client", zap.Int("status", status), zap.String("problem", typ))
	case status >= 500:
		log.Error("request failed", zap.Int("status", status), zap.String("problem", typ), zap.Error(err))
	default:
		log.Debug("request rejected", zap.Int("status", status), zap.String("problem", typ))
	}
	WriteProblem(w, r, he)
}

// WriteProblem writes he as an application/problem+json response: status,
// type and title from its kind.
func WriteProblem(w http.ResponseWriter, r *http.Request, he *Error) {
	status := he.Kind.Status()
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	p := Problem{
		Type:          he.Kind.Type(),
		Title:         he.Kind.Title(),
		Status:        status,
		Detail:        he.Detail,
		RequestID:     RequestID(r.Context()),
		InvalidParams: he.InvalidParams,
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
