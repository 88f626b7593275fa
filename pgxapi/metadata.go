package pgxapi

import (
	"net/http"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// versionResponse is the GET /pgx/version answer.
type versionResponse struct {
	APIVersion          string              `json:"api_version"`
	EngineVersion       string              `json:"engine_version"`
	KnowledgeVersion    string              `json:"knowledge_version"`
	KnowledgeDigest     string              `json:"knowledge_digest"`
	DataVersions        map[string]string   `json:"data_versions"`
	ServiceLevelTargets serviceLevelTargets `json:"service_level_targets"`
	Limits              limits              `json:"limits"`
}

type serviceLevelTargets struct {
	LatencyP95Ms       int `json:"latency_p95_ms"`
	RateLimitPerMinute int `json:"rate_limit_per_minute"`
	AuditRetentionDays int `json:"audit_retention_days"`
}

type limits struct {
	CheckBodyBytes int `json:"check_body_bytes"`
	// Batch limits (docs/batch.md).
	BatchCSVMaxBytes int64 `json:"batch_csv_max_bytes"`
	BatchCSVMaxRows  int   `json:"batch_csv_max_rows"`
	BatchBodyBytes   int   `json:"batch_body_bytes"`
	BatchMaxDrugs    int   `json:"batch_max_drugs"`
	// VCF limit (docs/vcf.md): the largest POST /pgx/vcf upload.
	VCFMaxBytes int64 `json:"vcf_max_bytes"`
}

func buildVersion(kb *engine.Knowledge, cfg Config) versionResponse {
	dv := kb.Version.DataVersions
	if dv == nil {
		dv = map[string]string{}
	}
	return versionResponse{
		APIVersion:       APIVersion,
		EngineVersion:    EngineVersion,
		KnowledgeVersion: kb.Version.Label,
		KnowledgeDigest:  kb.Version.Digest,
		DataVersions:     dv,
		ServiceLevelTargets: serviceLevelTargets{
			LatencyP95Ms:       LatencyTargetP95Ms,
			RateLimitPerMinute: cfg.RateLimitPerMinute,
			AuditRetentionDays: AuditRetentionDays,
		},
		Limits: limits{CheckBodyBytes: CheckBodyLimit,
			BatchCSVMaxBytes: cfg.batchCSVMaxBytes(), BatchCSVMaxRows: cfg.batchCSVMaxRows(),
			BatchBodyBytes: BatchBodyLimit, BatchMaxDrugs: BatchMaxDrugs,
			VCFMaxBytes: cfg.vcfMaxBytes()},
	}
}

func (s *Server) versionInfo(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, s.version)
}

// statusResponse is the GET /pgx/status answer.
type statusResponse struct {
	Status            string            `json:"status"`
	Engine            engineStatus      `json:"engine"`
	AuditLog          auditStatus       `json:"audit_log"`
	GroundingContract groundingContract `json:"grounding_contract"`
}

type engineStatus struct {
	Version          string `json:"version"`
	KnowledgeLoaded  bool   `json:"knowledge_loaded"`
	KnowledgeVersion string `json:"knowledge_version"`
	Drugs            int    `json:"drugs"`
	Genes            int    `json:"genes"`
	Variants         int    `json:"variants"`
	RsIDsUnderstood  int    `json:"rsids_understood"`
}

type auditStatus struct {
	Backend       string `json:"backend"`
	Policy        string `json:"policy"`
	RetentionDays int    `json:"retention_days"`
	Reachable     bool   `json:"reachable"`
	// AcceptingEntries is false while the last commit failed, after a
	// storage fault, or when the disk is nearly full.
	AcceptingEntries bool `json:"accepting_entries"`
	// FreeBytes is the free space beside a SQLite log.
	FreeBytes *uint64 `json:"free_bytes,omitempty"`
	// Integrity is "ok" while the log is consistent with its signed
	// checkpoints and witness, else what was found (Config.Integrity);
	// absent when the server does not check.
	Integrity string `json:"integrity,omitempty"`
}

type groundingContract struct {
	Text     string `json:"text"`
	Enforced bool   `json:"enforced"`
	How      string `json:"how"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	out := statusResponse{
		Status: "ok",
		Engine: engineStatus{
			Version:          EngineVersion,
			KnowledgeLoaded:  s.knowledgeLoaded(),
			KnowledgeVersion: s.kb.Version.Label,
			Drugs:            len(s.kb.Drugs),
			Genes:            len(s.kb.Genes),
			Variants:         len(s.kb.Variants),
			RsIDsUnderstood:  len(s.kb.RsIDs),
		},
		AuditLog: auditStatus{
			Policy:        AuditPolicy,
			RetentionDays: AuditRetentionDays,
			Reachable:     s.auditReachable(r.Context()),
		},
		GroundingContract: groundingContract{
			Text:     engine.GroundingContract,
			Enforced: true,
			How:      GroundingEnforcement,
		},
	}
	if s.audit != nil {
		// The store's location (a file path or database host) is logged at
		// start-up, not published: this endpoint needs no token.
		out.AuditLog.Backend = s.audit.Backend()
		out.AuditLog.AcceptingEntries = out.AuditLog.Reachable && s.auditAccepting(r.Context())
		if h, ok := s.audit.(AuditHealth); ok {
			if free, ok := h.FreeBytes(); ok {
				out.AuditLog.FreeBytes = &free
			}
		}
	}
	if s.cfg.Integrity != nil {
		out.AuditLog.Integrity = "ok"
		if s.integrityErr() != nil {
			out.AuditLog.Integrity = integrityBroken
		}
	}
	if !out.AuditLog.Reachable || !out.AuditLog.AcceptingEntries || !out.Engine.KnowledgeLoaded || s.integrityErr() != nil {
		out.Status = "degraded"
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// drugsResponse is the GET /pgx/drugs answer.
type drugsResponse struct {
	Count int        `json:"count"`
	Drugs []drugItem `json:"drugs"`
}

type drugItem struct {
	Name          string     `json:"name"`
	Sensitivity   string     `json:"sensitivity"`
	Guidance      string     `json:"guidance"`
	Genes         []drugGene `json:"genes"`
	BestCPICLevel string     `json:"best_cpic_level,omitempty"`
	RxNormCUIs    []string   `json:"rxnorm_cuis"`
	ATCCodes      []string   `json:"atc_codes"`
}

type drugGene struct {
	Gene          string `json:"gene"`
	CPICLevel     string `json:"cpic_level,omitempty"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
}

func buildDrugs(kb *engine.Knowledge) drugsResponse {
	out := drugsResponse{Count: len(kb.Drugs), Drugs: make([]drugItem, 0, len(kb.Drugs))}
	for _, d := range kb.Drugs {
		item := drugItem{
			Name:          d.Name,
			Sensitivity:   d.Sensitivity,
			Guidance:      d.Guidance,
			Genes:         make([]drugGene, 0, len(d.Pairs)),
			BestCPICLevel: d.BestCPICLevel,
			RxNormCUIs:    nonNil(d.RxNormCUIs),
			ATCCodes:      nonNil(d.ATCCodes),
		}
		for _, p := range d.Pairs {
			item.Genes = append(item.Genes, drugGene{Gene: p.Gene, CPICLevel: p.CPICLevel, EvidenceLevel: p.EvidenceLevel})
		}
		out.Drugs = append(out.Drugs, item)
	}
	return out
}

func (s *Server) drugList(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, s.drugs)
}

// variantsResponse is the GET /pgx/variants answer.
type variantsResponse struct {
	Count    int           `json:"count"`
	Variants []variantItem `json:"variants"`
}

type variantItem struct {
	RsID          string      `json:"rsid"`
	Gene          string      `json:"gene"`
	Allele        string      `json:"allele"`
	StarAlleles   []string    `json:"star_alleles"`
	Function      string      `json:"function,omitempty"`
	AFIndia       *float64    `json:"af_india,omitempty"`
	AFIndiaBasis  string      `json:"af_india_basis,omitempty"`
	AFIndiaKind   string      `json:"af_india_kind,omitempty"`
	AFGlobal      *float64    `json:"af_global,omitempty"`
	AFGlobalBasis string      `json:"af_global_basis,omitempty"`
	ClinVar       string      `json:"clinvar,omitempty"`
	Sources       []sourceRef `json:"sources"`
}

type sourceRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url,omitempty"`
}

func buildVariants(kb *engine.Knowledge) variantsResponse {
	sources := make(map[string]engine.Source, len(kb.Sources))
	for _, src := range kb.Sources {
		sources[src.ID] = src
	}
	out := variantsResponse{Count: len(kb.Variants), Variants: make([]variantItem, 0, len(kb.Variants))}
	for _, v := range kb.Variants {
		refs := make([]sourceRef, 0, len(v.SourceIDs))
		for _, id := range v.SourceIDs {
			// Loading guarantees every source id resolves; an unknown one
			// is still listed by id rather than dropped.
			src := sources[id]
			refs = append(refs, sourceRef{ID: id, Title: src.Title, URL: sourceURL(src)})
		}
		out.Variants = append(out.Variants, newVariantItem(v, refs))
	}
	return out
}

// newVariantItem is the wire form of a tracked variant, with its sources.
func newVariantItem(v engine.TrackedVariant, sources []sourceRef) variantItem {
	return variantItem{
		RsID:          v.RsID,
		Gene:          v.Gene,
		Allele:        v.AlleleLabel,
		StarAlleles:   nonNil(v.StarAlleles),
		Function:      v.Function,
		AFIndia:       v.AFIndia,
		AFIndiaBasis:  v.AFIndiaBasis,
		AFIndiaKind:   v.AFIndiaKind,
		AFGlobal:      v.AFGlobal,
		AFGlobalBasis: v.AFGlobalBasis,
		ClinVar:       v.ClinVar,
		Sources:       sources,
	}
}

// sourceURL is the link of a source, or its PMID as "PMID:<n>".
func sourceURL(src engine.Source) string {
	if src.URL != "" {
		return src.URL
	}
	if src.PMID != "" {
		return "PMID:" + src.PMID
	}
	return ""
}

func (s *Server) variantList(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, s.variants)
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
