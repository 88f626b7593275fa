// Package pgxapi is the REST surface of the drug-safety service: the /pgx/*
// endpoints of the interface specification (spec §4.1, §4.2), their wire
// types, and the health endpoints /healthz and /readyz. Errors are RFC 9457
// problems written by package httpx.
package pgxapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Versions and fixed service facts reported to clients.
const (
	// APIVersion is the semver of the /pgx response schema (spec §9).
	APIVersion = "1.1.0"
	// EngineVersion identifies the evaluation engine.
	EngineVersion = "pgxsafety-engine/0.1.0"
	// CheckBodyLimit is the largest accepted POST /pgx/check body.
	CheckBodyLimit = 64 << 10
	// CheckEndpoint names POST /pgx/check in audit entries.
	CheckEndpoint = "POST /pgx/check"
	// LatencyTargetP95Ms is the P95 server latency target (spec §8).
	LatencyTargetP95Ms = 200
	// AuditRetentionDays is how long audit entries are kept (spec §8).
	AuditRetentionDays = 365
	// DefaultRateLimitPerMinute is the per-user rate limit (spec §8).
	DefaultRateLimitPerMinute = 60
	// AuditPolicy describes the audit log to clients.
	AuditPolicy = "append-only, hash-chained, written before every answer; retention 365 days"
	// GroundingEnforcement says how the grounding contract is enforced.
	GroundingEnforcement = "every response is checked by tests that every gene, drug, allele, herb, disease and state is a knowledge row"
)

// pingTimeout bounds the audit-store ping of /pgx/status and /readyz.
const pingTimeout = time.Second

// AuditStore is what the REST surface needs to know about the audit log
// beyond the service: where it is and whether it answers.
type AuditStore interface {
	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
	// Backend names the backend ("sqlite", "postgres").
	Backend() string
	// Location is the SQLite file path, or "postgres".
	Location() string
}

// AuditHealth is implemented by stores that know more than whether they
// answer: whether the last commit failed, whether storage faulted, whether
// the disk is nearly full. /readyz and /pgx/status use it when present.
type AuditHealth interface {
	// Health is nil when the store can take appends.
	Health(ctx context.Context) error
	// FreeBytes is the free space beside the log, when known.
	FreeBytes() (uint64, bool)
}

// Config holds the settings of the REST surface.
type Config struct {
	// RateLimitPerMinute is the per-user limit reported by /pgx/version;
	// zero means DefaultRateLimitPerMinute.
	RateLimitPerMinute int
	// BatchCSVMaxBytes is the largest file POST /pgx/batch_csv accepts;
	// zero means DefaultBatchCSVMaxBytes.
	BatchCSVMaxBytes int64
	// BatchCSVMaxRows is the most data rows POST /pgx/batch_csv accepts;
	// zero means DefaultBatchCSVMaxRows.
	BatchCSVMaxRows int
	// VCFMaxBytes is the largest file POST /pgx/vcf accepts; zero means
	// DefaultVCFMaxBytes.
	VCFMaxBytes int64
	// VCFMinGQ and VCFMinDP are the per-position quality thresholds of
	// POST /pgx/vcf (vcfcall.Options.MinGQ, MinDP): zero means the
	// defaults (vcfcall.DefaultMinGQ, DefaultMinDP), a negative value no
	// threshold.
	VCFMinGQ, VCFMinDP int
	// Stopping, when set, is closed shortly before the server's shutdown
	// grace ends: a CSV batch still running stops releasing rows and, when
	// it streams NDJSON, ends with an error line (type shutting-down) the
	// client can detect, instead of being cut without one.
	Stopping <-chan struct{}
	// Integrity, when set, reports whether the audit log was found
	// inconsistent with its signed checkpoints or its witness (tampering):
	// nil while it is consistent. /readyz then fails and /pgx/status says
	// so (without the details, which the server log holds).
	Integrity func() error
}

// integrityBroken is what /readyz and /pgx/status say of a log found
// inconsistent with its checkpoints or witness.
const integrityBroken = "inconsistent with its signed checkpoints or witness (entries removed or rewritten): no checkpoint is signed; run \"pgxsafety audit verify\" and see the server log"

// integrityErr is the Integrity error, nil when none is configured.
func (s *Server) integrityErr() error {
	if s.cfg.Integrity == nil {
		return nil
	}
	return s.cfg.Integrity()
}

// errShuttingDown is the cause of a batch context canceled by shutdown.
var errShuttingDown = errors.New("the server is shutting down")

// Server serves the /pgx endpoints.
type Server struct {
	svc   *service.Service
	kb    *engine.Knowledge
	audit AuditStore
	log   *zap.Logger
	cfg   Config

	// The metadata answers depend only on the knowledge, which never
	// changes while the process runs: they are built once.
	version  versionResponse
	drugs    drugsResponse
	variants variantsResponse
	panel    indiaPanelResponse
}

// New returns a Server answering with svc (whose knowledge it describes)
// and reporting on store. log may be nil (no logging).
func New(svc *service.Service, store AuditStore, log *zap.Logger, cfg Config) *Server {
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.RateLimitPerMinute <= 0 {
		cfg.RateLimitPerMinute = DefaultRateLimitPerMinute
	}
	kb := svc.Knowledge()
	s := &Server{svc: svc, kb: kb, audit: store, log: log, cfg: cfg}
	s.version = buildVersion(kb, cfg)
	s.drugs = buildDrugs(kb)
	s.variants = buildVariants(kb)
	s.panel = buildIndiaPanel(kb)
	return s
}

// Protection is the authentication rule of the REST surface, handed to
// httpx.Chain by the server: every route under /pgx and /classifier_v2
// needs a bearer token, except GET (or HEAD) /pgx/version and /pgx/status.
var Protection = httpx.Protection{
	Prefixes: []string{"/pgx", "/classifier_v2"},
	Public:   []string{"/pgx/version", "/pgx/status"},
}

// Register adds the endpoints to r. Use httpx.NewRouter for r and wrap the
// router with httpx.Wrap.
func (s *Server) Register(r *mux.Router) {
	r.Handle("/pgx/check", httpx.Handle(s.check)).Methods(http.MethodPost)
	r.Handle("/pgx/version", httpx.Handle(s.versionInfo)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/pgx/status", httpx.Handle(s.status)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/pgx/drugs", httpx.Handle(s.drugList)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/pgx/variants", httpx.Handle(s.variantList)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/pgx/batch_csv", httpx.Handle(s.batchCSV)).Methods(http.MethodPost)
	r.Handle("/pgx/batch", httpx.Handle(s.batch)).Methods(http.MethodPost)
	r.Handle("/pgx/vcf", httpx.Handle(s.vcf)).Methods(http.MethodPost)
	r.Handle("/pgx/india_panel", httpx.Handle(s.indiaPanel)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/healthz", httpx.Handle(s.healthz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/readyz", httpx.Handle(s.readyz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/openapi.json", httpx.Handle(openAPI)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/docs", httpx.Handle(apiDocs)).Methods(http.MethodGet, http.MethodHead)
	s.registerClassifier(r) // /classifier_v2/* (classifier.go)
}

// CheckRequest is the POST /pgx/check body: the spec §2.1 fields plus the
// extensions that carry richer genotype and patient facts.
type CheckRequest struct {
	Drug string `json:"drug"`
	PatientFacts
}

// PatientFacts are the genotype and context fields shared by the check and
// the medication-list batch: one patient, any drug.
type PatientFacts struct {
	Variants   []string `json:"variants,omitempty"`
	State      string   `json:"state,omitempty"`
	Ethnicity  string   `json:"ethnicity,omitempty"`
	Indication string   `json:"indication,omitempty"`
	// IndicationCodes are coded indications, conditions and procedures
	// (ICD-10, ICD-10-CM, ICD-10-PCS, SNOMED CT), read before Indication to
	// choose the guideline population (docs/engine.md).
	IndicationCodes []CodingRequest `json:"indication_codes,omitempty"`
	// Zygosity maps an rsID of Variants to "het", "hom" or "hemi".
	Zygosity map[string]string `json:"zygosity,omitempty"`
	// Diplotypes maps a gene to a diplotype such as "*2/*17".
	Diplotypes map[string]string `json:"diplotypes,omitempty"`
	// HLA maps an HLA allele such as "HLA-B*15:02" to "positive" or
	// "negative".
	HLA map[string]string `json:"hla,omitempty"`
	// GenesTested lists the genes the lab tested: their positions not
	// reported are taken as reference.
	GenesTested []string        `json:"genes_tested,omitempty"`
	Patient     *PatientRequest `json:"patient,omitempty"`
	// Calls are position-level GRCh38 genotype calls, e.g.
	// {"chrom":"chr10","pos":94781859,"ref":"G","alt":"A","genotype":"0/1"}.
	Calls []engine.PositionCall `json:"calls,omitempty"`
	// OutsideCalls are dedicated callers' outputs as the tools wrote them
	// (PharmCAT outside-call TSV, Cyrius, Aldy, StellarPGx, OptiType,
	// HLA*LA, arcasHLA; docs/vcf.md "Outside calls").
	OutsideCalls []string `json:"outside_calls,omitempty"`
}

// CodingRequest is one coded clinical fact: a code system (FHIR system URL
// such as http://hl7.org/fhir/sid/icd-10, or a name such as "ICD-10-CM")
// and a code.
type CodingRequest struct {
	System  string `json:"system"`
	Code    string `json:"code"`
	Display string `json:"display,omitempty"`
}

// PatientRequest holds the patient facts of a check.
type PatientRequest struct {
	Sex          string   `json:"sex,omitempty"`
	AgeYears     *float64 `json:"age_years,omitempty"`
	MonthsOnDrug *float64 `json:"months_on_drug,omitempty"`
}

// EngineRequest converts the wire request to the engine's. Values are not
// validated here: the engine does that.
func (c CheckRequest) EngineRequest() engine.Request { return c.PatientFacts.EngineRequest(c.Drug) }

// EngineRequest is the engine request for drug with these facts.
func (c PatientFacts) EngineRequest(drug string) engine.Request {
	req := engine.Request{
		Drug:         drug,
		Variants:     c.Variants,
		Diplotypes:   c.Diplotypes,
		HLA:          c.HLA,
		GenesTested:  c.GenesTested,
		Calls:        c.Calls,
		State:        c.State,
		OutsideCalls: c.OutsideCalls,
		Ethnicity:    c.Ethnicity,
		Indication:   c.Indication,
	}
	if c.Zygosity != nil {
		req.Zygosity = make(map[string]engine.Zygosity, len(c.Zygosity))
		for rs, z := range c.Zygosity {
			req.Zygosity[rs] = engine.Zygosity(z)
		}
	}
	for _, ic := range c.IndicationCodes {
		req.IndicationCodes = append(req.IndicationCodes, engine.Coding{System: ic.System, Code: ic.Code, Display: ic.Display})
	}
	if c.Patient != nil {
		req.Patient = &engine.Patient{Sex: c.Patient.Sex, AgeYears: c.Patient.AgeYears, MonthsOnDrug: c.Patient.MonthsOnDrug}
	}
	return req
}

// CheckResponse is the POST /pgx/check answer: the envelope of spec §2.2
// followed by the engine's result, flattened.
type CheckResponse struct {
	Envelope
	Result
}

// Envelope is the head of every audited answer of the REST surface (spec
// §2.2): schema version, request and audit ids, time and latency. The
// check, batch, CSV batch, classify and demo answers all start with it.
type Envelope struct {
	APIVersion string `json:"api_version"`
	RequestID  string `json:"request_id"`
	AuditLogID string `json:"audit_log_id"`
	// AuditReceipt is the entry's signed receipt (base64 of a signed
	// note; docs/operations.md "Receipts"), also sent as the
	// Pgxsafety-Receipt header.
	AuditReceipt string `json:"audit_receipt,omitempty"`
	Timestamp    string `json:"timestamp"`
	LatencyMs    int64  `json:"latency_ms"`
}

// envelope fills the envelope of a /pgx answer whose audit entry is
// stored.
func (s *Server) envelope(requestID string, ref service.Ref, start time.Time) Envelope {
	return envelope(s.svc, APIVersion, requestID, ref, start)
}

// envelope fills the envelope of an audited answer of schema apiVersion;
// the timestamp is the service clock's.
func envelope(svc *service.Service, apiVersion, requestID string, ref service.Ref, start time.Time) Envelope {
	return Envelope{
		APIVersion:   apiVersion,
		RequestID:    requestID,
		AuditLogID:   ref.ID,
		AuditReceipt: ref.Receipt,
		Timestamp:    svc.Now().UTC().Format(TimestampFormat),
		LatencyMs:    time.Since(start).Milliseconds(),
	}
}

// TimestampFormat is the layout of CheckResponse.Timestamp: RFC 3339 in
// UTC with milliseconds.
const TimestampFormat = "2006-01-02T15:04:05.000Z07:00"

func (s *Server) check(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := httpx.StartTime(ctx)
	if start.IsZero() {
		start = time.Now()
	}
	var in CheckRequest
	if err := httpx.DecodeJSON(w, r, &in, CheckBodyLimit); err != nil {
		return err
	}
	if strings.TrimSpace(in.Drug) == "" {
		return &engine.ValidationError{Fields: []engine.FieldError{{Field: "drug", Reason: "is required"}}}
	}
	call := service.Call{
		Principal: httpx.PrincipalOrAnonymous(ctx),
		Endpoint:  CheckEndpoint,
		RequestID: httpx.RequestID(ctx),
	}
	// The answer is encoded once, by the service, behind room for the
	// envelope in a buffer of this handler: the bytes sent are the ones
	// its audit entry records, neither encoded again nor copied.
	bufp := answerBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= 1<<20 {
			answerBuffers.Put(bufp)
		}
	}()
	if cap(*bufp) < envelopeRoom {
		*bufp = make([]byte, 0, envelopeRoom+16<<10)
	}
	res, err := service.CheckEncodedAppend(ctx, s.svc, call, in.EngineRequest(), ResultOf, (*bufp)[:envelopeRoom])
	if err != nil {
		return err
	}
	*bufp = res.Result.JSON[:0]
	answer := res.Result.JSON[envelopeRoom:]
	httpx.SetReceipt(w, res.Receipt)
	if wantsFHIR(r.Header.Get("Accept")) {
		return s.checkFHIR(w, answer, res.AuditID, call.RequestID)
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeEnvelopedAt(w, s.envelope(call.RequestID, res.Ref(), start), res.Result.JSON, envelopeRoom)
}

// envelopeRoom is the room the check handler leaves in front of the
// answer for its envelope; a longer envelope is written by copying.
const envelopeRoom = 2048

// answerBuffers are the buffers the check handler's answers are encoded
// into (behind envelopeRoom) and written from.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// envelopeBuffers are the scratch buffers of writeEnveloped.
var envelopeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeEnveloped writes a 200 JSON answer made of env followed by the
// fields of the JSON object body (an answer encoded by the service): byte
// for byte what httpx.WriteJSON writes for a struct embedding Envelope and
// the answer (CheckResponse), without encoding the answer again.
func writeEnveloped(w http.ResponseWriter, env Envelope, body []byte) error {
	if !isObject(body) {
		return errNotObject
	}
	buf := envelopeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			envelopeBuffers.Put(buf)
		}
	}()
	buf.Grow(len(body) + 256)
	buf.Write(env.appendHead(buf.AvailableBuffer()))
	if len(body) > 2 {
		buf.WriteByte(',')
	}
	buf.Write(body[1:])
	buf.WriteByte('\n')
	writeOK(w, buf.Bytes())
	return nil
}

// writeEnvelopedAt is writeEnveloped for an answer that is buf[at:]: the
// envelope is written into the room in front of it when it fits, so that
// the answer is not copied. buf is changed.
func writeEnvelopedAt(w http.ResponseWriter, env Envelope, buf []byte, at int) error {
	body := buf[at:]
	if !isObject(body) {
		return errNotObject
	}
	var scratch [1 << 9]byte
	head := env.appendHead(scratch[:0])
	if len(body) > 2 {
		head = append(head, ',')
	}
	// head replaces the answer's opening brace.
	start := at + 1 - len(head)
	if start < 0 {
		return writeEnveloped(w, env, body)
	}
	copy(buf[start:], head)
	writeOK(w, append(buf[start:], '\n'))
	return nil
}

// errNotObject is the failure of writeEnveloped for an answer that is not
// a JSON object.
var errNotObject = errors.New("encode response: answer is not a JSON object")

// isObject reports whether body looks like one JSON object.
func isObject(body []byte) bool {
	return len(body) >= 2 && body[0] == '{' && body[len(body)-1] == '}'
}

// writeOK writes b as a 200 JSON answer, with the headers
// httpx.WriteJSON sets.
func writeOK(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// appendHead appends e as encoding/json encodes it with HTML escaping
// off, less its closing brace (TestEnvelopeHeadMatchesEncodingJSON,
// FuzzEnvelopeHeadMatchesEncodingJSON).
func (e *Envelope) appendHead(dst []byte) []byte {
	dst = append(dst, `{"api_version":`...)
	dst = appendJSONString(dst, e.APIVersion)
	dst = append(dst, `,"request_id":`...)
	dst = appendJSONString(dst, e.RequestID)
	dst = append(dst, `,"audit_log_id":`...)
	dst = appendJSONString(dst, e.AuditLogID)
	dst = appendOptionalString(dst, `,"audit_receipt":`, e.AuditReceipt, false)
	dst = append(dst, `,"timestamp":`...)
	dst = appendJSONString(dst, e.Timestamp)
	dst = append(dst, `,"latency_ms":`...)
	return strconv.AppendInt(dst, e.LatencyMs, 10)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyResponse is the GET /readyz answer.
type readyResponse struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	out := readyResponse{Status: "ready", Checks: map[string]string{"knowledge": "ok", "audit_log": "ok"}}
	status := http.StatusOK
	if s.cfg.Integrity != nil {
		out.Checks["audit_integrity"] = "ok"
		if s.integrityErr() != nil {
			out.Checks["audit_integrity"] = integrityBroken
			out.Status, status = "not ready", httpx.KindNotReady.Status()
		}
	}
	if !s.knowledgeLoaded() {
		out.Checks["knowledge"] = "not loaded"
		out.Status, status = "not ready", httpx.KindNotReady.Status()
	}
	if !s.auditReachable(r.Context()) {
		out.Checks["audit_log"] = "unreachable"
		out.Status, status = "not ready", httpx.KindNotReady.Status()
	} else if !s.auditAccepting(r.Context()) {
		out.Checks["audit_log"] = "not accepting entries (last commit failed, storage fault or disk nearly full; see the log)"
		out.Status, status = "not ready", httpx.KindNotReady.Status()
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, status, out)
}

func (s *Server) knowledgeLoaded() bool { return s.kb != nil && len(s.kb.Drugs) > 0 }

// auditAccepting reports the store's Health (true for stores that do not
// implement AuditHealth and answer).
func (s *Server) auditAccepting(ctx context.Context) bool {
	h, ok := s.audit.(AuditHealth)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := h.Health(ctx); err != nil {
		httpx.Logger(ctx).Warn("audit store not accepting entries", zap.Error(err))
		return false
	}
	return true
}

func (s *Server) auditReachable(ctx context.Context) bool {
	if s.audit == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := s.audit.Ping(ctx); err != nil {
		httpx.Logger(ctx).Warn("audit store unreachable", zap.Error(err))
		return false
	}
	return true
}
