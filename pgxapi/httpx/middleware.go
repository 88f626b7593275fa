package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"
)

// HandlerFunc is an HTTP handler that returns its error instead of writing
// it; Handle writes the error through the error table.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle adapts h to http.Handler. A returned error is written as a problem
// response (see ProblemFor) unless h already started the response, in
// which case it is only logged.
func Handle(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		err := h(tw, r)
		if err == nil {
			return
		}
		if tw.started {
			Logger(r.Context()).Error("handler failed after the response started", zap.Error(err))
			return
		}
		WriteError(tw, r, err)
	})
}

// trackingWriter records whether the response has started.
type trackingWriter struct {
	http.ResponseWriter
	started bool
}

// WriteHeader records that the response has started.
func (t *trackingWriter) WriteHeader(status int) {
	t.started = true
	t.ResponseWriter.WriteHeader(status)
}

// Write records that the response has started.
func (t *trackingWriter) Write(b []byte) (int, error) {
	t.started = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

type ctxKey int

const (
	requestIDKey ctxKey = iota
	startKey
	loggerKey
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-ID"

// maxRequestIDLen bounds an incoming request id.
const maxRequestIDLen = 128

// RequestID returns the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// StartTime returns when the server started handling the request ctx
// belongs to (set by WithRequestID), or the zero time.
func StartTime(ctx context.Context) time.Time {
	t, _ := ctx.Value(startKey).(time.Time)
	return t
}

// WithLogger returns ctx carrying log.
func WithLogger(ctx context.Context, log *zap.Logger) context.Context {
	return context.WithValue(ctx, loggerKey, log)
}

// Logger returns the request logger of ctx (tagged with the request id by
// AccessLog), or the global zap logger (a no-op unless replaced).
func Logger(ctx context.Context) *zap.Logger {
	if l, ok := ctx.Value(loggerKey).(*zap.Logger); ok {
		return l
	}
	return zap.L()
}

// validRequestID reports whether an incoming X-Request-ID is safe to
// reuse: 1 to 128 characters of [A-Za-z0-9._-].
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// NewRequestID returns "req_" followed by 32 random hex digits.
func NewRequestID() string {
	var b [16]byte
	// crypto/rand.Read never fails on supported platforms (it panics
	// instead), so the error is not checked.
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// WithRequestID gives every request an id: a sane incoming X-Request-ID is
// kept, anything else is replaced by a new one. The id is set on the
// response header and stored in the context (RequestID), together with the
// start time (StartTime).
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = NewRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		if StartTime(ctx).IsZero() {
			ctx = context.WithValue(ctx, startKey, time.Now())
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// statusRecorder records the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// WriteHeader records the first status written.
func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

// Write counts the bytes written (an implicit 200 when no status was).
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// AccessLog logs one line per request: method, path, status, bytes,
// duration and request id. It never logs headers (Authorization), the
// query string or bodies. It also puts a request-scoped logger into the
// context (Logger).
func AccessLog(log *zap.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := StartTime(r.Context())
			if start.IsZero() {
				start = time.Now()
			}
			id := RequestID(r.Context())
			reqLog := log.With(zap.String("request_id", id))
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r.WithContext(WithLogger(r.Context(), reqLog)))
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			log.Info("http request",
				zap.String("method", r.Method),
				zap.String("path", r.URL.Path),
				zap.Int("status", rec.status),
				zap.Int64("bytes", rec.bytes),
				zap.Duration("duration", time.Since(start)),
				zap.String("request_id", id),
			)
		})
	}
}

// Recover turns a panic in next into a logged 500 problem response (when
// the response has not started). http.ErrAbortHandler is re-raised.
func Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			Logger(r.Context()).Error("panic in handler", zap.String("panic", fmt.Sprint(v)), zap.StackSkip("stack", 2))
			if !tw.started {
				WriteProblem(tw, r, internalError(nil))
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// Wrap applies the standard middleware to h, outermost first: request id,
// access log, panic recovery. Wrap the whole router (not per route) so
// that 404 and 405 responses are logged and carry a request id.
func Wrap(h http.Handler, log *zap.Logger) http.Handler {
	return WithRequestID(AccessLog(log)(Recover(h)))
}

// NotFound answers every request with a 404 problem.
func NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, r, &Error{Status: http.StatusNotFound, Type: TypeNotFound, Detail: "no resource at this path"})
	})
}

// candidateMethods are the methods MethodNotAllowed tries when it computes
// the Allow header.
var candidateMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// MethodNotAllowed answers with a 405 problem whose Allow header lists the
// methods router accepts for the request's path.
func MethodNotAllowed(router *mux.Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range candidateMethods {
			probe := r.Clone(r.Context())
			probe.Method = m
			var match mux.RouteMatch
			if router.Match(probe, &match) && match.MatchErr == nil {
				allowed = append(allowed, m)
			}
		}
		slices.Sort(allowed)
		allow := strings.Join(allowed, ", ")
		WriteProblem(w, r, &Error{
			Status: http.StatusMethodNotAllowed,
			Type:   TypeMethodNotAllowed,
			Detail: fmt.Sprintf("this path accepts %s", allow),
			Header: http.Header{"Allow": {allow}},
		})
	})
}

// NewRouter returns a gorilla/mux router whose unknown routes answer 404
// problems and whose known paths answer 405 problems (with Allow) for
// other methods.
func NewRouter() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = NotFound()
	r.MethodNotAllowedHandler = MethodNotAllowed(r)
	return r
}
