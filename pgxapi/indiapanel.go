package pgxapi

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// GET /pgx/india_panel: the flagship panel, computed from the knowledge
// alone when the server starts (the knowledge does not change while it
// runs). Every item names its sources, resolved to titles and links. See
// docs/batch.md for the rules.

// atcGroup is an ATC group: a code prefix and its WHO name.
type atcGroup struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// wedgeDef defines a therapeutic area by ATC groups. Groups are ATC
// second-level therapeutic subgroups (three characters); Focus names
// narrower ATC groups within the area that the panel reports on their own.
type wedgeDef struct {
	id, name string
	groups   []atcGroup
	focus    []focusDef
}

type focusDef struct {
	name   string
	groups []atcGroup
}

// ATCBasis is the source of the ATC group codes and names the wedges are
// defined by.
var ATCBasis = sourceRef{
	ID:    "who-atc",
	Title: "WHO Anatomical Therapeutic Chemical (ATC) classification, WHO Collaborating Centre for Drug Statistics Methodology",
	URL:   "https://atcddd.fhi.no/atc_ddd_index/",
}

// WedgeRule states how drugs are placed in therapeutic areas.
const WedgeRule = "A drug belongs to a therapeutic area when one of its ATC codes (from the CPIC data) lies in one of the " +
	"area's ATC groups; a drug with several codes may belong to several areas. Only drugs with pharmacogenomic " +
	"guidance that can change a prescription (sensitivity high or moderate) are placed. An area's genes are its " +
	"drugs' genes at CPIC level A, A/B or B and the genes that key an actionable recommendation of its drugs. " +
	"Areas with no such drug are omitted."

// wedgeDefs are the therapeutic areas of the panel, each defined by WHO ATC
// groups (ATCBasis).
var wedgeDefs = []wedgeDef{
	{id: "cardiology", name: "Cardiology", groups: []atcGroup{
		{"B01", "Antithrombotic agents"}, {"C01", "Cardiac therapy"}, {"C02", "Antihypertensives"},
		{"C03", "Diuretics"}, {"C07", "Beta blocking agents"}, {"C08", "Calcium channel blockers"},
		{"C09", "Agents acting on the renin-angiotensin system"}, {"C10", "Lipid modifying agents"},
	}},
	{id: "oncology", name: "Oncology", groups: []atcGroup{
		{"L01", "Antineoplastic agents"}, {"L02", "Endocrine therapy"},
	}},
	{id: "psychiatry-neurology", name: "Psychiatry and neurology", groups: []atcGroup{
		{"N03", "Antiepileptics"}, {"N05", "Psycholeptics"}, {"N06", "Psychoanaleptics"}, {"N07", "Other nervous system drugs"},
	}},
	{id: "infectious-disease", name: "Infectious disease (tuberculosis, leprosy, HIV, malaria and others)", groups: []atcGroup{
		{"J01", "Antibacterials for systemic use"}, {"J02", "Antimycotics for systemic use"},
		{"J04", "Antimycobacterials"}, {"J05", "Antivirals for systemic use"}, {"P01", "Antiprotozoals"},
	}, focus: []focusDef{
		{name: "tuberculosis", groups: []atcGroup{{"J04A", "Drugs for treatment of tuberculosis"}}},
		{name: "leprosy", groups: []atcGroup{{"J04B", "Drugs for treatment of lepra"}}},
		{name: "HIV", groups: []atcGroup{
			{"J05AE", "Protease inhibitors"}, {"J05AF", "Nucleoside and nucleotide reverse transcriptase inhibitors"},
			{"J05AG", "Non-nucleoside reverse transcriptase inhibitors"}, {"J05AR", "Antivirals for treatment of HIV infections, combinations"},
		}},
		{name: "malaria", groups: []atcGroup{{"P01B", "Antimalarials"}}},
	}},
	{id: "pain", name: "Pain and inflammation", groups: []atcGroup{
		{"N02", "Analgesics"}, {"M01", "Anti-inflammatory and antirheumatic products"},
	}},
	{id: "transplant", name: "Transplant and immunosuppression", groups: []atcGroup{
		{"L04", "Immunosuppressants"},
	}},
	{id: "anaesthesia", name: "Anaesthesia", groups: []atcGroup{
		{"N01", "Anesthetics"}, {"M03", "Muscle relaxants"},
	}},
	{id: "gastroenterology", name: "Gastroenterology", groups: []atcGroup{
		{"A02", "Drugs for acid related disorders"}, {"A04", "Antiemetics and antinauseants"},
	}},
	{id: "gout", name: "Gout and hyperuricaemia", groups: []atcGroup{
		{"M04", "Antigout preparations"},
	}},
	{id: "respiratory", name: "Respiratory", groups: []atcGroup{
		{"R03", "Drugs for obstructive airway diseases"}, {"R07", "Other respiratory system products"},
	}},
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

// panelBuilder resolves source ids while the panel is built.
type panelBuilder struct {
	kb      *engine.Knowledge
	sources map[string]engine.Source
}

func (b *panelBuilder) refs(idLists ...[]string) []sourceRef {
	var ids []string
	for _, l := range idLists {
		for _, id := range l {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	out := make([]sourceRef, 0, len(ids))
	for _, id := range ids {
		src := b.sources[id]
		out = append(out, sourceRef{ID: id, Title: src.Title, URL: sourceURL(src)})
	}
	return out
}

// buildIndiaPanel computes the panel from the knowledge.
func buildIndiaPanel(kb *engine.Knowledge) indiaPanelResponse {
	b := &panelBuilder{kb: kb, sources: make(map[string]engine.Source, len(kb.Sources))}
	for _, src := range kb.Sources {
		b.sources[src.ID] = src
	}
	out := indiaPanelResponse{
		APIVersion:        APIVersion,
		KnowledgeVersion:  kb.Version.Label,
		GroundingContract: engine.GroundingContract,
		WedgeRule:         wedgeRule{Text: WedgeRule, Basis: ATCBasis},
		Wedges:            []wedge{},
		DrugsWithoutWedge: []string{},
	}
	out.Pathway = b.pathway()
	placed := map[string]bool{}
	for _, def := range wedgeDefs {
		w, ok := b.wedge(def)
		if !ok {
			continue
		}
		for _, d := range w.Drugs {
			placed[d.Name] = true
		}
		out.Wedges = append(out.Wedges, w)
	}
	for _, d := range kb.Drugs {
		if guided(d) && !placed[d.Name] {
			out.DrugsWithoutWedge = append(out.DrugsWithoutWedge, d.Name)
		}
	}
	out.TraditionalMedicineOverlay = b.herbs()
	out.Counts = map[string]int{
		"wedges":              len(out.Wedges),
		"drugs_placed":        len(placed),
		"drugs_without_wedge": len(out.DrugsWithoutWedge),
		"herb_interactions":   len(out.TraditionalMedicineOverlay),
	}
	return out
}

// guided reports whether a drug has guidance that can change a
// prescription.
func guided(d engine.Drug) bool { return d.Sensitivity == "high" || d.Sensitivity == "moderate" }

// actionableLevels are the CPIC levels whose pairs make a gene part of an
// area.
var actionableLevels = map[string]bool{"A": true, "A/B": true, "B": true}

func matchATC(codes []string, groups []atcGroup) []string {
	var out []string
	for _, c := range codes {
		for _, g := range groups {
			if strings.HasPrefix(c, g.Code) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func (b *panelBuilder) wedge(def wedgeDef) (wedge, bool) {
	w := wedge{ID: def.id, Name: def.name, ATCGroups: def.groups, Genes: []wedgeGene{}, Drugs: []wedgeDrug{},
		AlleleFrequencies: []wedgeAllele{}, HLAFrequencies: []wedgeHLA{}, States: []wedgeState{}}
	geneDrugs := map[string][]string{}
	var geneOrder []string
	drugNames := map[string]bool{}
	for _, d := range b.kb.Drugs {
		if !guided(d) {
			continue
		}
		codes := matchATC(d.ATCCodes, def.groups)
		if len(codes) == 0 {
			continue
		}
		drugNames[d.Name] = true
		item := wedgeDrug{Name: d.Name, Sensitivity: d.Sensitivity, Guidance: d.Guidance, BestCPICLevel: d.BestCPICLevel,
			ATCCodes: codes, Genes: []wedgeDrugGene{}}
		ids := [][]string{d.SourceIDs}
		actionable := actionableGenes(b.kb, d.Name)
		addGene := func(g string) {
			if _, ok := geneDrugs[g]; !ok {
				geneOrder = append(geneOrder, g)
			}
			if !slices.Contains(geneDrugs[g], d.Name) {
				geneDrugs[g] = append(geneDrugs[g], d.Name)
			}
		}
		for _, p := range d.Pairs {
			_, act := actionable[p.Gene]
			if !actionableLevels[p.CPICLevel] && !act {
				continue
			}
			item.Genes = append(item.Genes, wedgeDrugGene{Gene: p.Gene, CPICLevel: p.CPICLevel, EvidenceLevel: p.EvidenceLevel,
				Guideline: p.GuidelineName, GuidelineURL: p.GuidelineURL, Actionable: act})
			ids = append(ids, p.SourceIDs)
			addGene(p.Gene)
		}
		var extra []string
		for g := range actionable {
			if !slices.ContainsFunc(item.Genes, func(x wedgeDrugGene) bool { return x.Gene == g }) {
				extra = append(extra, g)
			}
		}
		sort.Strings(extra)
		for _, g := range extra {
			ag := actionable[g]
			item.Genes = append(item.Genes, wedgeDrugGene{Gene: g, Guideline: ag.name, GuidelineURL: ag.url, Actionable: true})
			ids = append(ids, ag.sourceIDs)
			addGene(g)
		}
		item.Sources = b.refs(ids...)
		w.Drugs = append(w.Drugs, item)
	}
	if len(w.Drugs) == 0 {
		return w, false
	}
	for _, f := range def.focus {
		wf := wedgeFocus{Name: f.name, ATCGroups: f.groups, Drugs: []string{}}
		for _, d := range w.Drugs {
			if len(matchATC(d.ATCCodes, f.groups)) > 0 {
				wf.Drugs = append(wf.Drugs, d.Name)
			}
		}
		if len(wf.Drugs) > 0 {
			w.Focus = append(w.Focus, wf)
		}
	}
	sort.Strings(geneOrder)
	for _, g := range geneOrder {
		w.Genes = append(w.Genes, wedgeGene{Gene: g, Drugs: geneDrugs[g]})
	}
	w.AlleleFrequencies = b.alleles(geneOrder)
	w.HLAFrequencies = b.hla(geneOrder, drugNames)
	w.States = b.states(drugNames)
	return w, true
}

// variantGene reports whether a tracked variant belongs to gene: its gene
// is the symbol, or it is a tag of one of the gene's alleles ("HCP5
// (HLA-B*57:01 tag)" belongs to HLA-B).
func variantGene(v engine.TrackedVariant, gene string) bool {
	return v.Gene == gene || strings.Contains(v.Gene, "("+gene+"*")
}

// alleles lists the tracked variants of the genes whose function is not
// normal (the alleles that change a phenotype), with both frequencies.
func (b *panelBuilder) alleles(genes []string) []wedgeAllele {
	out := []wedgeAllele{}
	for _, v := range b.kb.Variants {
		if v.Function == "Normal function" || !slices.ContainsFunc(genes, func(g string) bool { return variantGene(v, g) }) {
			continue
		}
		ids := [][]string{v.AFIndiaSourceIDs, v.AFGlobalSourceIDs}
		if len(v.AFIndiaSourceIDs) == 0 && len(v.AFGlobalSourceIDs) == 0 {
			ids = [][]string{v.SourceIDs}
		}
		out = append(out, newVariantItem(v, b.refs(ids...)))
	}
	return out
}

// hla lists the HLA alleles of the knowledge that a recommendation of one
// of the drugs is keyed by ("*15:02 positive" for HLA-B).
func (b *panelBuilder) hla(genes []string, drugs map[string]bool) []wedgeHLA {
	out := []wedgeHLA{}
	for _, h := range b.kb.HLAAlleles {
		if !slices.Contains(genes, h.Gene) {
			continue
		}
		item := wedgeHLA{Allele: h.Gene + h.Allele, AFCentralSouthAsian: h.AFCentralSouthAsian, Drugs: []string{}}
		var names []string
		for d := range drugs {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			for _, rec := range b.kb.RecommendationsFor(d) {
				if strings.HasPrefix(rec.Lookup[h.Gene], h.Allele+" ") && !slices.Contains(item.Drugs, d) {
					item.Drugs = append(item.Drugs, d)
				}
			}
		}
		if len(item.Drugs) == 0 {
			continue
		}
		item.Sources = b.refs(h.SourceIDs)
		out = append(out, item)
	}
	return out
}

// states lists the states whose endemic risks name one of the drugs.
func (b *panelBuilder) states(drugs map[string]bool) []wedgeState {
	out := []wedgeState{}
	for _, st := range b.kb.States {
		ws := wedgeState{State: st.Name, Type: st.Type, Risks: []wedgeRisk{}}
		for _, r := range st.Risks {
			var hit []string
			for _, d := range r.Drugs {
				if drugs[d] && !slices.Contains(hit, d) {
					hit = append(hit, d)
				}
			}
			if len(hit) == 0 {
				continue
			}
			ws.Risks = append(ws.Risks, wedgeRisk{Risk: r.Risk, Disease: r.Disease, Drugs: hit, Note: r.Note, Sources: b.refs(r.SourceIDs)})
		}
		if len(ws.Risks) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

func (b *panelBuilder) herbs() []herbOverlay {
	out := make([]herbOverlay, 0, len(b.kb.Herbs))
	for _, h := range b.kb.Herbs {
		out = append(out, herbOverlay{Herb: h.Herb, Botanical: h.Botanical, TraditionalNames: h.TraditionalNames,
			InteractingWith: h.DrugsText, Drugs: nonNil(h.Drugs), Mechanism: h.Mechanism, Effect: h.Effect,
			Severity: h.Severity, EvidenceType: h.Evidence, Notes: h.Notes, Sources: b.refs(h.SourceIDs)})
	}
	return out
}

// datasetIDs collects the source ids of rows, leaving out individual
// publications (pmid-*), which the wedges cite item by item.
func datasetIDs(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, id := range l {
			if !strings.HasPrefix(id, "pmid-") && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// pathway describes PGx-guided prescribing in four steps, with what the
// service provides at each and the knowledge behind it (counted, cited).
func (b *panelBuilder) pathway() []pathwayStep {
	kb := b.kb
	var (
		variantIDs, geneIDs, recIDs, contextIDs []string
		withAF, alleles, rules, cpic, dpwg      int
		risks                                   int
	)
	for _, v := range kb.Variants {
		variantIDs = datasetIDs(variantIDs, v.SourceIDs)
		if v.AFIndia != nil {
			withAF++
		}
	}
	for _, h := range kb.HLAAlleles {
		variantIDs = datasetIDs(variantIDs, h.SourceIDs)
	}
	methods := 0
	for _, g := range kb.Genes {
		geneIDs = datasetIDs(geneIDs, g.SourceIDs)
		alleles += len(g.Alleles)
		rules += len(g.Rules)
		if g.Method != "" {
			methods++
		}
	}
	for _, r := range kb.Recommendations {
		recIDs = datasetIDs(recIDs, r.SourceIDs)
		switch r.Source {
		case "CPIC":
			cpic++
		case "DPWG":
			dpwg++
		}
	}
	for _, d := range kb.Drugs {
		recIDs = datasetIDs(recIDs, d.SourceIDs)
	}
	for _, st := range kb.States {
		for _, r := range st.Risks {
			risks++
			contextIDs = datasetIDs(contextIDs, r.SourceIDs)
		}
	}
	for _, c := range kb.Communities {
		contextIDs = datasetIDs(contextIDs, c.SourceIDs)
	}
	for _, h := range kb.Herbs {
		contextIDs = datasetIDs(contextIDs, h.SourceIDs)
	}
	return []pathwayStep{
		{
			Step: 1, ID: "test", Name: "Test",
			What: "Decide whom to genotype and for which genes, before or at the first prescription of a drug with pharmacogenomic guidance.",
			ServiceProvides: []string{
				"POST /pgx/check and POST /pgx/batch: a genotype-unknown alert with test_recommended for each gene that matters for the drug when no result for it was given",
				"POST /pgx/batch: summary.genes_to_test names the genes whose result would change advice for a whole medication list",
				fmt.Sprintf("GET /pgx/variants: the %d tracked variants with Indian and global allele frequencies", len(kb.Variants)),
			},
			Knowledge: map[string]int{"tracked_variants": len(kb.Variants), "tracked_variants_with_af_india": withAF, "hla_alleles": len(kb.HLAAlleles)},
			Sources:   b.refs(variantIDs),
		},
		{
			Step: 2, ID: "interpret", Name: "Interpret",
			What: "Turn the lab's result (rsIDs, star-allele diplotypes, HLA allele status) into a CPIC diplotype and phenotype per gene.",
			ServiceProvides: []string{
				"POST /pgx/check, POST /pgx/batch: variants, zygosity, diplotypes, hla and genes_tested in; the genotype call (diplotype, phenotype, activity score) out",
				fmt.Sprintf("POST /pgx/batch_csv: a lab CSV (%s) interpreted row by row, streaming as NDJSON on request", labcsv.Header),
			},
			Knowledge: map[string]int{"genes": len(kb.Genes), "genes_with_phenotype_method": methods, "alleles": alleles,
				"phenotype_rules": rules, "rsids_understood": len(kb.RsIDs)},
			Sources: b.refs(geneIDs),
		},
		{
			Step: 3, ID: "prescribe", Name: "Prescribe",
			What: "Apply the guideline recommendation for the patient's phenotype at order entry.",
			ServiceProvides: []string{
				"POST /pgx/check: alerts with severity, action and guideline; safer alternatives re-checked against the same genotype; source citations for every fact",
				"GET /pgx/drugs: the drugs covered, with their genes and CPIC levels",
			},
			Knowledge: map[string]int{"drugs": len(kb.Drugs), "recommendations_cpic": cpic, "recommendations_dpwg": dpwg},
			Sources:   b.refs(recIDs),
		},
		{
			Step: 4, ID: "review", Name: "Review",
			What: "Review the whole medication list and the patient's context when a result arrives or a drug is added, and keep the record.",
			ServiceProvides: []string{
				"POST /pgx/batch: every drug of a medication list against one genotype, ordered by severity, with the drugs that share an actionable gene",
				"indian_context in every result: the state's endemic risks, community notes and traditional-medicine (herb–drug) interactions",
				fmt.Sprintf("audit log: every answer is written before it is sent, hash-chained, kept %d days", AuditRetentionDays),
			},
			Knowledge: map[string]int{"states": len(kb.States), "state_risks": risks, "communities": len(kb.Communities), "herb_interactions": len(kb.Herbs)},
			Sources:   b.refs(contextIDs),
		},
	}
}
