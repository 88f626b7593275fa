package engine_test

import (
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestGrounding walks the responses for every covered drug under several
// genotypes and checks that each gene, drug, allele, herb, disease and
// state named in a structured field is a row of the knowledge.
func TestGrounding(t *testing.T) {
	k := kb(t)
	genotypes := []engine.Request{
		{},
		{State: "Orissa", Ethnicity: "Tamil", Indication: "PCI"},
		{Variants: []string{"rs4244285", "rs12769205", "rs3892097", "rs1057910", "rs4149056", "rs116855232", "rs3918290", "rs5030868", "rs1800460", "rs9923231", "rs2108622", "rs999999999"},
			Zygosity:    map[string]engine.Zygosity{"rs4244285": "hom", "rs12769205": "hom", "rs3892097": "hom"},
			HLA:         map[string]string{"HLA-B*15:02": "positive", "HLA-B*57:01": "positive", "HLA-B*58:01": "positive", "HLA-A*31:01": "positive"},
			GenesTested: []string{"CYP2C19", "CYP2D6", "G6PD"},
			State:       "Mizoram", Ethnicity: "Vysya", Patient: &engine.Patient{Sex: "male", AgeYears: f(40), MonthsOnDrug: f(0)}},
		{Diplotypes: map[string]string{"CYP2D6": "*1/*1x2", "CYP2C9": "*2/*3", "TPMT": "*1/*3C", "UGT1A1": "*28/*28", "CYP3A5": "*3/*3"},
			State: "Gujarat", Ethnicity: "Parsi", Patient: &engine.Patient{Sex: "female", AgeYears: f(8)}},
	}
	checked := 0
	for _, d := range k.Drugs {
		for _, g := range genotypes {
			req := g
			req.Drug = d.Name
			res, err := k.Evaluate(req)
			if err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			for _, name := range namedEntities(res) {
				checked++
				if !k.Known(name) {
					t.Errorf("%s: response names %q, which is not a knowledge row", d.Name, name)
				}
			}
			if res.GroundingContract != engine.GroundingContract {
				t.Errorf("grounding_contract = %q", res.GroundingContract)
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d names checked", checked)
	}
}

// namedEntities lists the entity names in a result's structured fields.
func namedEntities(res engine.Result) []string {
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	if res.DrugRecognised {
		add(res.DrugNormalised)
	}
	add(res.DidYouMean...)
	calls := append([]engine.GenotypeCall{}, res.Genotype...)
	for _, a := range res.Alerts {
		add(a.Gene, a.Variant, a.StarAllele)
		add(a.Alternatives...)
		calls = append(calls, a.Genotype...)
	}
	for _, c := range calls {
		add(c.Gene)
		if strings.HasPrefix(c.Gene, "HLA-") {
			add(c.Gene + c.Diplotype)
			continue
		}
		for _, al := range strings.Split(c.Diplotype, "/") {
			add(al)
		}
	}
	for _, a := range res.SaferAlternatives {
		add(a.Name)
	}
	ic := res.IndianContext
	add(ic.StateNormalised)
	for _, r := range ic.EndemicRisks {
		add(r.Disease)
		add(r.Drugs...)
	}
	for _, p := range ic.PopulationFrequencies {
		add(p.Gene, p.Variant)
	}
	for _, c := range ic.CommunityNotes {
		add(c.Community)
	}
	for _, h := range ic.TraditionalMedicine {
		add(h.Herb, h.Botanical)
	}
	return out
}
