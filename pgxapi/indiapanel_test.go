package pgxapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

type panelSource struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

type panelBody struct {
	APIVersion        string `json:"api_version"`
	KnowledgeVersion  string `json:"knowledge_version"`
	GroundingContract string `json:"grounding_contract"`
	Pathway           []struct {
		Step            int            `json:"step"`
		ID              string         `json:"id"`
		ServiceProvides []string       `json:"service_provides"`
		Knowledge       map[string]int `json:"knowledge"`
		Sources         []panelSource  `json:"sources"`
	} `json:"pathway"`
	WedgeRule struct {
		Text  string      `json:"text"`
		Basis panelSource `json:"basis"`
	} `json:"wedge_rule"`
	Wedges []struct {
		ID        string `json:"id"`
		ATCGroups []struct {
			Code string `json:"code"`
		} `json:"atc_groups"`
		Focus []struct {
			Name  string   `json:"name"`
			Drugs []string `json:"drugs"`
		} `json:"focus"`
		Genes []struct {
			Gene  string   `json:"gene"`
			Drugs []string `json:"drugs"`
		} `json:"genes"`
		Drugs []struct {
			Name        string   `json:"name"`
			Sensitivity string   `json:"sensitivity"`
			ATCCodes    []string `json:"atc_codes"`
			Genes       []struct {
				Gene string `json:"gene"`
			} `json:"genes"`
			Sources []panelSource `json:"sources"`
		} `json:"drugs"`
		AlleleFrequencies []struct {
			RsID     string        `json:"rsid"`
			Gene     string        `json:"gene"`
			AFIndia  *float64      `json:"af_india"`
			AFGlobal *float64      `json:"af_global"`
			Sources  []panelSource `json:"sources"`
		} `json:"allele_frequencies"`
		HLAFrequencies []struct {
			Allele  string        `json:"allele"`
			Drugs   []string      `json:"drugs"`
			Sources []panelSource `json:"sources"`
		} `json:"hla_frequencies"`
		States []struct {
			State string `json:"state"`
			Risks []struct {
				Risk    string        `json:"risk"`
				Disease string        `json:"disease"`
				Drugs   []string      `json:"drugs"`
				Sources []panelSource `json:"sources"`
			} `json:"risks"`
		} `json:"states"`
	} `json:"wedges"`
	DrugsWithoutWedge []string `json:"drugs_without_wedge"`
	Overlay           []struct {
		Herb         string        `json:"herb"`
		Botanical    string        `json:"botanical"`
		Drugs        []string      `json:"drugs"`
		EvidenceType string        `json:"evidence_type"`
		Sources      []panelSource `json:"sources"`
	} `json:"traditional_medicine_overlay"`
}

func TestIndiaPanel(t *testing.T) {
	ts := newServer(t)
	rec := ts.do(t, http.MethodGet, "/pgx/india_panel", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	p := decode[panelBody](t, rec)
	if p.APIVersion != "1.1.0" || p.KnowledgeVersion != kb.Version.Label || p.GroundingContract != engine.GroundingContract {
		t.Errorf("envelope %q %q %q", p.APIVersion, p.KnowledgeVersion, p.GroundingContract)
	}

	cited := 0
	checkSources := func(what string, srcs []panelSource) {
		t.Helper()
		if len(srcs) == 0 {
			t.Errorf("%s cites no source", what)
		}
		for _, s := range srcs {
			cited++
			src, ok := kb.Source(s.ID)
			if !ok || s.Title == "" || s.Title != src.Title {
				t.Errorf("%s: source %+v does not resolve to a knowledge source with a title", what, s)
				continue
			}
			// The link is the source's URL or PMID; a few sources of the
			// knowledge have neither (their title says where they are).
			url := src.URL
			if url == "" && src.PMID != "" {
				url = "PMID:" + src.PMID
			}
			if s.URL != url {
				t.Errorf("%s: source %s link %q, knowledge %q", what, s.ID, s.URL, url)
			}
		}
	}
	known := func(what, name string) {
		t.Helper()
		if !kb.Known(name) {
			t.Errorf("%s names %q, which is not a knowledge row", what, name)
		}
	}

	// The pathway: four steps, counts computed from the knowledge.
	var ids []string
	for _, s := range p.Pathway {
		ids = append(ids, s.ID)
		checkSources("pathway "+s.ID, s.Sources)
		if len(s.ServiceProvides) == 0 || len(s.Knowledge) == 0 {
			t.Errorf("pathway %s is empty", s.ID)
		}
	}
	if !cmp.Equal(ids, []string{"test", "interpret", "prescribe", "review"}) {
		t.Errorf("pathway steps %v", ids)
	}
	if got := p.Pathway[0].Knowledge["tracked_variants"]; got != len(kb.Variants) {
		t.Errorf("tracked_variants = %d, knowledge %d", got, len(kb.Variants))
	}
	if got := p.Pathway[2].Knowledge["drugs"]; got != len(kb.Drugs) {
		t.Errorf("drugs = %d, knowledge %d", got, len(kb.Drugs))
	}
	if p.WedgeRule.Text == "" || p.WedgeRule.Basis.URL == "" || !strings.Contains(p.WedgeRule.Basis.Title, "ATC") {
		t.Errorf("wedge_rule = %+v", p.WedgeRule)
	}

	placed := map[string]bool{}
	wedges := map[string]bool{}
	for _, w := range p.Wedges {
		wedges[w.ID] = true
		if len(w.Drugs) == 0 || len(w.Genes) == 0 {
			t.Errorf("wedge %s has no drugs or genes (an area without knowledge rows must be omitted)", w.ID)
		}
		wedgeDrugs := map[string]bool{}
		drugGenes := map[string]bool{}
		for _, d := range w.Drugs {
			kd, ok := kb.Drug(d.Name)
			if !ok || kd.Name != d.Name || kd.Sensitivity != d.Sensitivity || (d.Sensitivity != "high" && d.Sensitivity != "moderate") {
				t.Errorf("wedge %s: drug %s is not a guided knowledge drug", w.ID, d.Name)
				continue
			}
			placed[d.Name], wedgeDrugs[d.Name] = true, true
			// The ATC rule: every code shown is the drug's and lies in
			// one of the wedge's groups.
			for _, c := range d.ATCCodes {
				inGroup := slices.ContainsFunc(w.ATCGroups, func(g struct {
					Code string `json:"code"`
				}) bool {
					return strings.HasPrefix(c, g.Code)
				})
				if !slices.Contains(kd.ATCCodes, c) || !inGroup {
					t.Errorf("wedge %s: drug %s shows ATC code %s outside the rule", w.ID, d.Name, c)
				}
			}
			if len(d.ATCCodes) == 0 {
				t.Errorf("wedge %s: drug %s has no ATC code placing it", w.ID, d.Name)
			}
			checkSources("drug "+d.Name, d.Sources)
			for _, g := range d.Genes {
				drugGenes[g.Gene] = true
				known("drug "+d.Name, g.Gene)
			}
		}
		for _, g := range w.Genes {
			known("wedge "+w.ID, g.Gene)
			if !drugGenes[g.Gene] {
				t.Errorf("wedge %s: gene %s is no drug's gene", w.ID, g.Gene)
			}
		}
		for _, f := range w.Focus {
			for _, d := range f.Drugs {
				if !wedgeDrugs[d] {
					t.Errorf("wedge %s focus %s: %s is not a drug of the wedge", w.ID, f.Name, d)
				}
			}
		}
		for _, a := range w.AlleleFrequencies {
			v, ok := kb.TrackedVariant(a.RsID)
			if !ok || v.Gene != a.Gene || !cmp.Equal(v.AFIndia, a.AFIndia) || !cmp.Equal(v.AFGlobal, a.AFGlobal) {
				t.Errorf("wedge %s: allele %+v is not the knowledge row", w.ID, a)
			}
			checkSources("allele "+a.RsID, a.Sources)
		}
		for _, h := range w.HLAFrequencies {
			known("wedge "+w.ID, h.Allele)
			checkSources("HLA "+h.Allele, h.Sources)
			for _, d := range h.Drugs {
				if !wedgeDrugs[d] {
					t.Errorf("wedge %s: HLA %s names %s, not a drug of the wedge", w.ID, h.Allele, d)
				}
			}
		}
		for _, s := range w.States {
			st, ok := kb.State(s.State)
			if !ok || st.Name != s.State {
				t.Errorf("wedge %s: state %q is not a knowledge state", w.ID, s.State)
				continue
			}
			for _, r := range s.Risks {
				known("state risk", r.Disease)
				if !slices.ContainsFunc(st.Risks, func(kr engine.StateRisk) bool { return kr.Risk == r.Risk }) {
					t.Errorf("wedge %s: risk %q is not a risk of %s", w.ID, r.Risk, s.State)
				}
				for _, d := range r.Drugs {
					if !wedgeDrugs[d] {
						t.Errorf("wedge %s: risk %q names %s, not a drug of the wedge", w.ID, r.Risk, d)
					}
				}
				checkSources("risk "+r.Risk, r.Sources)
			}
		}
	}
	for _, id := range []string{"cardiology", "oncology", "psychiatry-neurology", "infectious-disease", "pain", "transplant", "anaesthesia"} {
		if !wedges[id] {
			t.Errorf("wedge %s missing", id)
		}
	}

	// Every guided drug is placed in a wedge or listed as not placed.
	for _, d := range kb.Drugs {
		guided := d.Sensitivity == "high" || d.Sensitivity == "moderate"
		listed := slices.Contains(p.DrugsWithoutWedge, d.Name)
		if guided != (placed[d.Name] || listed) || (placed[d.Name] && listed) {
			t.Errorf("drug %s (sensitivity %s): placed %v, listed without wedge %v", d.Name, d.Sensitivity, placed[d.Name], listed)
		}
	}

	// The overlay is every herb–drug row of the knowledge, cited.
	if len(p.Overlay) != len(kb.Herbs) {
		t.Errorf("%d overlay rows, knowledge %d", len(p.Overlay), len(kb.Herbs))
	}
	for i, h := range p.Overlay {
		known("overlay", h.Herb)
		known("overlay", h.Botanical)
		for _, d := range h.Drugs {
			known("overlay "+h.Herb, d)
		}
		if h.Herb != kb.Herbs[i].Herb || h.EvidenceType != kb.Herbs[i].Evidence {
			t.Errorf("overlay[%d] = %s / %q, knowledge %s / %q", i, h.Herb, h.EvidenceType, kb.Herbs[i].Herb, kb.Herbs[i].Evidence)
		}
		checkSources("herb "+h.Herb, h.Sources)
	}
	if cited < 500 {
		t.Errorf("only %d citations checked", cited)
	}
}

// TestIndiaPanelSpotChecks pins facts a reader would look for.
func TestIndiaPanelSpotChecks(t *testing.T) {
	ts := newServer(t)
	p := decode[panelBody](t, ts.do(t, http.MethodGet, "/pgx/india_panel", "", nil))
	find := func(id string) int {
		for i, w := range p.Wedges {
			if w.ID == id {
				return i
			}
		}
		t.Fatalf("no wedge %s", id)
		return -1
	}
	card := p.Wedges[find("cardiology")]
	hasDrugGene := func(drug, gene string) bool {
		for _, d := range card.Drugs {
			if d.Name == drug {
				return slices.ContainsFunc(d.Genes, func(g struct {
					Gene string `json:"gene"`
				}) bool {
					return g.Gene == gene
				})
			}
		}
		return false
	}
	if !hasDrugGene("clopidogrel", "CYP2C19") || !hasDrugGene("warfarin", "CYP2C9") {
		t.Error("cardiology lacks clopidogrel/CYP2C19 or warfarin/CYP2C9")
	}
	if !slices.ContainsFunc(card.AlleleFrequencies, func(a struct {
		RsID     string        `json:"rsid"`
		Gene     string        `json:"gene"`
		AFIndia  *float64      `json:"af_india"`
		AFGlobal *float64      `json:"af_global"`
		Sources  []panelSource `json:"sources"`
	}) bool {
		return a.RsID == "rs4244285" && a.AFIndia != nil && a.AFGlobal != nil
	}) {
		t.Error("cardiology lacks CYP2C19*2 (rs4244285) with Indian and global frequencies")
	}
	inf := p.Wedges[find("infectious-disease")]
	focus := map[string][]string{}
	for _, f := range inf.Focus {
		focus[f.Name] = f.Drugs
	}
	if !slices.Contains(focus["HIV"], "abacavir") || !slices.Contains(focus["malaria"], "primaquine") || !slices.Contains(focus["leprosy"], "dapsone") {
		t.Errorf("infectious-disease focus = %v", focus)
	}
	if !slices.ContainsFunc(inf.HLAFrequencies, func(h struct {
		Allele  string        `json:"allele"`
		Drugs   []string      `json:"drugs"`
		Sources []panelSource `json:"sources"`
	}) bool {
		return h.Allele == "HLA-B*57:01" && slices.Contains(h.Drugs, "abacavir")
	}) {
		t.Error("infectious-disease lacks HLA-B*57:01 for abacavir")
	}
	malariaStates := 0
	for _, s := range inf.States {
		for _, r := range s.Risks {
			if r.Disease == "malaria" && slices.Contains(r.Drugs, "primaquine") {
				malariaStates++
				break
			}
		}
	}
	if malariaStates == 0 {
		t.Error("no state's malaria risk is linked to primaquine")
	}
}

// TestIndiaPanelGolden pins the whole GET /pgx/india_panel body.
func TestIndiaPanelGolden(t *testing.T) {
	ts := newServer(t)
	rec := ts.do(t, http.MethodGet, "/pgx/india_panel", "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	checkGolden(t, "india_panel.json", canonicalGolden(t, rec.Body.Bytes()))
}
