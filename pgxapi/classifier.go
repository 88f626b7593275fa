package pgxapi

// This file is the /classifier_v2 surface (interface spec §4.3): the
// deterministic variant-classification pipeline of engine/classify and the
// §2.8 metadata document. Classify and demo answers are audited like
// checks: the audit entry is written before the answer leaves (503 when it
// cannot be).

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// Classifier surface facts.
const (
	// ClassifierAPIVersion is the semver of the /classifier_v2 schema
	// (spec §9).
	ClassifierAPIVersion = "1.0.0"
	// ClassifierPathPrefix is the path prefix of the classifier endpoints.
	ClassifierPathPrefix = "/classifier_v2/"
	// ClassifyBodyLimit is the largest accepted classify body.
	ClassifyBodyLimit = 4 << 10
	// ClassifyEndpoint and DemoEndpoint name the audited endpoints.
	ClassifyEndpoint = "POST /classifier_v2/classify"
	DemoEndpoint     = "POST /classifier_v2/demo/{case_name}"
	// ClassifierStatus is the pipeline status of the metadata document:
	// the classifier is served only when its knowledge loaded and
	// validated.
	ClassifierStatus = "operational"
)

// ClassifyRequest is the POST /classifier_v2/classify body: a substrate
// gene and a missense substitution as an HGVS protein change
// ("p.Ala154Thr", "A154T") or an rsID the knowledge maps to one.
type ClassifyRequest struct {
	Gene          string `json:"gene"`
	ProteinChange string `json:"protein_change,omitempty"`
	Variant       string `json:"variant,omitempty"`
}

// ClassifyResponse is the classify answer: the envelope followed by the
// classification (the four method sections esm, population, graph,
// synthesis, then tier, rules_fired, source_citations, grounding_contract).
type ClassifyResponse struct {
	Envelope
	Classification
}

// DemoResponse is the answer of POST /classifier_v2/demo/{case_name}: the
// envelope, the case and its classification.
type DemoResponse struct {
	Envelope
	DemoAnswer
}

// ClassifierMetadata is the §2.8 metadata document (GET
// /classifier_v2/version), field by field.
type ClassifierMetadata struct {
	APIVersion                string                 `json:"api_version"`
	EngineVersion             string                 `json:"engine_version"`
	Status                    string                 `json:"status"`
	EndpointsLive             []string               `json:"endpoints_live"`
	DemoCaseIDs               []string               `json:"demo_case_ids"`
	Methods                   map[string]string      `json:"methods"`
	CuratedSubstrateSize      classify.SubstrateSize `json:"curated_substrate_size"`
	PublicationCitationsCount int                    `json:"publication_citations_count"`
}

// classifierAPI serves /classifier_v2.
type classifierAPI struct {
	svc    *service.Service
	cls    *classify.Classifier
	router *mux.Router

	// Built once: they depend only on the knowledge.
	demoCases demoCasesResponse
	substrate substrateResponse
	citations citationsResponse
}

// registerClassifier adds the /classifier_v2 endpoints to r. When the
// knowledge holds no usable classifier data (which validation prevents),
// every endpoint answers 503 and the cause is logged.
func (s *Server) registerClassifier(r *mux.Router) {
	cls, err := s.svc.Classifier()
	var h classifierHandlers = &unavailableClassifier{}
	if err != nil {
		s.log.Error("classifier unavailable", zap.Error(err))
	} else {
		h = newClassifierAPI(s.svc, cls, r)
	}
	r.Handle("/classifier_v2/classify", httpx.Handle(h.classify)).Methods(http.MethodPost)
	r.Handle("/classifier_v2/demo/{case_name}", httpx.Handle(h.demo)).Methods(http.MethodPost)
	r.Handle("/classifier_v2/demo_cases", httpx.Handle(h.demoCaseList)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/classifier_v2/curated_substrate", httpx.Handle(h.curatedSubstrate)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/classifier_v2/citations", httpx.Handle(h.citationList)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/classifier_v2/version", httpx.Handle(h.version)).Methods(http.MethodGet, http.MethodHead)
}

// classifierHandlers are the six handlers.
type classifierHandlers interface {
	classify(w http.ResponseWriter, r *http.Request) error
	demo(w http.ResponseWriter, r *http.Request) error
	demoCaseList(w http.ResponseWriter, r *http.Request) error
	curatedSubstrate(w http.ResponseWriter, r *http.Request) error
	citationList(w http.ResponseWriter, r *http.Request) error
	version(w http.ResponseWriter, r *http.Request) error
}

func newClassifierAPI(svc *service.Service, cls *classify.Classifier, r *mux.Router) *classifierAPI {
	a := &classifierAPI{svc: svc, cls: cls, router: r}
	a.demoCases = buildDemoCases(cls)
	a.substrate = buildSubstrate(cls)
	a.citations = buildCitations(cls)
	return a
}

func (a *classifierAPI) classify(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := startTime(r)
	var in ClassifyRequest
	if err := httpx.DecodeJSON(w, r, &in, ClassifyBodyLimit); err != nil {
		return err
	}
	call := service.Call{Principal: httpx.PrincipalOrAnonymous(ctx), Endpoint: ClassifyEndpoint, RequestID: httpx.RequestID(ctx)}
	res, err := service.Classify(ctx, a.svc, call, classify.Request(in), ClassificationOf)
	if err != nil {
		return err
	}
	out := ClassifyResponse{Envelope: envelope(a.svc, ClassifierAPIVersion, call.RequestID, res.Ref(), start), Classification: res.Result}
	w.Header().Set("Cache-Control", "no-store")
	httpx.SetReceipt(w, res.Receipt)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (a *classifierAPI) demo(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := startTime(r)
	name := mux.Vars(r)["case_name"]
	d, ok := a.cls.DemoCase(name)
	if !ok {
		ids := make([]string, 0, len(a.demoCases.DemoCases))
		for _, c := range a.demoCases.DemoCases {
			ids = append(ids, c.ID)
		}
		return &httpx.Error{
			Kind:   httpx.KindNotFound,
			Detail: fmt.Sprintf("unknown demonstration case %q; valid case names: %s", name, strings.Join(ids, ", ")),
		}
	}
	call := service.Call{Principal: httpx.PrincipalOrAnonymous(ctx), Endpoint: DemoEndpoint, RequestID: httpx.RequestID(ctx)}
	res, err := service.Demo(ctx, a.svc, call, d, DemoAnswerOf)
	if err != nil {
		return err
	}
	out := DemoResponse{Envelope: envelope(a.svc, ClassifierAPIVersion, call.RequestID, res.Ref(), start), DemoAnswer: res.Result}
	w.Header().Set("Cache-Control", "no-store")
	httpx.SetReceipt(w, res.Receipt)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// startTime is when the request entered the server.
func startTime(r *http.Request) time.Time {
	if t := httpx.StartTime(r.Context()); !t.IsZero() {
		return t
	}
	return time.Now()
}

// demoCaseItem is one entry of GET /classifier_v2/demo_cases.
type demoCaseItem struct {
	classify.DemoCase
	Path string `json:"path"`
}

type demoCasesResponse struct {
	APIVersion string         `json:"api_version"`
	Count      int            `json:"count"`
	Rule       string         `json:"rule"`
	DemoCases  []demoCaseItem `json:"demo_cases"`
}

func buildDemoCases(cls *classify.Classifier) demoCasesResponse {
	out := demoCasesResponse{APIVersion: ClassifierAPIVersion, Rule: cls.Substrate().DemoRule, DemoCases: []demoCaseItem{}}
	for _, d := range cls.DemoCases() {
		out.DemoCases = append(out.DemoCases, demoCaseItem{DemoCase: d, Path: "/classifier_v2/demo/" + d.ID})
	}
	out.Count = len(out.DemoCases)
	return out
}

func (a *classifierAPI) demoCaseList(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, a.demoCases)
}

// substrateResponse is GET /classifier_v2/curated_substrate.
type substrateResponse struct {
	APIVersion           string                      `json:"api_version"`
	KnowledgeVersion     string                      `json:"knowledge_version"`
	CuratedSubstrateSize classify.SubstrateSize      `json:"curated_substrate_size"`
	Rules                map[string]string           `json:"rules"`
	ProteinSelection     []classify.ProteinSelection `json:"protein_selection"`
	Proteins             []classify.ProteinSequence  `json:"proteins"`
	Cohort               []classify.CohortVariant    `json:"cohort"`
	DemoCases            []classify.DemoCase         `json:"demo_cases"`
	Graph                classify.KnowledgeGraph     `json:"graph"`
	ConservationModel    classify.ModelConstants     `json:"conservation_model"`
	// ConservationProfiles describes the per-position profiles
	// (classifier_profiles.json) the conservation score reads.
	ConservationProfiles classify.ProfilesDocument `json:"conservation_profiles"`
	RuleTable            []classify.RuleSpec       `json:"rule_table"`
	Validation           classify.Validation       `json:"validation"`
	Sources              []knowledgeSource         `json:"sources"`
}

func buildSubstrate(cls *classify.Classifier) substrateResponse {
	sub := cls.Substrate()
	kb := cls.Knowledge()
	out := substrateResponse{
		APIVersion: ClassifierAPIVersion, KnowledgeVersion: kb.Version.Label,
		CuratedSubstrateSize: cls.Size(),
		Rules: map[string]string{
			"proteins": sub.ProteinRule, "cohort": sub.CohortRule, "demo_cases": sub.DemoRule,
			"graph": sub.GraphRule, "citations": sub.CitationRule,
		},
		ProteinSelection:     sub.ProteinSelection,
		Proteins:             cls.Proteins(),
		Cohort:               sub.Cohort,
		DemoCases:            sub.DemoCases,
		Graph:                sub.Graph,
		ConservationModel:    cls.Model().Constants(),
		ConservationProfiles: cls.ProfilesDocument(),
		RuleTable:            classify.RuleTable,
		Validation:           cls.Validate(),
	}
	// The sources every part of the substrate cites.
	ids := map[string]bool{}
	add := func(ss []string) {
		for _, id := range ss {
			ids[id] = true
		}
	}
	ck := cls.Data()
	add(ck.Matrix.SourceIDs)
	if ck.Profiles != nil {
		add(ck.Profiles.Provenance.SourceIDs)
	}
	for _, p := range out.Proteins {
		add(p.SourceIDs)
	}
	for _, c := range out.Cohort {
		add(c.SourceIDs)
	}
	for _, e := range out.Graph.Edges {
		add(e.SourceIDs)
	}
	out.Sources = []knowledgeSource{}
	for id := range ids {
		if s, ok := kb.Source(id); ok {
			out.Sources = append(out.Sources, knowledgeSource(*s))
		}
	}
	sort.Slice(out.Sources, func(i, j int) bool { return out.Sources[i].ID < out.Sources[j].ID })
	return out
}

func (a *classifierAPI) curatedSubstrate(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, a.substrate)
}

// citationsResponse is GET /classifier_v2/citations.
type citationsResponse struct {
	APIVersion                string                         `json:"api_version"`
	PublicationCitationsCount int                            `json:"publication_citations_count"`
	Rule                      string                         `json:"rule"`
	Citations                 []classify.PublicationCitation `json:"citations"`
}

func buildCitations(cls *classify.Classifier) citationsResponse {
	c := cls.Citations()
	return citationsResponse{APIVersion: ClassifierAPIVersion, PublicationCitationsCount: len(c), Rule: cls.Substrate().CitationRule, Citations: c}
}

func (a *classifierAPI) citationList(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, a.citations)
}

func (a *classifierAPI) version(w http.ResponseWriter, _ *http.Request) error {
	ids := make([]string, 0, len(a.demoCases.DemoCases))
	for _, d := range a.demoCases.DemoCases {
		ids = append(ids, d.ID)
	}
	methods := make(map[string]string, len(classify.MethodDescriptions))
	for k, v := range classify.MethodDescriptions {
		methods[k] = v
	}
	doc := ClassifierMetadata{
		APIVersion:                ClassifierAPIVersion,
		EngineVersion:             classify.EngineVersion,
		Status:                    ClassifierStatus,
		EndpointsLive:             liveEndpoints(a.router, ClassifierPathPrefix),
		DemoCaseIDs:               ids,
		Methods:                   methods,
		CuratedSubstrateSize:      a.cls.Size(),
		PublicationCitationsCount: a.citations.PublicationCitationsCount,
	}
	return httpx.WriteJSON(w, http.StatusOK, doc)
}

// liveEndpoints lists "METHOD /path" for every route of r whose path
// template starts with prefix, in registration order.
func liveEndpoints(r *mux.Router, prefix string) []string {
	out := []string{}
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, prefix) {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			if m == http.MethodHead {
				continue // HEAD mirrors GET; the document lists each endpoint once
			}
			out = append(out, m+" "+tpl)
		}
		return nil
	})
	return out
}

// unavailableClassifier answers every classifier endpoint with 503.
type unavailableClassifier struct{}

func (unavailableClassifier) unavailable() error {
	return &httpx.Error{Kind: httpx.KindClassifierUnavailable,
		Detail: "the classifier knowledge is not loaded; no classification was made"}
}

func (u unavailableClassifier) classify(http.ResponseWriter, *http.Request) error {
	return u.unavailable()
}
func (u unavailableClassifier) demo(http.ResponseWriter, *http.Request) error { return u.unavailable() }
func (u unavailableClassifier) demoCaseList(http.ResponseWriter, *http.Request) error {
	return u.unavailable()
}
func (u unavailableClassifier) curatedSubstrate(http.ResponseWriter, *http.Request) error {
	return u.unavailable()
}
func (u unavailableClassifier) citationList(http.ResponseWriter, *http.Request) error {
	return u.unavailable()
}
func (u unavailableClassifier) version(http.ResponseWriter, *http.Request) error {
	return u.unavailable()
}

// knowledgeSource is the wire form of a cited source of the knowledge
// (engine.Source) in the substrate answer.
type knowledgeSource struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Publisher string `json:"publisher,omitempty"`
	Year      string `json:"year,omitempty"`
	URL       string `json:"url,omitempty"`
	PMID      string `json:"pmid,omitempty"`
	Licence   string `json:"licence"`
}
