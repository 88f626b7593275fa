package pgxapi

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pgxsafety/pgxsafety/engine"
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
	out := BatchResponse{Envelope: s.envelope(call.RequestID, answer.AuditID, start), BatchAnswer: answer.Result}
	w.Header().Set("Cache-Control", "no-store")
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// answer builds the answer to a medication list from its results (one
// per drug, in the order listed).
func (s *Server) answer(results []engine.Result) (BatchAnswer, error) {
	summary, citations := s.summarise(results)
	return BatchAnswer{
		Confidence:        lowestConfidence(results),
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

var confidenceRank = map[string]int{"low": 0, "medium": 1, "high": 2}

func lowestConfidence(results []engine.Result) string {
	out := "high"
	for _, r := range results {
		if confidenceRank[r.Confidence] < confidenceRank[out] {
			out = r.Confidence
		}
	}
	return out
}

var severityRank = map[string]int{"NONE": 0, "INFO": 1, "MODERATE": 2, "HIGH": 3}

var sensitivityRank = map[string]int{"none": 0, "moderate": 1, "high": 2}

// summarise builds the summary of a medication list and the citations of
// its drug–drug notes.
func (s *Server) summarise(results []engine.Result) (BatchSummary, []Citation) {
	sum := BatchSummary{
		OverallSeverity: "NONE",
		DrugsBySeverity: make([]BatchDrugSeverity, 0, len(results)),
		GenesToTest:     []BatchGeneToTest{},
		DrugDrugNotes:   []DrugDrugNote{},
		DrugsNotCovered: []string{},
	}
	tests := map[string]*BatchGeneToTest{}
	var testOrder []string
	for i, r := range results {
		item := BatchDrugSeverity{Index: i, Drug: r.Drug, DrugNormalised: r.DrugNormalised, DrugRecognised: r.DrugRecognised,
			OverallSeverity: severityName(r.OverallSeverity), Sensitivity: r.Sensitivity, Genes: []string{}}
		if severityRank[severityName(r.OverallSeverity)] > severityRank[sum.OverallSeverity] {
			sum.OverallSeverity = severityName(r.OverallSeverity)
		}
		for j, a := range r.Alerts {
			if j == 0 {
				item.Action = a.Action
			}
			if a.Gene != "" && !slices.Contains(item.Genes, a.Gene) {
				item.Genes = append(item.Genes, a.Gene)
			}
			if a.Category != engine.CategoryUnknown || !a.TestRecommended || a.Gene == "" {
				continue
			}
			t, ok := tests[a.Gene]
			if !ok {
				t = &BatchGeneToTest{Gene: a.Gene, Drugs: []string{}, HighestSeverity: severityName(a.Severity)}
				tests[a.Gene] = t
				testOrder = append(testOrder, a.Gene)
			}
			if !slices.Contains(t.Drugs, r.DrugNormalised) {
				t.Drugs = append(t.Drugs, r.DrugNormalised)
			}
			if severityRank[severityName(a.Severity)] > severityRank[t.HighestSeverity] {
				t.HighestSeverity = severityName(a.Severity)
			}
		}
		if !r.DrugRecognised && !slices.Contains(sum.DrugsNotCovered, r.Drug) {
			sum.DrugsNotCovered = append(sum.DrugsNotCovered, r.Drug)
		}
		sum.DrugsBySeverity = append(sum.DrugsBySeverity, item)
	}
	sort.SliceStable(sum.DrugsBySeverity, func(i, j int) bool {
		a, b := sum.DrugsBySeverity[i], sum.DrugsBySeverity[j]
		if sa, sb := severityRank[a.OverallSeverity], severityRank[b.OverallSeverity]; sa != sb {
			return sa > sb
		}
		return sensitivityRank[a.Sensitivity] > sensitivityRank[b.Sensitivity]
	})
	for _, g := range testOrder {
		sum.GenesToTest = append(sum.GenesToTest, *tests[g])
	}
	sort.SliceStable(sum.GenesToTest, func(i, j int) bool {
		a, b := sum.GenesToTest[i], sum.GenesToTest[j]
		if sa, sb := severityRank[a.HighestSeverity], severityRank[b.HighestSeverity]; sa != sb {
			return sa > sb
		}
		if len(a.Drugs) != len(b.Drugs) {
			return len(a.Drugs) > len(b.Drugs)
		}
		return a.Gene < b.Gene
	})
	sum.DrugDrugNotes = s.sharedGeneNotes(results)
	var cites []Citation
	for i, n := range sum.DrugDrugNotes {
		for _, g := range n.Guidelines {
			url := g.URL
			if url == "" && len(g.Sources) > 0 {
				url = g.Sources[0].URL
			}
			cites = append(cites, Citation{Field: fmt.Sprintf("summary.drug_drug_notes[%d]", i),
				Source: g.Source + ": " + g.Name, EvidenceLevel: g.EvidenceLevel, URL: url})
		}
	}
	if cites == nil {
		cites = []Citation{}
	}
	return sum, cites
}

// actionableGuidance is one drug's actionable guidance for one gene.
type actionableGuidance struct {
	source, name, url string
	sourceIDs         []string
}

// actionableGenes returns, for a covered drug, the genes that key at least
// one of its recommendations with actionability "yes" or "conditional"
// (a phenotype of the gene changes the prescription), with the guideline
// of those rows.
func actionableGenes(kb *engine.Knowledge, drug string) map[string]*actionableGuidance {
	out := map[string]*actionableGuidance{}
	for _, rec := range kb.RecommendationsFor(drug) {
		if rec.Actionability != "yes" && rec.Actionability != "conditional" {
			continue
		}
		for _, g := range rec.Genes {
			ag, ok := out[g]
			if !ok {
				ag = &actionableGuidance{source: rec.Source, name: rec.GuidelineName, url: rec.GuidelineURL}
				out[g] = ag
			}
			for _, id := range rec.SourceIDs {
				if !slices.Contains(ag.sourceIDs, id) {
					ag.sourceIDs = append(ag.sourceIDs, id)
				}
			}
		}
	}
	for _, ag := range out {
		sort.Strings(ag.sourceIDs)
	}
	return out
}

// sharedGeneNotes finds the genes for which two or more of the listed
// (covered) drugs have actionable guidance.
func (s *Server) sharedGeneNotes(results []engine.Result) []DrugDrugNote {
	type member struct {
		drug string
		ag   *actionableGuidance
	}
	byGene := map[string][]member{}
	var geneOrder []string
	listed := map[string]bool{}
	for _, r := range results {
		if !r.DrugRecognised || listed[r.DrugNormalised] {
			continue
		}
		listed[r.DrugNormalised] = true
		ags := actionableGenes(s.kb, r.DrugNormalised)
		genes := make([]string, 0, len(ags))
		for g := range ags {
			genes = append(genes, g)
		}
		sort.Strings(genes)
		for _, g := range genes {
			if _, ok := byGene[g]; !ok {
				geneOrder = append(geneOrder, g)
			}
			byGene[g] = append(byGene[g], member{drug: r.DrugNormalised, ag: ags[g]})
		}
	}
	sort.Strings(geneOrder)
	var genotype []engine.GenotypeCall
	if len(results) > 0 {
		genotype = results[0].Genotype
	}
	notes := []DrugDrugNote{}
	for _, g := range geneOrder {
		ms := byGene[g]
		if len(ms) < 2 {
			continue
		}
		n := DrugDrugNote{Gene: g, Drugs: make([]string, 0, len(ms)), Guidelines: make([]DrugGuideline, 0, len(ms))}
		for _, m := range ms {
			n.Drugs = append(n.Drugs, m.drug)
			dg := DrugGuideline{Drug: m.drug, Source: m.ag.source, Name: m.ag.name, URL: m.ag.url, Sources: s.sourceRefs(m.ag.sourceIDs)}
			if d, ok := s.svc.Names().Drug(m.drug); ok {
				for _, p := range d.Pairs {
					if p.Gene == g {
						dg.EvidenceLevel = p.EvidenceLevel
					}
				}
			}
			n.Guidelines = append(n.Guidelines, dg)
		}
		for i := range genotype {
			if genotype[i].Gene == g && (genotype[i].Phenotype != "" || genotype[i].Diplotype != "") {
				call := GenotypeCall(genotype[i])
				n.PatientGenotype = &call
			}
		}
		list := joinAnd(n.Drugs)
		if n.PatientGenotype != nil {
			result := n.PatientGenotype.Phenotype
			if result == "" {
				result = n.PatientGenotype.Diplotype
			}
			n.Note = fmt.Sprintf("%s all have actionable guidance for %s; the patient's %s result (%s) applies to each of them: see each drug's alerts. This is shared pharmacogenomic guidance, not a drug–drug interaction check.",
				list, g, g, result)
		} else {
			n.Note = fmt.Sprintf("%s all have actionable guidance for %s, which is not genotyped: one %s result would inform each of these prescriptions. This is shared pharmacogenomic guidance, not a drug–drug interaction check.",
				list, g, g)
		}
		if len(n.Drugs) == 2 {
			n.Note = strings.Replace(n.Note, " all have", " both have", 1)
			n.Note = strings.Replace(n.Note, "each of them", "both", 1)
			n.Note = strings.Replace(n.Note, "each of these prescriptions", "both prescriptions", 1)
		}
		notes = append(notes, n)
	}
	return notes
}

// joinAnd joins names as "a, b and c".
func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
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
