package pgxapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/medlist"
	"github.com/pgxsafety/pgxsafety/engine/service"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// POST /pgx/batch: medication reconciliation. One genotype and context,
// a list of drugs; every drug is checked as POST /pgx/check would check it,
// and a summary orders the drugs by severity, names the genes whose testing
// would change advice and notes the drugs that share an actionable gene.

// Medication-reconciliation limits and names.
const (
	// BatchEndpoint names POST /pgx/batch in audit entries.
	BatchEndpoint = "POST /pgx/batch"
	// BatchBodyLimit is the largest accepted POST /pgx/batch body.
	BatchBodyLimit = 128 << 10
	// BatchMaxDrugs is the most drugs one POST /pgx/batch may list.
	BatchMaxDrugs = 200
)

// BatchRequest is the POST /pgx/batch body: drugs plus the genotype and
// context fields of CheckRequest.
type BatchRequest struct {
	Drugs []string `json:"drugs"`
	PatientFacts
}

// BatchResponse is the POST /pgx/batch answer: the envelope, one check
// result per listed drug (in the order listed) and the summary.
type BatchResponse struct {
	Envelope
	BatchAnswer
}

// BatchAnswer is the part of the POST /pgx/batch answer that is audited.
type BatchAnswer struct {
	// Confidence is the lowest confidence of the results.
	Confidence string `json:"confidence"`
	// DataCompleteness describes the shared inputs (the same for every
	// drug).
	DataCompleteness DataCompleteness `json:"data_completeness"`
	// SourceCitations support the summary's fields; each result carries
	// its own.
	SourceCitations   []Citation   `json:"source_citations"`
	GroundingContract string       `json:"grounding_contract"`
	KnowledgeVersion  string       `json:"knowledge_version"`
	DrugsTotal        int          `json:"drugs_total"`
	Results           []Result     `json:"results"`
	Summary           BatchSummary `json:"summary"`
}

// BatchSummary summarises a medication list.
type BatchSummary struct {
	// OverallSeverity is the highest severity of any drug.
	OverallSeverity string `json:"overall_severity"`
	// DrugsBySeverity lists every drug, most severe first (then by
	// sensitivity tier, then in the order listed).
	DrugsBySeverity []BatchDrugSeverity `json:"drugs_by_severity"`
	// GenesToTest are the genes of the genotype-unknown alerts: testing
	// them would change the advice for the drugs named.
	GenesToTest []BatchGeneToTest `json:"genes_to_test"`
	// DrugDrugNotes name the genes two or more listed drugs both have
	// actionable guidance for.
	DrugDrugNotes []DrugDrugNote `json:"drug_drug_notes"`
	// DrugsNotCovered are the listed names the knowledge does not cover.
	DrugsNotCovered []string `json:"drugs_not_covered"`
}

// BatchDrugSeverity is one drug of the severity ordering.
type BatchDrugSeverity struct {
	// Index is the drug's position in drugs and results.
	Index           int      `json:"index"`
	Drug            string   `json:"drug"`
	DrugNormalised  string   `json:"drug_normalised"`
	DrugRecognised  bool     `json:"drug_recognised"`
	OverallSeverity string   `json:"overall_severity"`
	Sensitivity     string   `json:"sensitivity"`
	Genes           []string `json:"genes"`
	// Action is the action of the drug's most severe alert.
	Action string `json:"action,omitempty"`
}

// BatchGeneToTest is a gene whose result would change advice.
type BatchGeneToTest struct {
	Gene string `json:"gene"`
	// Drugs are the normalised names of the drugs with a genotype-unknown
	// alert for the gene.
	Drugs []string `json:"drugs"`
	// HighestSeverity is the most severe of those alerts.
	HighestSeverity string `json:"highest_severity"`
}

// DrugDrugNote says that listed drugs share an actionable gene: one result
// for that gene applies to all of them. It is about shared guidance, not a
// drug–drug interaction check.
type DrugDrugNote struct {
	Gene  string   `json:"gene"`
	Drugs []string `json:"drugs"`
	// PatientGenotype is the patient's call for the gene, when the input
	// gave one.
	PatientGenotype *GenotypeCall   `json:"patient_genotype,omitempty"`
	Note            string          `json:"note"`
	Guidelines      []DrugGuideline `json:"guidelines"`
}

// DrugGuideline names the guideline behind one drug's actionable
// recommendations for a gene.
type DrugGuideline struct {
	Drug          string      `json:"drug"`
	Source        string      `json:"source"`
	Name          string      `json:"name"`
	URL           string      `json:"url,omitempty"`
	EvidenceLevel string      `json:"evidence_level,omitempty"`
	Sources       []sourceRef `json:"sources"`
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	start := httpx.StartTime(ctx)
	if start.IsZero() {
		start = time.Now()
	}
	var in BatchRequest
	if err := httpx.DecodeJSON(w, r, &in, BatchBodyLimit); err != nil {
		return err
	}
	if err := checkDrugCount(in.Drugs); err != nil {
		return err
	}
	if err := httpx.RateLimitCost(r, (len(in.Drugs)+RowsPerRateUnit-1)/RowsPerRateUnit); err != nil {
		return err
	}
	call := service.Call{
		Principal: httpx.PrincipalOrAnonymous(ctx),
		Endpoint:  BatchEndpoint,
		RequestID: httpx.RequestID(ctx),
	}
	list := service.MedicationList{Drugs: in.Drugs, Patient: in.EngineRequest("")}
	answer, err := service.CheckMany(ctx, s.svc, call, list, s.answer)
	if err != nil {
		return err
	}
	out := BatchResponse{Envelope: s.envelope(call.RequestID, answer.Ref(), start), BatchAnswer: answer.Result}
	w.Header().Set("Cache-Control", "no-store")
	httpx.SetReceipt(w, answer.Receipt)
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// answer builds the answer to a medication list from its results (one
// per drug, in the order listed).
func (s *Server) answer(results []engine.Result) (BatchAnswer, error) {
	sum := medlist.Summarise(s.kb, results)
	summary, citations := s.summaryOf(sum)
	return BatchAnswer{
		Confidence:        sum.Confidence,
		DataCompleteness:  DataCompleteness(results[0].DataCompleteness),
		SourceCitations:   citations,
		GroundingContract: engine.GroundingContract,
		KnowledgeVersion:  s.kb.Version.Label,
		DrugsTotal:        len(results),
		Results:           mapSlice(results, ResultOf),
		Summary:           summary,
	}, nil
}

func checkDrugCount(drugs []string) error {
	if len(drugs) == 0 || len(drugs) > BatchMaxDrugs {
		return fileError("drugs", fmt.Sprintf("must list 1 to %d drug names, got %d", BatchMaxDrugs, len(drugs)))
	}
	return nil
}

// summaryOf is the wire form of a medication list's summary and the
// citations of its drug–drug notes.
func (s *Server) summaryOf(sum medlist.Summary) (BatchSummary, []Citation) {
	out := BatchSummary{
		OverallSeverity: severityName(sum.OverallSeverity),
		DrugsBySeverity: make([]BatchDrugSeverity, 0, len(sum.Drugs)),
		GenesToTest:     make([]BatchGeneToTest, 0, len(sum.GenesToTest)),
		DrugDrugNotes:   make([]DrugDrugNote, 0, len(sum.SharedGenes)),
		DrugsNotCovered: nonNil(sum.NotCovered),
	}
	for _, d := range sum.Drugs {
		out.DrugsBySeverity = append(out.DrugsBySeverity, BatchDrugSeverity{Index: d.Index, Drug: d.Drug,
			DrugNormalised: d.DrugNormalised, DrugRecognised: d.DrugRecognised, OverallSeverity: severityName(d.OverallSeverity),
			Sensitivity: d.Sensitivity, Genes: nonNil(d.Genes), Action: d.Action})
	}
	for _, g := range sum.GenesToTest {
		out.GenesToTest = append(out.GenesToTest, BatchGeneToTest{Gene: g.Gene, Drugs: nonNil(g.Drugs),
			HighestSeverity: severityName(g.HighestSeverity)})
	}
	cites := []Citation{}
	for i, sg := range sum.SharedGenes {
		n := DrugDrugNote{Gene: sg.Gene, Drugs: sg.Drugs, Note: sg.Note, Guidelines: make([]DrugGuideline, 0, len(sg.Guidelines))}
		if sg.PatientGenotype != nil {
			call := GenotypeCall(*sg.PatientGenotype)
			n.PatientGenotype = &call
		}
		for _, g := range sg.Guidelines {
			dg := DrugGuideline{Drug: g.Drug, Source: g.Source, Name: g.Name, URL: g.URL, EvidenceLevel: g.EvidenceLevel,
				Sources: s.sourceRefs(g.SourceIDs)}
			n.Guidelines = append(n.Guidelines, dg)
			url := dg.URL
			if url == "" && len(dg.Sources) > 0 {
				url = dg.Sources[0].URL
			}
			cites = append(cites, Citation{Field: fmt.Sprintf("summary.drug_drug_notes[%d]", i),
				Source: dg.Source + ": " + dg.Name, EvidenceLevel: dg.EvidenceLevel, URL: url})
		}
		out.DrugDrugNotes = append(out.DrugDrugNotes, n)
	}
	return out, cites
}

// sourceRefs resolves source ids to titles and links.
func (s *Server) sourceRefs(ids []string) []sourceRef {
	out := make([]sourceRef, 0, len(ids))
	for _, id := range ids {
		ref := sourceRef{ID: id}
		if src, ok := s.kb.Source(id); ok {
			ref.Title, ref.URL = src.Title, sourceURL(*src)
		}
		out = append(out, ref)
	}
	return out
}

// fileError is a validation error of one request field.
func fileError(field, reason string) error {
	return &engine.ValidationError{Fields: []engine.FieldError{{Field: field, Reason: reason}}}
}
