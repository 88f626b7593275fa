// Package service is the application layer of pgxsafety: typed, audited
// operations — check, check-many, lab CSV batch, classify, demo, CDS hook
// evaluation and feedback. It is the only code that evaluates requests for
// the surfaces (pgxapi, cdshooks) and the only code that appends audit
// entries: every operation returns its answer together with the id of the
// audit entry that records it (Audited), written before the answer is
// returned, so an adapter has no unaudited answer to release.
//
// Each operation owns the type of its audit record, a tagged and
// versioned wire type (records.go); the one unexported function append
// turns a record into an entry. The package is pure like
// engine: the standard library and engine's own packages only.
package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/calling"
	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/drugnames"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
)

// Service evaluates requests against the knowledge and audits every answer
// before it is returned. It is safe for concurrent use.
type Service struct {
	kb       *evaluate.Engine
	log      audit.Appender
	receipts *audit.ReceiptSigner
	now      func() time.Time
	cls      *classify.Classifier
	clsErr   error
}

// New returns a Service answering from kb and auditing to a. now is the
// clock (time.Now in production). The classifier is built from ck (with
// kb); when ck is nil or unusable, Classifier reports why and the classify
// operations fail with that error. The knowledge package loads both
// (knowledge.Base).
func New(kb *evaluate.Engine, ck *classify.Knowledge, a audit.Appender, now func() time.Time, opts ...Option) *Service {
	s := &Service{kb: kb, log: a, now: now}
	for _, o := range opts {
		o(s)
	}
	s.cls, s.clsErr = classify.New(kb.Knowledge, ck)
	return s
}

// Option configures a Service.
type Option func(*Service)

// WithReceipts makes every audited answer carry the signed receipt of its
// entry (audit.Receipt), signed by rs once the entry is durable: one
// signature per commit group of the store (audit.ReceiptSigner.SignCommitted), a batch
// receipt, when the store names the group, else one per entry.
func WithReceipts(rs *audit.ReceiptSigner) Option { return func(s *Service) { s.receipts = rs } }

// Knowledge returns the knowledge the service evaluates against.
func (s *Service) Knowledge() *engine.Knowledge { return s.kb.Knowledge }

// Names returns the drug-name reader of the service's knowledge, for a
// surface that names drugs (cards, the review page).
func (s *Service) Names() *drugnames.Reader { return s.kb.Names() }

// Caller returns the allele caller of the service's knowledge, for the
// FHIR mapper that reads diplotypes.
func (s *Service) Caller() *calling.Caller { return s.kb.Caller() }

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now() }

// Classifier returns the variant classifier, for its metadata (substrate,
// demo cases, citations), or the reason it could not be built. Answers of
// the classifier go through Classify and Demo.
func (s *Service) Classifier() (*classify.Classifier, error) { return s.cls, s.clsErr }

// Call describes the transport facts of one call that go into its audit
// entry.
type Call struct {
	Principal audit.Principal
	// Endpoint names the call, for example "POST /pgx/check".
	Endpoint  string
	RequestID string
}

// Audited is an answer together with the id of the audit entry that
// records it and the entry's signed receipt. Only this package makes one.
type Audited[T any] struct {
	Result  T
	AuditID string
	// Receipt is the entry's signed receipt (audit.EncodeReceipt form),
	// "" when the service signs none (WithReceipts).
	Receipt string
}

// Ref returns the id and receipt of the answer's entry.
func (a Audited[T]) Ref() Ref { return Ref{ID: a.AuditID, Receipt: a.Receipt} }

// Ref names a stored audit entry: its id and its signed receipt ("" when
// the service signs none).
type Ref struct {
	ID      string
	Receipt string
}

// append appends the audit entry of one answer and returns its id and
// receipt. It is the only place that writes audit entries through the
// Appender. On failure it returns an error wrapping audit.ErrUnavailable:
// the answer must not be released.
func (s *Service) append(ctx context.Context, call Call, rec record) (Ref, error) {
	e, err := s.entry(call, rec)
	if err != nil {
		return Ref{}, err
	}
	// A store that commits entries in groups names the entry's group
	// here, so the group's receipts are signed once (a batch receipt).
	var slot *audit.GroupSlot
	if s.receipts != nil {
		slot = new(audit.GroupSlot)
		ctx = audit.WithGroupSlot(ctx, slot)
	}
	stored, err := s.log.Append(ctx, e)
	if err != nil {
		// %w twice: a caller that went away (context.Canceled) stays
		// recognisable, so it is reported as a cancellation rather than
		// as an audit failure.
		return Ref{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, err)
	}
	return s.refIn(stored, slot)
}

// ref signs the receipt of a durable entry.
func (s *Service) ref(stored audit.Entry) (Ref, error) { return s.refIn(stored, nil) }

// refIn signs the receipt of a durable entry whose Append filled slot
// (nil: none): the batch receipt of its commit group, else its own.
func (s *Service) refIn(stored audit.Entry, slot *audit.GroupSlot) (Ref, error) {
	if s.receipts == nil {
		return Ref{ID: stored.ID}, nil
	}
	rc, err := s.receipts.SignCommitted(stored, slot)
	if err != nil {
		return Ref{}, fmt.Errorf("%w: %w", audit.ErrUnavailable, err)
	}
	return Ref{ID: stored.ID, Receipt: rc}, nil
}

// audited is a result with its entry's id and receipt.
func audited[T any](v T, r Ref) Audited[T] {
	return Audited[T]{Result: v, AuditID: r.ID, Receipt: r.Receipt}
}

// entry builds the audit entry of one answer, ready to append.
func (s *Service) entry(call Call, rec record) (audit.Entry, error) {
	request, response := rec.payloads()
	reqJSON, err := marshalPayload(request)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("encode request for audit: %w", err)
	}
	resJSON, err := marshalPayload(response)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("encode response for audit: %w", err)
	}
	return audit.Entry{
		Time:             s.now().UTC(),
		Principal:        call.Principal,
		Endpoint:         call.Endpoint,
		RequestID:        call.RequestID,
		KnowledgeVersion: s.kb.Version.Label,
		RequestDigest:    digest(reqJSON),
		ResponseDigest:   digest(resJSON),
		Request:          reqJSON,
		Response:         resJSON,
	}, nil
}

// marshalled is a payload already in its json.Marshal form (see
// encodeAnswer): append records it as is instead of encoding it again.
type marshalled []byte

// marshalPayload returns the json.Marshal form of v, which is what an
// audit entry records.
func marshalPayload(v any) ([]byte, error) {
	if m, ok := v.(marshalled); ok {
		return m, nil
	}
	return json.Marshal(v)
}

// encodeBuffers are the scratch buffers of encodeAnswer.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// JSONAppender is an answer's wire form that encodes itself without
// reflection (pgxapi.Result): AppendJSON appends exactly the bytes
// encoding/json writes for the value — json.Marshal's with escapeHTML,
// an Encoder's with SetEscapeHTML(false) (less its newline) without — or
// fails where encoding/json fails. encodeAnswer asks for the unescaped
// form only and derives the other.
type JSONAppender interface {
	AppendJSON(dst []byte, escapeHTML bool) ([]byte, error)
}

// appendBuffers are the scratch buffers of encodeAnswer for a
// JSONAppender.
var appendBuffers = sync.Pool{New: func() any { return new([]byte) }}

// encodeAnswer encodes v once and returns it in the two forms that are
// needed: sent, the encoding/json form with HTML escaping off and no
// trailing newline (what the REST surface writes, httpx.WriteJSON), and
// audited, its json.Marshal form (HTML escaping on), which is what append
// records. The two differ only where sent holds '<', '>' or '&' (or a raw
// U+2028 or U+2029, which only raw JSON a value writes itself can hold);
// otherwise audited is sent itself. json.HTMLEscape of the unescaped form
// is byte for byte the escaped form (FuzzEncodedMatchesMarshal), and
// appendHTMLEscaped writes what json.HTMLEscape writes
// (FuzzAppendHTMLEscaped), so the escaped form is derived from sent
// instead of encoding the answer a second time. A JSONAppender encodes
// itself, in the same bytes; where it fails, encoding/json is asked, so
// the error is encoding/json's.
func encodeAnswer(v any) (sent []byte, audited marshalled, err error) {
	if a, ok := v.(JSONAppender); ok {
		if sent, audited, ok := appendAnswer(a); ok {
			return sent, audited, nil
		}
	}
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, err
	}
	sent = bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return sent, htmlEscaped(sent), nil
}

// appendAnswer is encodeAnswer for a JSONAppender; ok is false where
// AppendJSON failed.
func appendAnswer(a JSONAppender) (sent []byte, audited marshalled, ok bool) {
	scratch := appendBuffers.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 1<<20 {
			appendBuffers.Put(scratch)
		}
	}()
	b, err := a.AppendJSON((*scratch)[:0], false)
	*scratch = b
	if err != nil {
		return nil, nil, false
	}
	sent = bytes.Clone(b)
	return sent, htmlEscaped(sent), true
}

// encodeAnswerAppend is encodeAnswer that appends the sent form to dst
// and returns dst followed by it; audited is always memory of its own
// (an entry outlives dst, which its owner reuses).
func encodeAnswerAppend(dst []byte, v any) (out []byte, audited marshalled, err error) {
	if a, ok := v.(JSONAppender); ok {
		if b, err := a.AppendJSON(dst, false); err == nil {
			sent := b[len(dst):]
			if needsHTMLEscape(sent) {
				return b, appendHTMLEscaped(make([]byte, 0, len(sent)+64), sent), nil
			}
			return b, bytes.Clone(sent), nil
		}
	}
	sent, audited, err := encodeAnswer(v)
	if err != nil {
		return dst, nil, err
	}
	return append(dst, sent...), audited, nil
}

// htmlEscaped is sent as json.HTMLEscape writes it: sent itself when
// there is nothing to escape, a new slice otherwise.
func htmlEscaped(sent []byte) []byte {
	if !needsHTMLEscape(sent) {
		return sent
	}
	return appendHTMLEscaped(make([]byte, 0, len(sent)+64), sent)
}

// needsHTMLEscape reports whether json.HTMLEscape changes b: whether it
// holds '<', '>', '&', U+2028 or U+2029. bytes.IndexByte is vectorised;
// bytes.ContainsAny(b, "<>&") tests one byte at a time and cost about as
// much as encoding the answer.
func needsHTMLEscape(b []byte) bool {
	if bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 {
		return true
	}
	for i := indexByteFrom(b, 0xE2, 0); i >= 0; i = indexByteFrom(b, 0xE2, i+1) {
		if i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xA8 {
			return true
		}
	}
	return false
}

// appendHTMLEscaped appends src to dst as json.HTMLEscape writes it: '<',
// '>' and '&' become \u003c, \u003e and \u0026, U+2028 and U+2029 become
// \u2028 and \u2029, every other byte is copied. It finds those bytes with
// bytes.IndexByte (json.HTMLEscape tests each byte, about three times
// slower than encoding the answer again).
func appendHTMLEscaped(dst, src []byte) []byte {
	const hexDigits = "0123456789abcdef"
	specials := [...]byte{'<', '>', '&', 0xE2} // 0xE2 leads U+2028 and U+2029
	var next [len(specials)]int                // the next index of each special byte, or -1
	for k, c := range specials {
		next[k] = indexByteFrom(src, c, 0)
	}
	start := 0
	for {
		k, i := -1, len(src)
		for j, n := range next {
			if n >= 0 && n < i {
				k, i = j, n
			}
		}
		if k < 0 {
			return append(dst, src[start:]...)
		}
		switch c := specials[k]; {
		case c != 0xE2:
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			start = i + 3
		}
		next[k] = indexByteFrom(src, specials[k], i+1)
	}
}

// indexByteFrom is the index of the first c in b from index from on, or
// -1.
func indexByteFrom(b []byte, c byte, from int) int {
	i := bytes.IndexByte(b[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// digest is "sha256:" and the hex SHA-256 of b, in one allocation.
func digest(b []byte) string {
	const prefix = "sha256:"
	h := sha256.Sum256(b)
	var out [len(prefix) + 2*sha256.Size]byte
	copy(out[:], prefix)
	hex.Encode(out[len(prefix):], h[:])
	return string(out[:])
}
