package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/population"
)

const (
	icd10   = "http://hl7.org/fhir/sid/icd-10"
	icd10cm = "http://hl7.org/fhir/sid/icd-10-cm"
	pcs     = "http://www.cms.gov/Medicare/Coding/ICD10"
	sct     = "http://snomed.info/sct"
)

var allClopidogrel = []string{population.PopACSPCI, population.PopNonACS, population.PopNeuro}

// TestSelectPopulation is the table of the population selector: codes,
// negated free text, ambiguity and the other context rules.
func TestSelectPopulation(t *testing.T) {
	k := kb(t)
	c := func(system, code string) engine.Coding { return engine.Coding{System: system, Code: code} }
	tests := []struct {
		name    string
		drug    string
		ctx     population.PopulationContext
		want    []string
		decided bool
		basis   string
	}{
		// Codes.
		{"WHO ICD-10 NSTEMI", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10, "I21.4")}}, []string{population.PopACSPCI}, true, "codes"},
		{"ICD-10-CM without the dot", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I214")}}, []string{population.PopACSPCI}, true, "codes"},
		{"ICD-10-CM code under a category header", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I21.A1")}}, []string{population.PopACSPCI}, true, "codes"},
		{"system by name", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c("ICD-10-CM", "I25.10")}}, []string{population.PopNonACS}, true, "codes"},
		{"stable CAD", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I25.10")}}, []string{population.PopNonACS}, true, "codes"},
		{"PCI procedure (ICD-10-PCS)", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(pcs, "0270346")}}, []string{population.PopACSPCI}, true, "codes"},
		{"stable CAD plus PCI: ACS/PCI wins", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I25.10"), c(pcs, "0270346")}}, []string{population.PopACSPCI}, true, "codes"},
		{"ischaemic stroke (ICD-10-CM)", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I63.9")}}, []string{population.PopNeuro}, true, "codes"},
		{"SNOMED acute MI", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(sct, "10273003")}}, []string{population.PopACSPCI}, true, "codes"},
		{"codes beat text", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I25.10")}, Text: "ACS with stent"}, []string{population.PopNonACS}, true, "codes"},
		// Ambiguity.
		{"stroke and stable CAD: undecided", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I63.9"), c(icd10cm, "I25.10")}}, allClopidogrel, false, ""},
		{"unknown code falls back to text", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "E11.9")}, Text: "stroke"}, []string{population.PopNeuro}, true, "text"},
		{"unknown system, no text", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c("http://loinc.org", "1234-5")}}, allClopidogrel, false, ""},
		{"nothing", "clopidogrel", population.PopulationContext{}, allClopidogrel, false, ""},
		// Text with negation.
		{"stable coronary disease, no PCI", "clopidogrel", population.PopulationContext{Text: "stable coronary disease, no PCI"}, []string{population.PopNonACS}, true, "text"},
		{"CAD without stent", "clopidogrel", population.PopulationContext{Text: "coronary artery disease without stent"}, []string{population.PopNonACS}, true, "text"},
		{"ACS ruled out", "clopidogrel", population.PopulationContext{Text: "chest pain, ACS ruled out; stable angina"}, []string{population.PopNonACS}, true, "text"},
		{"non-ACS non-PCI", "clopidogrel", population.PopulationContext{Text: "non-ACS non-PCI"}, []string{population.PopNonACS}, true, "text"},
		{"ACS with PCI", "clopidogrel", population.PopulationContext{Text: "Acute coronary syndrome with PCI"}, []string{population.PopACSPCI}, true, "text"},
		{"post-PCI", "clopidogrel", population.PopulationContext{Text: "status post PCI, drug-eluting stent"}, []string{population.PopACSPCI}, true, "text"},
		{"no history of stroke, PAD", "clopidogrel", population.PopulationContext{Text: "peripheral arterial disease; no history of stroke"}, []string{population.PopNonACS}, true, "text"},
		{"TIA", "clopidogrel", population.PopulationContext{Text: "TIA last week"}, []string{population.PopNeuro}, true, "text"},
		{"stroke and coronary disease: undecided", "clopidogrel", population.PopulationContext{Text: "stroke and coronary disease"}, allClopidogrel, false, ""},
		{"a word inside a word is not a term", "clopidogrel", population.PopulationContext{Text: "padding"}, allClopidogrel, false, ""},
		// Age and months on drug.
		{"adult", "voriconazole", population.PopulationContext{AgeYears: f(40)}, []string{"adults"}, true, "age"},
		{"child", "voriconazole", population.PopulationContext{AgeYears: f(9)}, []string{"pediatrics"}, true, "age"},
		{"age unknown", "voriconazole", population.PopulationContext{}, []string{"adults", "pediatrics"}, false, ""},
		{"carbamazepine naive", "carbamazepine", population.PopulationContext{MonthsOnDrug: f(0)}, []string{"CBZ naive"}, true, "months on drug"},
		{"carbamazepine >3 months", "carbamazepine", population.PopulationContext{MonthsOnDrug: f(6)}, []string{"CBZ use >3mos"}, true, "months on drug"},
		{"carbamazepine 2 months: undecided", "carbamazepine", population.PopulationContext{MonthsOnDrug: f(2)}, []string{"CBZ naive", "CBZ use >3mos", "CBZ-no alternatives"}, false, ""},
		{"phenytoin >3 months", "phenytoin", population.PopulationContext{MonthsOnDrug: f(12)}, []string{"PHT use >3mos"}, true, "months on drug"},
		// One population only.
		{"one population", "codeine", population.PopulationContext{Text: "stroke"}, []string{"general"}, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := k.Populations().SelectPopulation(tc.drug, tc.ctx)
			if diff := cmp.Diff(tc.want, ch.Populations); diff != "" {
				t.Errorf("populations (-want +got):\n%s\nreason %q notes %q", diff, ch.Reason, ch.Notes)
			}
			if ch.Decided != tc.decided || ch.Basis != tc.basis {
				t.Errorf("decided %v basis %q, want %v %q (reason %q)", ch.Decided, ch.Basis, tc.decided, tc.basis, ch.Reason)
			}
			if len(tc.want) > 1 && ch.Decided {
				t.Error("several populations but decided")
			}
		})
	}
}

// TestPopulationFromCodesInAnswer: a clopidogrel check for a poor
// metabolizer with stable coronary disease coded and "no PCI" written is
// answered for the non-ACS non-PCI population and says why.
func TestPopulationFromCodesInAnswer(t *testing.T) {
	req := engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": "*2/*2"},
		IndicationCodes: []engine.Coding{{System: icd10cm, Code: "I25.10"}}, Indication: "stable coronary disease, no PCI"}
	res := check(t, req)
	a := confirmed(res)
	if len(a) != 1 || a[0].Population != population.PopNonACS {
		t.Fatalf("confirmed alerts %+v, want one for %s", a, population.PopNonACS)
	}
	if !slices.ContainsFunc(a[0].Assumptions, func(s string) bool { return strings.Contains(s, "coded indication") && strings.Contains(s, "I25.10") }) {
		t.Errorf("assumptions %q do not name the code", a[0].Assumptions)
	}
	if !res.DataCompleteness.IndicationProvided {
		t.Error("indication_provided false with codes given")
	}
	// Undecided: every population, most severe, said so.
	req.IndicationCodes = []engine.Coding{{System: icd10cm, Code: "I63.9"}, {System: icd10cm, Code: "I25.10"}}
	req.Indication = ""
	res = check(t, req)
	a = confirmed(res)
	if len(a) != 1 || !slices.ContainsFunc(a[0].Assumptions, func(s string) bool { return strings.Contains(s, "every one was evaluated") }) {
		t.Errorf("undecided population not stated: %+v", a)
	}
	if _, err := kb(t).Evaluate(engine.Request{Drug: "clopidogrel", IndicationCodes: []engine.Coding{{System: icd10}}}); err == nil || !strings.Contains(err.Error(), "indication_codes[0].code") {
		t.Errorf("a coding without a code: err %v", err)
	}
}

// TestEthnicityWholeNames: an ethnicity matches whole community names,
// never a place named in a community's label.
func TestEthnicityWholeNames(t *testing.T) {
	tests := []struct {
		ethnicity string
		want      []string // communities named in community_notes for the drug
		drug      string
	}{
		{"Tamil", []string{}, "succinylcholine"},
		{"Tamil Nadu", []string{}, "succinylcholine"},
		{"Coimbatore", []string{}, "succinylcholine"},
		{"Arya Vysya", []string{"Arya Vysya (Coimbatore, Tamil Nadu)", "Vysya (Arya Vysya)"}, "succinylcholine"},
		{"Vysya", []string{"Vysya (Arya Vysya)"}, "succinylcholine"},
		{"Tamil", []string{"Tamilians"}, "clopidogrel"},
		{"Tamilian", []string{"Tamilians"}, "clopidogrel"},
		{"Gond", []string{"Tribal groups (Sahara, Kutia Kandha, Kuda, Gond, Oraon)"}, "hydroxyurea"},
	}
	for _, tc := range tests {
		res := check(t, engine.Request{Drug: tc.drug, Ethnicity: tc.ethnicity})
		got := []string{}
		for _, n := range res.IndianContext.CommunityNotes {
			if !slices.Contains(got, n.Community) {
				got = append(got, n.Community)
			}
		}
		slices.Sort(got)
		if tc.drug == "hydroxyurea" && !res.DrugRecognised {
			continue // not a knowledge drug: no notes at all
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q with %s: communities (-want +got):\n%s", tc.ethnicity, tc.drug, diff)
		}
		for _, a := range res.Alerts {
			if a.Category == engine.CategoryPopulationRisk && tc.ethnicity == "Tamil" && tc.drug == "succinylcholine" {
				t.Errorf("Tamil patient given succinylcholine gets a community alert: %s", a.Message)
			}
		}
	}
}
