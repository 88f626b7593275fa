package pgxapi

import (
	"fmt"
	"net/http"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/indiapanel"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// GET /pgx/india_panel: the flagship panel, computed by engine/indiapanel
// from the knowledge alone when the server starts (the knowledge does not
// change while it runs); this file is its wire form. Every item names its
// sources, resolved to titles and links. See docs/batch.md for the rules.

// atcGroup is an ATC group: a code prefix and its WHO name.
type atcGroup struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// indiaPanelResponse is the GET /pgx/india_panel answer.
type indiaPanelResponse struct {
	APIVersion                 string         `json:"api_version"`
	KnowledgeVersion           string         `json:"knowledge_version"`
	GroundingContract          string         `json:"grounding_contract"`
	Pathway                    []pathwayStep  `json:"pathway"`
	WedgeRule                  wedgeRule      `json:"wedge_rule"`
	Wedges                     []wedge        `json:"wedges"`
	DrugsWithoutWedge          []string       `json:"drugs_without_wedge"`
	TraditionalMedicineOverlay []herbOverlay  `json:"traditional_medicine_overlay"`
	Counts                     map[string]int `json:"counts"`
}

type wedgeRule struct {
	Text  string    `json:"text"`
	Basis sourceRef `json:"basis"`
}

type pathwayStep struct {
	Step            int            `json:"step"`
	ID              string         `json:"id"`
	Name            string         `json:"name"`
	What            string         `json:"what"`
	ServiceProvides []string       `json:"service_provides"`
	Knowledge       map[string]int `json:"knowledge"`
	Sources         []sourceRef    `json:"sources"`
}

type wedge struct {
	ID                string        `json:"id"`
	Name              string        `json:"name"`
	ATCGroups         []atcGroup    `json:"atc_groups"`
	Focus             []wedgeFocus  `json:"focus,omitempty"`
	Genes             []wedgeGene   `json:"genes"`
	Drugs             []wedgeDrug   `json:"drugs"`
	AlleleFrequencies []wedgeAllele `json:"allele_frequencies"`
	HLAFrequencies    []wedgeHLA    `json:"hla_frequencies"`
	States            []wedgeState  `json:"states"`
}

type wedgeFocus struct {
	Name      string     `json:"name"`
	ATCGroups []atcGroup `json:"atc_groups"`
	Drugs     []string   `json:"drugs"`
}

type wedgeGene struct {
	Gene  string   `json:"gene"`
	Drugs []string `json:"drugs"`
}

type wedgeDrug struct {
	Name          string          `json:"name"`
	Sensitivity   string          `json:"sensitivity"`
	Guidance      string          `json:"guidance"`
	BestCPICLevel string          `json:"best_cpic_level,omitempty"`
	ATCCodes      []string        `json:"atc_codes"`
	Genes         []wedgeDrugGene `json:"genes"`
	Sources       []sourceRef     `json:"sources"`
}

type wedgeDrugGene struct {
	Gene          string `json:"gene"`
	CPICLevel     string `json:"cpic_level,omitempty"`
	EvidenceLevel string `json:"evidence_level,omitempty"`
	Guideline     string `json:"guideline,omitempty"`
	GuidelineURL  string `json:"guideline_url,omitempty"`
	// Actionable is true when a recommendation keyed by the gene changes
	// the prescription (actionability yes or conditional).
	Actionable bool `json:"actionable"`
}

// wedgeAllele is a tracked variant as GET /pgx/variants lists it, cited by
// the sources of its frequencies.
type wedgeAllele = variantItem

type wedgeHLA struct {
	Allele string `json:"allele"`
	// AFCentralSouthAsian is CPIC's Central/South Asian frequency (no
	// India-only figure is in the knowledge).
	AFCentralSouthAsian *float64    `json:"af_central_south_asian,omitempty"`
	Drugs               []string    `json:"drugs"`
	Sources             []sourceRef `json:"sources"`
}

type wedgeState struct {
	State string      `json:"state"`
	Type  string      `json:"type"`
	Risks []wedgeRisk `json:"risks"`
}

type wedgeRisk struct {
	Risk    string      `json:"risk"`
	Disease string      `json:"disease"`
	Drugs   []string    `json:"drugs"`
	Note    string      `json:"note,omitempty"`
	Sources []sourceRef `json:"sources"`
}

type herbOverlay struct {
	Herb             string      `json:"herb"`
	Botanical        string      `json:"botanical"`
	TraditionalNames string      `json:"traditional_names,omitempty"`
	InteractingWith  string      `json:"interacting_with"`
	Drugs            []string    `json:"drugs"`
	Mechanism        string      `json:"mechanism,omitempty"`
	Effect           string      `json:"effect,omitempty"`
	Severity         string      `json:"severity,omitempty"`
	EvidenceType     string      `json:"evidence_type,omitempty"`
	Notes            string      `json:"notes,omitempty"`
	Sources          []sourceRef `json:"sources"`
}

func (s *Server) indiaPanel(w http.ResponseWriter, _ *http.Request) error {
	return httpx.WriteJSON(w, http.StatusOK, s.panel)
}

// panelWire maps the panel to its wire form, resolving source ids to
// titles and links.
type panelWire struct {
	sources map[string]engine.Source
}

func (m *panelWire) refs(ids []string) []sourceRef {
	out := make([]sourceRef, 0, len(ids))
	for _, id := range ids {
		src := m.sources[id]
		out = append(out, sourceRef{ID: id, Title: src.Title, URL: sourceURL(src)})
	}
	return out
}

// serviceProvides says what the service provides at each step of the
// pathway, by step id.
func serviceProvides(kb *engine.Knowledge) map[string][]string {
	return map[string][]string{
		"test": {
			"POST /pgx/check and POST /pgx/batch: a genotype-unknown alert with test_recommended for each gene that matters for the drug when no result for it was given",
			"POST /pgx/batch: summary.genes_to_test names the genes whose result would change advice for a whole medication list",
			fmt.Sprintf("GET /pgx/variants: the %d tracked variants with Indian and global allele frequencies", len(kb.Variants)),
		},
		"interpret": {
			"POST /pgx/check, POST /pgx/batch: variants, zygosity, diplotypes, hla and genes_tested in; the genotype call (diplotype, phenotype, activity score) out",
			fmt.Sprintf("POST /pgx/batch_csv: a lab CSV (%s) interpreted row by row, streaming as NDJSON on request", labcsv.Header),
		},
		"prescribe": {
			"POST /pgx/check: alerts with severity, action and guideline; safer alternatives re-checked against the same genotype; source citations for every fact",
			"GET /pgx/drugs: the drugs covered, with their genes and CPIC levels",
		},
		"review": {
			"POST /pgx/batch: every drug of a medication list against one genotype, ordered by severity, with the drugs that share an actionable gene",
			"indian_context in every result: the state's endemic risks, community notes and traditional-medicine (herb–drug) interactions",
			fmt.Sprintf("audit log: every answer is written before it is sent, hash-chained, kept %d days", AuditRetentionDays),
		},
	}
}

// buildIndiaPanel computes the panel from the knowledge and maps it to
// its wire form.
func buildIndiaPanel(kb *engine.Knowledge) indiaPanelResponse {
	m := &panelWire{sources: make(map[string]engine.Source, len(kb.Sources))}
	for _, src := range kb.Sources {
		m.sources[src.ID] = src
	}
	p := indiapanel.Build(kb)
	provides := serviceProvides(kb)
	out := indiaPanelResponse{
		APIVersion:        APIVersion,
		KnowledgeVersion:  kb.Version.Label,
		GroundingContract: engine.GroundingContract,
		WedgeRule: wedgeRule{Text: indiapanel.Rule, Basis: sourceRef{ID: indiapanel.ATCBasis.ID,
			Title: indiapanel.ATCBasis.Title, URL: sourceURL(indiapanel.ATCBasis)}},
		Wedges:            make([]wedge, 0, len(p.Areas)),
		DrugsWithoutWedge: nonNil(p.DrugsWithoutArea),
	}
	for _, st := range p.Pathway {
		out.Pathway = append(out.Pathway, pathwayStep{Step: st.Step, ID: st.ID, Name: st.Name, What: st.What,
			ServiceProvides: provides[st.ID], Knowledge: st.Knowledge, Sources: m.refs(st.SourceIDs)})
	}
	for _, a := range p.Areas {
		out.Wedges = append(out.Wedges, m.wedge(a))
	}
	out.TraditionalMedicineOverlay = make([]herbOverlay, 0, len(p.Herbs))
	for _, h := range p.Herbs {
		in := h.Interaction
		out.TraditionalMedicineOverlay = append(out.TraditionalMedicineOverlay, herbOverlay{Herb: in.Herb, Botanical: in.Botanical,
			TraditionalNames: in.TraditionalNames, InteractingWith: in.DrugsText, Drugs: nonNil(in.Drugs), Mechanism: in.Mechanism,
			Effect: in.Effect, Severity: in.Severity, EvidenceType: in.Evidence, Notes: in.Notes, Sources: m.refs(h.SourceIDs)})
	}
	out.Counts = map[string]int{
		"wedges":              len(out.Wedges),
		"drugs_placed":        p.DrugsPlaced,
		"drugs_without_wedge": len(out.DrugsWithoutWedge),
		"herb_interactions":   len(out.TraditionalMedicineOverlay),
	}
	return out
}

func atcGroups(gs []indiapanel.ATCGroup) []atcGroup {
	return mapSlice(gs, func(g indiapanel.ATCGroup) atcGroup { return atcGroup(g) })
}

func (m *panelWire) wedge(a indiapanel.Area) wedge {
	w := wedge{ID: a.ID, Name: a.Name, ATCGroups: atcGroups(a.ATCGroups), Genes: make([]wedgeGene, 0, len(a.Genes)),
		Drugs: make([]wedgeDrug, 0, len(a.Drugs)), AlleleFrequencies: make([]wedgeAllele, 0, len(a.Alleles)),
		HLAFrequencies: make([]wedgeHLA, 0, len(a.HLA)), States: make([]wedgeState, 0, len(a.States))}
	for _, f := range a.Focus {
		w.Focus = append(w.Focus, wedgeFocus{Name: f.Name, ATCGroups: atcGroups(f.ATCGroups), Drugs: nonNil(f.Drugs)})
	}
	for _, g := range a.Genes {
		w.Genes = append(w.Genes, wedgeGene{Gene: g.Gene, Drugs: nonNil(g.Drugs)})
	}
	for _, d := range a.Drugs {
		item := wedgeDrug{Name: d.Name, Sensitivity: d.Sensitivity, Guidance: d.Guidance, BestCPICLevel: d.BestCPICLevel,
			ATCCodes: nonNil(d.ATCCodes), Genes: make([]wedgeDrugGene, 0, len(d.Genes)), Sources: m.refs(d.SourceIDs)}
		for _, g := range d.Genes {
			item.Genes = append(item.Genes, wedgeDrugGene(g))
		}
		w.Drugs = append(w.Drugs, item)
	}
	for _, al := range a.Alleles {
		w.AlleleFrequencies = append(w.AlleleFrequencies, newVariantItem(al.Variant, m.refs(al.SourceIDs)))
	}
	for _, h := range a.HLA {
		w.HLAFrequencies = append(w.HLAFrequencies, wedgeHLA{Allele: h.Allele, AFCentralSouthAsian: h.AFCentralSouthAsian,
			Drugs: nonNil(h.Drugs), Sources: m.refs(h.SourceIDs)})
	}
	for _, st := range a.States {
		ws := wedgeState{State: st.State, Type: st.Type, Risks: make([]wedgeRisk, 0, len(st.Risks))}
		for _, r := range st.Risks {
			ws.Risks = append(ws.Risks, wedgeRisk{Risk: r.Risk, Disease: r.Disease, Drugs: nonNil(r.Drugs), Note: r.Note,
				Sources: m.refs(r.SourceIDs)})
		}
		w.States = append(w.States, ws)
	}
	return w
}
