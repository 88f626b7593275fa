package service

import (
	"context"
	"fmt"

	"github.com/pgxsafety/pgxsafety/engine/classify"
)

// classifyRecord is the audit record of a classification.
type classifyRecord struct {
	request classify.Request
	result  classify.Result
}

func (r classifyRecord) payloads() (any, any) { return r.request, r.result }

// Classify classifies one variant and appends its audit entry.
func (s *Service) Classify(ctx context.Context, call Call, req classify.Request) (Audited[classify.Result], error) {
	if s.clsErr != nil {
		return Audited[classify.Result]{}, fmt.Errorf("classifier unavailable: %w", s.clsErr)
	}
	res, err := s.cls.Classify(req)
	if err != nil {
		return Audited[classify.Result]{}, err
	}
	id, err := s.append(ctx, call, classifyRecord{request: req, result: res})
	if err != nil {
		return Audited[classify.Result]{}, err
	}
	return Audited[classify.Result]{Result: res, AuditID: id}, nil
}

// demoRequest is the audited request of a demonstration case.
type demoRequest struct {
	CaseName string           `json:"case_name"`
	Request  classify.Request `json:"request"`
}

// demoResponse is the audited answer of a demonstration case.
type demoResponse struct {
	DemoCase classify.DemoCase `json:"demo_case"`
	classify.Result
}

// demoRecord is the audit record of a demonstration case.
type demoRecord struct {
	request  demoRequest
	response demoResponse
}

func (r demoRecord) payloads() (any, any) { return r.request, r.response }

// Demo classifies a curated demonstration case (found with
// Classifier().DemoCase) and appends its audit entry.
func (s *Service) Demo(ctx context.Context, call Call, d classify.DemoCase) (Audited[classify.Result], error) {
	if s.clsErr != nil {
		return Audited[classify.Result]{}, fmt.Errorf("classifier unavailable: %w", s.clsErr)
	}
	req := classify.DemoRequest(d)
	res, err := s.cls.Classify(req)
	if err != nil {
		return Audited[classify.Result]{}, fmt.Errorf("demo case %s: %w", d.ID, err) // curated cases always classify; a failure is internal
	}
	id, err := s.append(ctx, call, demoRecord{
		request:  demoRequest{CaseName: d.ID, Request: req},
		response: demoResponse{DemoCase: d, Result: res},
	})
	if err != nil {
		return Audited[classify.Result]{}, err
	}
	return Audited[classify.Result]{Result: res, AuditID: id}, nil
}
