package service

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
)

// Check validates and evaluates req, maps the result with wire to the
// form the adapter releases, and appends the audit entry of that form. On
// a validation problem it returns the *engine.ValidationError; on an audit
// failure an error wrapping audit.ErrUnavailable and no answer.
func Check[W any](ctx context.Context, s *Service, call Call, req engine.Request, wire func(engine.Result) W) (Audited[W], error) {
	var zero Audited[W]
	res, err := s.kb.Evaluate(req)
	if err != nil {
		return zero, err
	}
	w := wire(res)
	id, err := s.append(ctx, call, newCheckRecord(req, w))
	if err != nil {
		return zero, err
	}
	return audited(w, id), nil
}

// Encoded is an answer together with its JSON form.
type Encoded[W any] struct {
	// Value is the answer.
	Value W
	// JSON is Value as encoding/json encodes it with HTML escaping off,
	// without a trailing newline: the bytes the REST surface sends
	// (httpx.WriteJSON's form); from CheckEncodedAppend, the buffer
	// given followed by those bytes. The audit entry records exactly
	// these bytes, in json.Marshal's escaped form where they hold '<',
	// '>' or '&' (as Check records the answer).
	JSON []byte
}

// CheckEncoded is Check for an adapter that sends the answer as JSON: the
// wire form is encoded once, the audit entry records those bytes and the
// adapter sends the same bytes (Result.JSON) instead of encoding the
// answer again. The audit entry is the one Check writes, byte for byte.
func CheckEncoded[W any](ctx context.Context, s *Service, call Call, req engine.Request, wire func(engine.Result) W) (Audited[Encoded[W]], error) {
	return CheckEncodedAppend(ctx, s, call, req, wire, nil)
}

// CheckEncodedAppend is CheckEncoded for an adapter that owns the buffer
// it sends the answer from: the sent form is appended to dst, and
// Result.JSON is dst followed by it (the bytes of dst kept), so that the
// adapter can put its envelope in front of the answer without copying it
// and reuse the buffer once the answer is written. The audit entry, the
// one Check writes, never shares memory with dst.
func CheckEncodedAppend[W any](ctx context.Context, s *Service, call Call, req engine.Request, wire func(engine.Result) W, dst []byte) (Audited[Encoded[W]], error) {
	var zero Audited[Encoded[W]]
	res, err := s.kb.Evaluate(req)
	if err != nil {
		return zero, err
	}
	w := wire(res)
	// &w: a wire form whose AppendJSON has a pointer receiver encodes
	// itself; encoding/json encodes a pointer as what it points to.
	out, recorded, err := encodeAnswerAppend(dst, &w)
	if err != nil {
		return zero, fmt.Errorf("encode answer: %w", err)
	}
	id, err := s.append(ctx, call, newCheckRecord(req, recorded))
	if err != nil {
		return zero, err
	}
	return audited(Encoded[W]{Value: w, JSON: out}, id), nil
}

// MedicationList is the input of CheckMany: one patient, several drugs.
type MedicationList struct {
	// Drugs are the names as listed; at least one.
	Drugs []string
	// Patient holds the genotype and context facts; its Drug is ignored.
	Patient engine.Request
}

// CheckMany evaluates every drug of in as Check would, then hands the
// results (in the order listed) to answer, which builds the answer that
// is audited and returned. Every invalid drug name or fact is reported in
// one *engine.ValidationError whose fields name the list position
// ("drugs[2]").
func CheckMany[A any](ctx context.Context, s *Service, call Call, in MedicationList, answer func([]engine.Result) (A, error)) (Audited[A], error) {
	var zero Audited[A]
	if len(in.Drugs) == 0 {
		return zero, &engine.ValidationError{Fields: []engine.FieldError{{Field: "drugs", Reason: "must list at least one drug name"}}}
	}
	var (
		problems []engine.FieldError
		seen     = map[engine.FieldError]bool{}
		results  = make([]engine.Result, len(in.Drugs))
	)
	add := func(fe engine.FieldError) {
		if !seen[fe] {
			seen[fe] = true
			problems = append(problems, fe)
		}
	}
	for i, d := range in.Drugs {
		if strings.TrimSpace(d) == "" {
			add(engine.FieldError{Field: fmt.Sprintf("drugs[%d]", i), Reason: "is required"})
			continue
		}
		req := in.Patient
		req.Drug = d
		res, err := s.kb.Evaluate(req)
		var ve *engine.ValidationError
		switch {
		case errors.As(err, &ve):
			for _, fe := range ve.Fields {
				if fe.Field == "drug" {
					fe.Field = fmt.Sprintf("drugs[%d]", i)
				}
				add(fe)
			}
			continue
		case err != nil:
			return zero, err
		}
		results[i] = res
	}
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool { return problems[i].Field < problems[j].Field })
		return zero, &engine.ValidationError{Fields: problems}
	}
	a, err := answer(results)
	if err != nil {
		return zero, err
	}
	id, err := s.append(ctx, call, newCheckManyRecord(in, a))
	if err != nil {
		return zero, err
	}
	return audited(a, id), nil
}
