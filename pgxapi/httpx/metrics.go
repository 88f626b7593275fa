package httpx

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the service's Prometheus metrics, in a registry of their own
// (so tests can build as many as they like). All methods accept a nil
// receiver and then do nothing.
//
//	pgxsafety_http_request_duration_seconds{route,method,status}  histogram
//	pgxsafety_http_requests_in_flight                              gauge
//	pgxsafety_audit_commit_duration_seconds{result}                histogram
//	pgxsafety_audit_batch_entries                                  histogram
//	pgxsafety_audit_commit_failures_total                          counter
//	pgxsafety_rate_limit_rejections_total                          counter
//	pgxsafety_rate_limit_backend_errors_total                      counter
//	pgxsafety_auth_failures_total{reason}                          counter
//	pgxsafety_audit_purged_entries_total                           counter
//	pgxsafety_knowledge_info{version,digest}                       gauge (1)
//	pgxsafety_build_info{engine_version,api_version}               gauge (1)
//
// plus the Go runtime and process collectors. route is the mux route
// template ("unmatched" for 404s), never the raw path.
type Metrics struct {
	registry        *prometheus.Registry
	requestDuration *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	auditCommit     *prometheus.HistogramVec
	auditBatch      prometheus.Histogram
	auditFailures   prometheus.Counter
	auditPurged     prometheus.Counter
	rateRejections  prometheus.Counter
	rateBackendErrs prometheus.Counter
	authFailures    *prometheus.CounterVec
	knowledgeInfo   *prometheus.GaugeVec
	buildInfo       *prometheus.GaugeVec
}

// NewMetrics returns registered metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pgxsafety_http_request_duration_seconds",
			Help:    "Time from receiving a request to finishing its response, by route template, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .2, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pgxsafety_http_requests_in_flight",
			Help: "Requests being served.",
		}),
		auditCommit: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pgxsafety_audit_commit_duration_seconds",
			Help:    "Duration of one audit group-commit transaction (BEGIN to COMMIT), by result.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5},
		}, []string{"result"}),
		auditBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pgxsafety_audit_batch_entries",
			Help:    "Audit entries written per group-commit transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		auditFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgxsafety_audit_commit_failures_total",
			Help: "Audit transactions that failed; their callers answered 503.",
		}),
		auditPurged: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgxsafety_audit_purged_entries_total",
			Help: "Audit entries removed by the retention purge.",
		}),
		rateRejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgxsafety_rate_limit_rejections_total",
			Help: "Requests answered 429 because the caller's rate limit was exhausted.",
		}),
		rateBackendErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgxsafety_rate_limit_backend_errors_total",
			Help: "Rate-limit decisions that fell back to this replica's memory because Redis failed.",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgxsafety_auth_failures_total",
			Help: "Requests refused by authentication, by reason (invalid_token, keys_unavailable).",
		}, []string{"reason"}),
		knowledgeInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pgxsafety_knowledge_info",
			Help: "The knowledge snapshot being served (value 1).",
		}, []string{"version", "digest"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pgxsafety_build_info",
			Help: "Engine and API versions of this build (value 1).",
		}, []string{"engine_version", "api_version"}),
	}
	m.registry.MustRegister(
		m.requestDuration, m.inFlight, m.auditCommit, m.auditBatch, m.auditFailures, m.auditPurged,
		m.rateRejections, m.rateBackendErrs, m.authFailures, m.knowledgeInfo, m.buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the metrics in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry is the registry holding the metrics (for tests and extra
// collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// SetKnowledge records the knowledge snapshot being served.
func (m *Metrics) SetKnowledge(version, digest string) {
	if m == nil {
		return
	}
	m.knowledgeInfo.Reset()
	m.knowledgeInfo.WithLabelValues(version, digest).Set(1)
}

// SetBuild records the engine and API versions.
func (m *Metrics) SetBuild(engineVersion, apiVersion string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(engineVersion, apiVersion).Set(1)
}

// ObserveAuditCommit records one audit transaction.
func (m *Metrics) ObserveAuditCommit(entries int, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
		m.auditFailures.Inc()
	}
	m.auditCommit.WithLabelValues(result).Observe(d.Seconds())
	m.auditBatch.Observe(float64(entries))
}

// AddPurged counts entries removed by the retention purge.
func (m *Metrics) AddPurged(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.auditPurged.Add(float64(n))
}

func (m *Metrics) observeRequest(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.requestDuration.WithLabelValues(route, methodLabel(method), strconv.Itoa(status)).Observe(d.Seconds())
}

func (m *Metrics) rateLimited() {
	if m != nil {
		m.rateRejections.Inc()
	}
}

func (m *Metrics) rateBackendError() {
	if m != nil {
		m.rateBackendErrs.Inc()
	}
}

func (m *Metrics) authFailure(reason string) {
	if m != nil {
		m.authFailures.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) inflight(delta float64) {
	if m != nil {
		m.inFlight.Add(delta)
	}
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return method
	}
	return "OTHER"
}
