package httpx

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/service"
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

// ReceiptHeader carries the signed receipt of the audit entry of an
// answer (audit.Receipt, base64): the log's promise that the entry is in
// it, which proves its omission if it is ever removed.
const ReceiptHeader = "Pgxsafety-Receipt"

// SetReceipt sets ReceiptHeader on w when receipt is not empty.
func SetReceipt(w http.ResponseWriter, receipt string) {
	if receipt != "" {
		w.Header().Set(ReceiptHeader, receipt)
	}
}

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
	switch l := ctx.Value(loggerKey).(type) {
	case *zap.Logger:
		return l
	case *requestLogger:
		return l.get()
	}
	return zap.L()
}

// requestLogger is the request logger AccessLog puts into the context:
// base tagged with the request id, built the first time a handler logs
// (zap's With copies the encoder and encodes the field, which most
// requests, logging nothing but their access line, would pay for
// nothing).
type requestLogger struct {
	base *zap.Logger
	id   string
	once sync.Once
	log  *zap.Logger
}

func (l *requestLogger) get() *zap.Logger {
	l.once.Do(func() { l.log = l.base.With(zap.String("request_id", l.id)) })
	return l.log
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

// NewRequestID returns "req_" followed by 32 hex digits: the 48-bit Unix
// millisecond time of t, then 80 bits from crypto/rand. Ids made one
// after another sort by time, so the audit log's request_id index grows
// at its right edge instead of rewriting a random page of a large index
// for every answer; the random part keeps them unique.
func NewRequestID(t time.Time) string {
	var b [16]byte
	ms := max(t.UnixMilli(), 0) & (1<<48 - 1)
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	// crypto/rand.Read never fails on supported platforms (it panics
	// instead), so the error is not checked.
	_, _ = rand.Read(b[6:])
	var out [4 + 32]byte
	copy(out[:], "req_")
	hex.Encode(out[4:], b[:])
	return string(out[:])
}

// WithRequestID gives every request an id: a sane incoming X-Request-ID is
// kept, anything else is replaced by a new one. The id is set on the
// response header and stored in the context (RequestID), together with the
// start time (StartTime).
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		start := StartTime(ctx)
		if start.IsZero() {
			start = time.Now()
			ctx = context.WithValue(ctx, startKey, start)
		}
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = NewRequestID(start)
		}
		w.Header().Set(RequestIDHeader, id)
		ctx = context.WithValue(ctx, requestIDKey, id)
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

// requestInfo collects, for the access log and the metrics, facts that
// inner layers learn about a request: the route template (set by the
// router), the caller (set by Authenticate) and the audit entries written
// (set by AuditIDs). One is created per request by AccessLog.
type requestInfo struct {
	mu          sync.Mutex
	route       string
	subjectHash string
	auditID     string // the first entry's id
	auditCount  int
}

type infoKey struct{}

// infoFrom returns the request's info; a throwaway one when the request
// did not pass through AccessLog, so callers never check for nil.
func infoFrom(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

func (i *requestInfo) setRoute(route string) {
	i.mu.Lock()
	i.route = route
	i.mu.Unlock()
}

func (i *requestInfo) setSubject(hash string) {
	i.mu.Lock()
	i.subjectHash = hash
	i.mu.Unlock()
}

func (i *requestInfo) addAuditID(id string) {
	i.mu.Lock()
	if i.auditCount == 0 {
		i.auditID = id
	}
	i.auditCount++
	i.mu.Unlock()
}

// SubjectHash is how the access log names a caller: the first 16 hex
// digits of SHA-256(issuer NUL subject). It lets an operator follow one
// caller's requests without writing the identity into the logs.
func SubjectHash(p audit.Principal) string {
	sum := sha256.Sum256([]byte(p.Issuer + "\x00" + p.Subject))
	return hex.EncodeToString(sum[:8])
}

// unmatchedRoute is the route label of requests no route matched.
const unmatchedRoute = "unmatched"

// tagRoute records the matched route's template; NewRouter installs it.
func tagRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := mux.CurrentRoute(r); route != nil {
			if tpl, err := route.GetPathTemplate(); err == nil {
				infoFrom(r.Context()).setRoute(tpl)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// auditTap records the ids of the entries its Appender writes into the
// request's info, for the access log.
type auditTap struct{ next audit.Appender }

// AuditIDs wraps a so that the id of every entry appended while serving a
// request appears in that request's access-log line ("audit_id", and
// "audit_entries" when there are several). It changes nothing else.
func AuditIDs(a audit.Appender) audit.Appender { return auditTap{next: a} }

// Append implements audit.Appender.
func (t auditTap) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	stored, err := t.next.Append(ctx, e)
	if err == nil {
		infoFrom(ctx).addAuditID(stored.ID)
	}
	return stored, err
}

// feedbackTap is auditTap for a feedback store, which appends the entry of
// a feedback post itself.
type feedbackTap struct{ next service.FeedbackStore }

// FeedbackAuditIDs wraps f as AuditIDs wraps an Appender: the id of each
// feedback post's entry appears in that request's access-log line.
func FeedbackAuditIDs(f service.FeedbackStore) service.FeedbackStore { return feedbackTap{next: f} }

// AppendFeedback implements service.FeedbackStore.
func (t feedbackTap) AppendFeedback(ctx context.Context, items []service.FeedbackItem, entry func(stored, duplicates int) (audit.Entry, error)) (audit.Entry, error) {
	stored, err := t.next.AppendFeedback(ctx, items, entry)
	if err == nil {
		infoFrom(ctx).addAuditID(stored.ID)
	}
	return stored, err
}

// AccessLog logs one line per request: method, route template, status,
// bytes, duration and request id, plus the caller's SubjectHash and the
// audit id when there are. It never logs the raw path, the query string,
// headers (Authorization), or bodies — paths and bodies may hold patient
// data. It also puts a request-scoped logger into the context (Logger).
func AccessLog(log *zap.Logger) func(http.Handler) http.Handler {
	return observe(log, nil)
}

// observe is AccessLog that also records the request in m.
func observe(log *zap.Logger, m *Metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := StartTime(r.Context())
			if start.IsZero() {
				start = time.Now()
			}
			id := RequestID(r.Context())
			info := &requestInfo{route: unmatchedRoute}
			reqLog := &requestLogger{base: log, id: id}
			ctx := context.WithValue(context.WithValue(r.Context(), loggerKey, reqLog), infoKey{}, info)
			rec := &statusRecorder{ResponseWriter: w}
			m.inflight(1)
			defer m.inflight(-1)
			next.ServeHTTP(rec, r.WithContext(ctx))
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			elapsed := time.Since(start)
			info.mu.Lock()
			route, subject, auditID, auditCount := info.route, info.subjectHash, info.auditID, info.auditCount
			info.mu.Unlock()
			m.observeRequest(route, r.Method, rec.status, elapsed)
			fields := make([]zap.Field, 0, 9)
			fields = append(fields,
				zap.String("method", r.Method),
				zap.String("route", route),
				zap.Int("status", rec.status),
				zap.Int64("bytes", rec.bytes),
				zap.Duration("duration", elapsed),
				zap.String("request_id", id),
			)
			if subject != "" {
				fields = append(fields, zap.String("subject_hash", subject))
			}
			if auditCount > 0 {
				fields = append(fields, zap.String("audit_id", auditID))
			}
			if auditCount > 1 {
				fields = append(fields, zap.Int("audit_entries", auditCount))
			}
			log.Info("http request", fields...)
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
// that 404 and 405 responses are logged and carry a request id. Servers
// use Chain, which adds authentication, rate limits, metrics, CORS and
// security headers.
func Wrap(h http.Handler, log *zap.Logger) http.Handler {
	return Chain(h, Options{Log: log})
}

// Options configures Chain. Zero fields switch their layer off.
type Options struct {
	// Log receives the access log (zap.NewNop when nil).
	Log *zap.Logger
	// Metrics records request metrics.
	Metrics *Metrics
	// Verifier authenticates the requests Protected selects. A server
	// must set it; only tests of a single surface leave it nil.
	Verifier Verifier
	// Protected names the requests that need a token: the surfaces'
	// protected and public routes (pgxapi.Protection). Required with a
	// Verifier.
	Protected Protection
	// Limiter rate-limits authenticated callers.
	Limiter *RateLimiter
	// CORS is the cross-origin policy (off when empty).
	CORS CORS
	// HSTS adds Strict-Transport-Security (set when the public URL is
	// https).
	HSTS bool
	// MaxBodyBytes, when positive, caps every request body as a last
	// line of defence; endpoints apply their own, smaller caps.
	MaxBodyBytes int64
}

// Chain wraps the router h in the service's middleware, outermost first:
// request id, security headers, access log and metrics, panic recovery,
// body cap, CORS, authentication (by path prefix, see Protection), rate
// limit. Authentication and rate limits sit outside the router so that
// every route under a protected prefix — including routes added later and
// paths no route matches — is covered. It panics when a Verifier is given
// without protected prefixes: that server would protect nothing.
func Chain(h http.Handler, o Options) http.Handler {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	router, _ := h.(*mux.Router)
	h = RateLimit(o.Limiter)(h)
	if o.Verifier != nil {
		if len(o.Protected.Prefixes) == 0 {
			panic("httpx: Chain has a Verifier but no protected prefixes")
		}
		h = Authenticate(o.Verifier, o.Protected, o.Metrics)(h)
	}
	h = o.CORS.Middleware(h)
	if o.MaxBodyBytes > 0 {
		h = limitBody(o.MaxBodyBytes)(h)
	}
	h = Recover(h)
	if router != nil {
		h = routeOf(router)(h)
	}
	h = observe(o.Log, o.Metrics)(h)
	h = SecurityHeaders(o.HSTS)(h)
	return WithRequestID(h)
}

// routeOf labels requests answered before the router ran (401, 429,
// preflights) with the template of the route they were sent to, so that
// their log lines and metrics name it.
func routeOf(router *mux.Router) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			info := infoFrom(r.Context())
			info.mu.Lock()
			unmatched := info.route == unmatchedRoute
			info.mu.Unlock()
			if !unmatched {
				return
			}
			var m mux.RouteMatch
			if router.Match(r, &m) && m.Route != nil && m.MatchErr == nil {
				if tpl, err := m.Route.GetPathTemplate(); err == nil {
					info.setRoute(tpl)
				}
			}
		})
	}
}

// limitBody caps every request body at max bytes.
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > max {
				WriteError(w, r, tooLarge(max))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(w, r.Body, max)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// NotFound answers every request with a 404 problem.
func NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, r, &Error{Kind: KindNotFound, Detail: "no resource at this path"})
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
			Kind:   KindMethodNotAllowed,
			Detail: fmt.Sprintf("this path accepts %s", allow),
			Header: http.Header{"Allow": {allow}},
		})
	})
}

// NewRouter returns a gorilla/mux router whose unknown routes answer 404
// problems and whose known paths answer 405 problems (with Allow) for
// other methods. Matched routes report their path template to the access
// log and the metrics.
func NewRouter() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = NotFound()
	r.MethodNotAllowedHandler = MethodNotAllowed(r)
	r.Use(tagRoute)
	return r
}
