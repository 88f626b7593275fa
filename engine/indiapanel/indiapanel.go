// Package indiapanel computes the India panel (GET /pgx/india_panel) from
// the knowledge alone: the four steps of PGx-guided prescribing with the
// knowledge behind each, the therapeutic areas (defined by WHO ATC groups)
// with their drugs, genes, allele and HLA frequencies and state risks, and
// the traditional-medicine overlay. Every item names its source ids. It is
// pure: the engine root, engine/medlist and the standard library; the wire
// form (source titles and links, the endpoints that serve each step)
// belongs to the REST surface. See docs/batch.md for the rules.
package indiapanel

import (
	"slices"
	"sort"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/medlist"
)

// ATCGroup is an ATC group: a code prefix and its WHO name.
type ATCGroup struct {
	Code string
	Name string
}

// areaDef defines a therapeutic area by ATC groups. Groups are ATC
// second-level therapeutic subgroups (three characters); focus names
// narrower ATC groups within the area that the panel reports on their own.
type areaDef struct {
	id, name string
	groups   []ATCGroup
	focus    []focusDef
}

type focusDef struct {
	name   string
	groups []ATCGroup
}

// ATCBasis is the source of the ATC group codes and names the areas are
// defined by.
var ATCBasis = engine.Source{
	ID:    "who-atc",
	Title: "WHO Anatomical Therapeutic Chemical (ATC) classification, WHO Collaborating Centre for Drug Statistics Methodology",
	URL:   "https://atcddd.fhi.no/atc_ddd_index/",
}

// Rule states how drugs are placed in therapeutic areas.
const Rule = "A drug belongs to a therapeutic area when one of its ATC codes (from the CPIC data) lies in one of the " +
	"area's ATC groups; a drug with several codes may belong to several areas. Only drugs with pharmacogenomic " +
	"guidance that can change a prescription (sensitivity high or moderate) are placed. An area's genes are its " +
	"drugs' genes at CPIC level A, A/B or B and the genes that key an actionable recommendation of its drugs. " +
	"Areas with no such drug are omitted."

// areaDefs are the therapeutic areas of the panel, each defined by WHO ATC
// groups (ATCBasis).
var areaDefs = []areaDef{
	{id: "cardiology", name: "Cardiology", groups: []ATCGroup{
		{"B01", "Antithrombotic agents"}, {"C01", "Cardiac therapy"}, {"C02", "Antihypertensives"},
		{"C03", "Diuretics"}, {"C07", "Beta blocking agents"}, {"C08", "Calcium channel blockers"},
		{"C09", "Agents acting on the renin-angiotensin system"}, {"C10", "Lipid modifying agents"},
	}},
	{id: "oncology", name: "Oncology", groups: []ATCGroup{
		{"L01", "Antineoplastic agents"}, {"L02", "Endocrine therapy"},
	}},
	{id: "psychiatry-neurology", name: "Psychiatry and neurology", groups: []ATCGroup{
		{"N03", "Antiepileptics"}, {"N05", "Psycholeptics"}, {"N06", "Psychoanaleptics"}, {"N07", "Other nervous system drugs"},
	}},
	{id: "infectious-disease", name: "Infectious disease (tuberculosis, leprosy, HIV, malaria and others)", groups: []ATCGroup{
		{"J01", "Antibacterials for systemic use"}, {"J02", "Antimycotics for systemic use"},
		{"J04", "Antimycobacterials"}, {"J05", "Antivirals for systemic use"}, {"P01", "Antiprotozoals"},
	}, focus: []focusDef{
		{name: "tuberculosis", groups: []ATCGroup{{"J04A", "Drugs for treatment of tuberculosis"}}},
		{name: "leprosy", groups: []ATCGroup{{"J04B", "Drugs for treatment of lepra"}}},
		{name: "HIV", groups: []ATCGroup{
			{"J05AE", "Protease inhibitors"}, {"J05AF", "Nucleoside and nucleotide reverse transcriptase inhibitors"},
			{"J05AG", "Non-nucleoside reverse transcriptase inhibitors"}, {"J05AR", "Antivirals for treatment of HIV infections, combinations"},
		}},
		{name: "malaria", groups: []ATCGroup{{"P01B", "Antimalarials"}}},
	}},
	{id: "pain", name: "Pain and inflammation", groups: []ATCGroup{
		{"N02", "Analgesics"}, {"M01", "Anti-inflammatory and antirheumatic products"},
	}},
	{id: "transplant", name: "Transplant and immunosuppression", groups: []ATCGroup{
		{"L04", "Immunosuppressants"},
	}},
	{id: "anaesthesia", name: "Anaesthesia", groups: []ATCGroup{
		{"N01", "Anesthetics"}, {"M03", "Muscle relaxants"},
	}},
	{id: "gastroenterology", name: "Gastroenterology", groups: []ATCGroup{
		{"A02", "Drugs for acid related disorders"}, {"A04", "Antiemetics and antinauseants"},
	}},
	{id: "gout", name: "Gout and hyperuricaemia", groups: []ATCGroup{
		{"M04", "Antigout preparations"},
	}},
	{id: "respiratory", name: "Respiratory", groups: []ATCGroup{
		{"R03", "Drugs for obstructive airway diseases"}, {"R07", "Other respiratory system products"},
	}},
}

// Panel is the India panel.
type Panel struct {
	Pathway []Step
	// Areas are the therapeutic areas that place at least one drug, in
	// the panel's order.
	Areas []Area
	// DrugsPlaced counts the drugs placed in at least one area.
	DrugsPlaced int
	// DrugsWithoutArea are the guided drugs no area places, in knowledge
	// order.
	DrugsWithoutArea []string
	// Herbs are the knowledge's herb–drug interactions, in knowledge order.
	Herbs []Herb
}

// Step is one step of PGx-guided prescribing and the knowledge behind
// it, counted and cited (the data sets, not individual publications).
type Step struct {
	Step           int
	ID, Name, What string
	Knowledge      map[string]int
	SourceIDs      []string
}

// Area is a therapeutic area.
type Area struct {
	ID, Name  string
	ATCGroups []ATCGroup
	// Focus are the narrower groups of the area that place a drug.
	Focus []Focus
	// Genes are the area's genes, by symbol, each with its drugs.
	Genes []AreaGene
	Drugs []AreaDrug
	// Alleles are the tracked variants of the area's genes whose
	// function is not normal.
	Alleles []Allele
	// HLA are the HLA alleles a recommendation of one of the area's drugs
	// is keyed by.
	HLA []HLA
	// States are the states whose endemic risks name one of the drugs.
	States []State
}

// Focus is a narrower group of an area and the area's drugs in it.
type Focus struct {
	Name      string
	ATCGroups []ATCGroup
	Drugs     []string
}

// AreaGene is a gene of an area and the area's drugs it matters for.
type AreaGene struct {
	Gene  string
	Drugs []string
}

// AreaDrug is a drug of an area.
type AreaDrug struct {
	Name, Sensitivity, Guidance, BestCPICLevel string
	// ATCCodes are the drug's codes in the area's groups.
	ATCCodes  []string
	Genes     []DrugGene
	SourceIDs []string
}

// DrugGene is a gene of an area's drug.
type DrugGene struct {
	Gene, CPICLevel, EvidenceLevel, Guideline, GuidelineURL string
	// Actionable is true when a recommendation keyed by the gene changes
	// the prescription (actionability yes or conditional).
	Actionable bool
}

// Allele is a tracked variant cited by the sources of its frequencies.
type Allele struct {
	Variant   engine.TrackedVariant
	SourceIDs []string
}

// HLA is an HLA allele and the area's drugs whose recommendations it
// keys.
type HLA struct {
	// Allele is gene and allele ("HLA-B*15:02").
	Allele string
	// AFCentralSouthAsian is CPIC's Central/South Asian frequency (no
	// India-only figure is in the knowledge).
	AFCentralSouthAsian *float64
	Drugs               []string
	SourceIDs           []string
}

// State is a state with the endemic risks that name an area's drugs.
type State struct {
	State, Type string
	Risks       []Risk
}

// Risk is an endemic risk and the area's drugs it names.
type Risk struct {
	Risk, Disease string
	Drugs         []string
	Note          string
	SourceIDs     []string
}

// Herb is a herb–drug interaction with its sources (sorted).
type Herb struct {
	Interaction engine.HerbInteraction
	SourceIDs   []string
}

// ids merges source id lists into one sorted list without repeats.
func ids(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, id := range l {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Build computes the panel from kb.
func Build(kb *engine.Knowledge) Panel {
	out := Panel{Pathway: pathway(kb)}
	placed := map[string]bool{}
	for _, def := range areaDefs {
		a, ok := area(kb, def)
		if !ok {
			continue
		}
		for _, d := range a.Drugs {
			placed[d.Name] = true
		}
		out.Areas = append(out.Areas, a)
	}
	out.DrugsPlaced = len(placed)
	for _, d := range kb.Drugs {
		if guided(d) && !placed[d.Name] {
			out.DrugsWithoutArea = append(out.DrugsWithoutArea, d.Name)
		}
	}
	out.Herbs = make([]Herb, 0, len(kb.Herbs))
	for _, h := range kb.Herbs {
		out.Herbs = append(out.Herbs, Herb{Interaction: h, SourceIDs: ids(h.SourceIDs)})
	}
	return out
}

// guided reports whether a drug has guidance that can change a
// prescription.
func guided(d engine.Drug) bool { return d.Sensitivity == "high" || d.Sensitivity == "moderate" }

// actionableLevels are the CPIC levels whose pairs make a gene part of an
// area.
var actionableLevels = map[string]bool{"A": true, "A/B": true, "B": true}

func matchATC(codes []string, groups []ATCGroup) []string {
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

func area(kb *engine.Knowledge, def areaDef) (Area, bool) {
	a := Area{ID: def.id, Name: def.name, ATCGroups: def.groups}
	geneDrugs := map[string][]string{}
	var geneOrder []string
	drugNames := map[string]bool{}
	for _, d := range kb.Drugs {
		if !guided(d) {
			continue
		}
		codes := matchATC(d.ATCCodes, def.groups)
		if len(codes) == 0 {
			continue
		}
		drugNames[d.Name] = true
		item := AreaDrug{Name: d.Name, Sensitivity: d.Sensitivity, Guidance: d.Guidance, BestCPICLevel: d.BestCPICLevel, ATCCodes: codes}
		sources := [][]string{d.SourceIDs}
		actionable := medlist.ActionableGenes(kb, d.Name)
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
			item.Genes = append(item.Genes, DrugGene{Gene: p.Gene, CPICLevel: p.CPICLevel, EvidenceLevel: p.EvidenceLevel,
				Guideline: p.GuidelineName, GuidelineURL: p.GuidelineURL, Actionable: act})
			sources = append(sources, p.SourceIDs)
			addGene(p.Gene)
		}
		var extra []string
		for g := range actionable {
			if !slices.ContainsFunc(item.Genes, func(x DrugGene) bool { return x.Gene == g }) {
				extra = append(extra, g)
			}
		}
		sort.Strings(extra)
		for _, g := range extra {
			ag := actionable[g]
			item.Genes = append(item.Genes, DrugGene{Gene: g, Guideline: ag.Name, GuidelineURL: ag.URL, Actionable: true})
			sources = append(sources, ag.SourceIDs)
			addGene(g)
		}
		item.SourceIDs = ids(sources...)
		a.Drugs = append(a.Drugs, item)
	}
	if len(a.Drugs) == 0 {
		return a, false
	}
	for _, f := range def.focus {
		af := Focus{Name: f.name, ATCGroups: f.groups}
		for _, d := range a.Drugs {
			if len(matchATC(d.ATCCodes, f.groups)) > 0 {
				af.Drugs = append(af.Drugs, d.Name)
			}
		}
		if len(af.Drugs) > 0 {
			a.Focus = append(a.Focus, af)
		}
	}
	sort.Strings(geneOrder)
	for _, g := range geneOrder {
		a.Genes = append(a.Genes, AreaGene{Gene: g, Drugs: geneDrugs[g]})
	}
	a.Alleles = alleles(kb, geneOrder)
	a.HLA = hla(kb, geneOrder, drugNames)
	a.States = states(kb, drugNames)
	return a, true
}

// variantGene reports whether a tracked variant belongs to gene: its gene
// is the symbol, or it is a tag of one of the gene's alleles ("HCP5
// (HLA-B*57:01 tag)" belongs to HLA-B).
func variantGene(v engine.TrackedVariant, gene string) bool {
	return v.Gene == gene || strings.Contains(v.Gene, "("+gene+"*")
}

// alleles lists the tracked variants of the genes whose function is not
// normal (the alleles that change a phenotype), with both frequencies.
func alleles(kb *engine.Knowledge, genes []string) []Allele {
	var out []Allele
	for _, v := range kb.Variants {
		if v.Function == "Normal function" || !slices.ContainsFunc(genes, func(g string) bool { return variantGene(v, g) }) {
			continue
		}
		sources := ids(v.AFIndiaSourceIDs, v.AFGlobalSourceIDs)
		if len(v.AFIndiaSourceIDs) == 0 && len(v.AFGlobalSourceIDs) == 0 {
			sources = ids(v.SourceIDs)
		}
		out = append(out, Allele{Variant: v, SourceIDs: sources})
	}
	return out
}

// hla lists the HLA alleles of the knowledge that a recommendation of one
// of the drugs is keyed by ("*15:02 positive" for HLA-B).
func hla(kb *engine.Knowledge, genes []string, drugs map[string]bool) []HLA {
	var names []string
	for d := range drugs {
		names = append(names, d)
	}
	sort.Strings(names)
	var out []HLA
	for _, h := range kb.HLAAlleles {
		if !slices.Contains(genes, h.Gene) {
			continue
		}
		item := HLA{Allele: h.Gene + h.Allele, AFCentralSouthAsian: h.AFCentralSouthAsian}
		for _, d := range names {
			for _, rec := range kb.RecommendationsFor(d) {
				if strings.HasPrefix(rec.Lookup[h.Gene], h.Allele+" ") && !slices.Contains(item.Drugs, d) {
					item.Drugs = append(item.Drugs, d)
				}
			}
		}
		if len(item.Drugs) == 0 {
			continue
		}
		item.SourceIDs = ids(h.SourceIDs)
		out = append(out, item)
	}
	return out
}

// states lists the states whose endemic risks name one of the drugs.
func states(kb *engine.Knowledge, drugs map[string]bool) []State {
	var out []State
	for _, st := range kb.States {
		s := State{State: st.Name, Type: st.Type}
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
			s.Risks = append(s.Risks, Risk{Risk: r.Risk, Disease: r.Disease, Drugs: hit, Note: r.Note, SourceIDs: ids(r.SourceIDs)})
		}
		if len(s.Risks) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// datasetIDs collects the source ids of rows, leaving out individual
// publications (pmid-*), which the areas cite item by item.
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

// pathway describes PGx-guided prescribing in four steps, with the
// knowledge behind each (counted, cited).
func pathway(kb *engine.Knowledge) []Step {
	var (
		variantIDs, geneIDs, recIDs, contextIDs []string
		withAF, alleles, rules, cpic, dpwg      int
		risks, methods                          int
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
	return []Step{
		{
			Step: 1, ID: "test", Name: "Test",
			What:      "Decide whom to genotype and for which genes, before or at the first prescription of a drug with pharmacogenomic guidance.",
			Knowledge: map[string]int{"tracked_variants": len(kb.Variants), "tracked_variants_with_af_india": withAF, "hla_alleles": len(kb.HLAAlleles)},
			SourceIDs: ids(variantIDs),
		},
		{
			Step: 2, ID: "interpret", Name: "Interpret",
			What: "Turn the lab's result (rsIDs, star-allele diplotypes, HLA allele status) into a CPIC diplotype and phenotype per gene.",
			Knowledge: map[string]int{"genes": len(kb.Genes), "genes_with_phenotype_method": methods, "alleles": alleles,
				"phenotype_rules": rules, "rsids_understood": len(kb.RsIDs)},
			SourceIDs: ids(geneIDs),
		},
		{
			Step: 3, ID: "prescribe", Name: "Prescribe",
			What:      "Apply the guideline recommendation for the patient's phenotype at order entry.",
			Knowledge: map[string]int{"drugs": len(kb.Drugs), "recommendations_cpic": cpic, "recommendations_dpwg": dpwg},
			SourceIDs: ids(recIDs),
		},
		{
			Step: 4, ID: "review", Name: "Review",
			What:      "Review the whole medication list and the patient's context when a result arrives or a drug is added, and keep the record.",
			Knowledge: map[string]int{"states": len(kb.States), "state_risks": risks, "communities": len(kb.Communities), "herb_interactions": len(kb.Herbs)},
			SourceIDs: ids(contextIDs),
		},
	}
}
