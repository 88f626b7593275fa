package service

import (
	"context"
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// Classify classifies one variant, maps the result with wire to the form
// the adapter releases, and appends the audit entry of that form.
func Classify[W any](ctx context.Context, s *Service, call Call, req classify.Request, wire func(classify.Result) W) (Audited[W], error) {
	var zero Audited[W]
	if s.clsErr != nil {
		return zero, fmt.Errorf("classifier unavailable: %w", s.clsErr)
	}
	res, err := s.cls.Classify(req)
	if err != nil {
		return zero, err
	}
	w := wire(res)
	id, err := s.append(ctx, call, newClassifyRecord(req, w))
	if err != nil {
		return zero, err
	}
	return audited(w, id), nil
}

// Demo classifies a curated demonstration case (found with
// Classifier().DemoCase), maps the case and its result with wire to the
// form the adapter releases, and appends the audit entry of that form.
func Demo[W any](ctx context.Context, s *Service, call Call, d classify.DemoCase, wire func(classify.DemoCase, classify.Result) W) (Audited[W], error) {
	var zero Audited[W]
	if s.clsErr != nil {
		return zero, fmt.Errorf("classifier unavailable: %w", s.clsErr)
	}
	req := classify.DemoRequest(d)
	res, err := s.cls.Classify(req)
	if err != nil {
		return zero, fmt.Errorf("demo case %s: %w", d.ID, err) // curated cases always classify; a failure is internal
	}
	w := wire(d, res)
	id, err := s.append(ctx, call, newDemoRecord(d.ID, req, w))
	if err != nil {
		return zero, err
	}
	return audited(w, id), nil
}
