package engine_test

import (
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
)

// TestCitationsSpecValues checks every drug of the knowledge, with and
// without context: a citation's evidence_level is one of the spec's values
// or absent, and no url is a pseudo-URL of the knowledge.
func TestCitationsSpecValues(t *testing.T) {
	k := kb(t)
	for _, d := range k.Drugs {
		for _, req := range []engine.Request{
			{Drug: d.Name},
			{Drug: d.Name, State: "Mizoram", Ethnicity: "Tamil", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}},
			{Drug: d.Name, State: "Kerala", Ethnicity: "Arya Vysya", Variants: []string{"rs9923231", "rs1057910"}},
		} {
			res := check(t, req)
			for _, c := range res.SourceCitations {
				if c.EvidenceLevel != "" && !evaluate.SpecEvidenceLevel(c.EvidenceLevel) {
					t.Errorf("%s: citation %+v evidence_level %q", d.Name, c.Target, c.EvidenceLevel)
				}
				if c.URL == "" || strings.HasPrefix(c.URL, "pgxsafety-knowledge:") {
					t.Errorf("%s: citation %+v url %q", d.Name, c.Target, c.URL)
				}
			}
		}
	}
	res := check(t, engine.Request{Drug: "primaquine"})
	found := false
	for _, c := range res.SourceCitations {
		if strings.Contains(c.Source, "ClinPGx level of evidence 3") && c.EvidenceLevel == "" {
			found = true
		}
	}
	if !found {
		t.Errorf("primaquine's G6PD citation should name ClinPGx level 3 in its source and carry no evidence_level: %+v", res.SourceCitations)
	}
}

// TestPreTestFrequencyFromPanel: the VKORC1 pre-test alert uses the Indian
// figure GET /pgx/variants lists for rs9923231.
func TestPreTestFrequencyFromPanel(t *testing.T) {
	k := kb(t)
	tv, ok := k.TrackedVariant("rs9923231")
	if !ok || tv.AFIndia == nil {
		t.Fatal("rs9923231 has no Indian figure in the panel")
	}
	res := check(t, engine.Request{Drug: "warfarin"})
	for _, a := range res.Alerts {
		if a.Gene != "VKORC1" || a.Category != engine.CategoryUnknown {
			continue
		}
		if strings.Contains(a.Message, "no Indian frequency") || !strings.Contains(strings.Join(a.Assumptions, " "), "rs9923231") {
			t.Errorf("VKORC1 pre-test alert does not use rs9923231 af_india %.4f: %q %q", *tv.AFIndia, a.Message, a.Assumptions)
		}
		return
	}
	t.Error("no VKORC1 pre-test alert for warfarin")
}

// TestPopulationRiskAlerts: a population-risk alert carries a gene of the
// drug or none, and says why the risk matters for this drug.
func TestPopulationRiskAlerts(t *testing.T) {
	k := kb(t)
	n := 0
	for _, st := range k.States {
		for _, d := range []string{"primaquine", "dapsone", "succinylcholine", "clopidogrel", "isoniazid"} {
			res := check(t, engine.Request{Drug: d, State: st.Name, Ethnicity: "Arya Vysya"})
			for _, a := range res.Alerts {
				if a.Category != engine.CategoryPopulationRisk {
					continue
				}
				n++
				if !strings.Contains(a.Message, "Why it matters for "+d) {
					t.Errorf("%s/%s: %q does not say why it matters", st.Name, d, a.Message)
				}
				if a.Gene != "" {
					if _, ok := k.Gene(a.Gene); !ok {
						t.Errorf("%s/%s: gene %q is not a knowledge gene", st.Name, d, a.Gene)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no population-risk alert at all")
	}
}

// TestRecognisedOnlyWhenSent: state_recognised and ethnicity_recognised
// appear only when a state or an ethnicity was sent.
func TestRecognisedOnlyWhenSent(t *testing.T) {
	res := check(t, engine.Request{Drug: "clopidogrel"})
	if ic := res.IndianContext; ic.StateRecognised != nil || ic.EthnicityRecognised != nil {
		t.Errorf("nothing sent, but state_recognised %v ethnicity_recognised %v", ic.StateRecognised, ic.EthnicityRecognised)
	}
	res = check(t, engine.Request{Drug: "clopidogrel", State: "Atlantis", Ethnicity: "Tamil"})
	ic := res.IndianContext
	if ic.StateRecognised == nil || *ic.StateRecognised || ic.EthnicityRecognised == nil || !*ic.EthnicityRecognised {
		t.Errorf("state_recognised %v ethnicity_recognised %v", ic.StateRecognised, ic.EthnicityRecognised)
	}
}
