package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// Service evaluates requests against the knowledge and audits every answer
// before it is returned.
type Service struct {
	kb    *Knowledge
	audit audit.Appender
	now   func() time.Time
}

// NewService returns a Service. now is the clock (time.Now in production).
func NewService(kb *Knowledge, a audit.Appender, now func() time.Time) *Service {
	return &Service{kb: kb, audit: a, now: now}
}

// Knowledge returns the knowledge the service evaluates against.
func (s *Service) Knowledge() *Knowledge { return s.kb }

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now() }

// Call describes the transport facts of one call that go into its audit
// entry.
type Call struct {
	Principal audit.Principal
	Endpoint  string
	RequestID string
}

// Check validates and evaluates req, then appends the audit entry. It
// returns the result and the stored audit entry; on an audit failure it
// returns an error wrapping audit.ErrUnavailable and no result.
func (s *Service) Check(ctx context.Context, call Call, req Request) (Result, audit.Entry, error) {
	res, err := Evaluate(s.kb, req)
	if err != nil {
		return Result{}, audit.Entry{}, err
	}
	e, err := s.Record(ctx, call, req, res)
	if err != nil {
		return Result{}, audit.Entry{}, err
	}
	return res, e, nil
}

// Record appends one audit entry for a request and the answer given to it.
// Callers that build answers outside Check (batches, hooks) use it too.
func (s *Service) Record(ctx context.Context, call Call, request, response any) (audit.Entry, error) {
	reqJSON, err := json.Marshal(request)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("encode request for audit: %w", err)
	}
	resJSON, err := json.Marshal(response)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("encode response for audit: %w", err)
	}
	e := audit.Entry{
		Time:             s.now().UTC(),
		Principal:        call.Principal,
		Endpoint:         call.Endpoint,
		RequestID:        call.RequestID,
		KnowledgeVersion: s.kb.Version.Label,
		RequestDigest:    digest(reqJSON),
		ResponseDigest:   digest(resJSON),
		Request:          reqJSON,
		Response:         resJSON,
	}
	stored, err := s.audit.Append(ctx, e)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("%w: %v", audit.ErrUnavailable, err)
	}
	return stored, nil
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
