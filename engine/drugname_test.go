package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestReadDrugEveryDrug reads every drug of the knowledge as a generic
// name, in capitals with a strength, dose form and route, with a salt
// (the data's own salt row when it has one, else a salt word), and as one
// of its brands wherever the data has a brand.
func TestReadDrugEveryDrug(t *testing.T) {
	k := kb(t)
	saltOf := map[string]string{}
	brandOf := map[string]string{}
	for _, n := range k.DrugNames {
		if len(n.Drugs) != 1 {
			continue
		}
		d := n.Drugs[0]
		switch n.Kind {
		case engine.NameKindSalt:
			if _, ok := saltOf[d]; !ok {
				saltOf[d] = n.Name
			}
		case engine.NameKindBrand:
			if len(n.Flags) == 0 && (n.Stem == "" || len(n.Stem) > 3) && (brandOf[d] == "" || slices.Contains(n.Markets, "IN") || slices.Contains(n.Markets, "US")) {
				brandOf[d] = n.Name
			}
		}
	}
	withBrand, withSalt := 0, 0
	for _, d := range k.Drugs {
		cases := map[string]string{
			"generic": d.Name,
			"dose":    strings.ToUpper(d.Name[:1]) + d.Name[1:] + " 10 MG Oral Tablet",
			"salt":    d.Name + " hydrochloride",
		}
		if s, ok := saltOf[d.Name]; ok {
			cases["salt"] = s
			withSalt++
		}
		if b, ok := brandOf[d.Name]; ok {
			cases["brand"] = b
			cases["brand dose"] = b + " 5 mg tablet"
			withBrand++
		}
		for kind, in := range cases {
			r := k.Names().ReadDrug(in)
			if r.Status != engine.DrugStatusRecognised || !slices.Contains(r.Drugs, d.Name) {
				t.Errorf("%s %s: ReadDrug(%q) = %s %v (via %s %q), want %s", d.Name, kind, in, r.Status, r.Drugs, r.Via, r.Matched, d.Name)
			}
			if kind == "generic" || kind == "dose" {
				if diff := cmp.Diff([]string{d.Name}, r.Drugs); diff != "" {
					t.Errorf("%s %s: ReadDrug(%q) drugs (-want +got):\n%s", d.Name, kind, in, diff)
				}
			}
		}
	}
	t.Logf("%d drugs; %d with a salt row in the data; %d with a trusted brand in the data", len(k.Drugs), withSalt, withBrand)
	if withBrand < 90 {
		t.Errorf("only %d drugs have a brand; the data pack has brands for 101", withBrand)
	}
}

// TestReadDrugNotations is the table of the notations the issue names and
// the ones the reader refuses, with why.
func TestReadDrugNotations(t *testing.T) {
	k := kb(t)
	tests := []struct {
		in     string
		status string
		drugs  []string
		via    string
	}{
		{"clopidogrel", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"  CLOPIDOGREL ", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"clopidogrel 75 mg", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"Clopidogrel 75 MG Oral Tablet", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"clopidogrel 75mg tab", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"clopidogrel bisulfate", engine.DrugStatusRecognised, []string{"clopidogrel"}, "salt"},
		{"Clopidogrel Bisulphate 75 mg", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name"},
		{"Plavix", engine.DrugStatusRecognised, []string{"clopidogrel"}, "brand"},
		{"PLAVIX 75 MG", engine.DrugStatusRecognised, []string{"clopidogrel"}, "brand"},
		{"Clopilet 75", engine.DrugStatusRecognised, []string{"clopidogrel"}, "brand"},
		{"Deplatt 75 Tablet", engine.DrugStatusRecognised, []string{"clopidogrel"}, "brand"},
		{"Tegretol", engine.DrugStatusRecognised, []string{"carbamazepine"}, "brand"},
		{"Tegrital 200", engine.DrugStatusRecognised, []string{"carbamazepine"}, "brand"},
		{"Azoran", engine.DrugStatusRecognised, []string{"azathioprine"}, "brand"},
		{"Eptoin", engine.DrugStatusRecognised, []string{"phenytoin"}, "brand"},
		{"5-FU", engine.DrugStatusRecognised, []string{"fluorouracil"}, "abbreviation"},
		{"5FU", engine.DrugStatusRecognised, []string{"fluorouracil"}, "abbreviation"},
		{"6-MP", engine.DrugStatusRecognised, []string{"mercaptopurine"}, "abbreviation"},
		{"6MP", engine.DrugStatusRecognised, []string{"mercaptopurine"}, "abbreviation"},
		{"suxamethonium", engine.DrugStatusRecognised, []string{"succinylcholine"}, "generic-synonym"},
		{"rxnorm:32968", engine.DrugStatusRecognised, []string{"clopidogrel"}, "RxNorm"},
		{"http://www.nlm.nih.gov/research/umls/rxnorm|32968", engine.DrugStatusRecognised, []string{"clopidogrel"}, "RxNorm"},
		{"ATC B01AC04", engine.DrugStatusRecognised, []string{"clopidogrel"}, "ATC"},
		{"B01AC04", engine.DrugStatusRecognised, []string{"clopidogrel"}, "ATC"},
		{"Clopidogrel 75 MG Oral Tablet [Plavix]", engine.DrugStatusRecognised, []string{"clopidogrel"}, "name in text"},
		{"Astin CV 10 capsule", engine.DrugStatusRecognised, []string{"atorvastatin", "clopidogrel"}, "combination"},
		{"Abamune L 600 mg/300 mg Tablet", engine.DrugStatusPartial, []string{"abacavir"}, "combination"},
		{"clopidogrel + atorvastatin", engine.DrugStatusRecognised, []string{"clopidogrel", "atorvastatin"}, "ingredient list"},
		{"clopidogrel 75 mg / aspirin 75 mg", engine.DrugStatusRecognised, []string{"clopidogrel", "aspirin"}, "ingredient list"},
		{"clopidogrel and asprin", engine.DrugStatusPartial, []string{"clopidogrel"}, "ingredient list"},
		{"Depakote", engine.DrugStatusRecognised, []string{"divalproex sodium", "valproic acid"}, "brand"},
		{"Horizon", engine.DrugStatusRecognised, []string{"amitriptyline"}, "brand"},
		// Refused: short names that may mean something else.
		{"ctx", engine.DrugStatusNeedsConfirmation, []string{}, "abbreviation"},
		{"MP", engine.DrugStatusNeedsConfirmation, []string{}, "abbreviation"},
		{"PAN 40", engine.DrugStatusNeedsConfirmation, []string{}, "brand"},
		// Not recognised.
		{"Plavixx", engine.DrugStatusNotRecognised, []string{}, ""},
		{"clopidogrl", engine.DrugStatusNotRecognised, []string{}, ""},
		{"paracetamol", engine.DrugStatusNotRecognised, []string{}, ""},
		{"rxnorm:999999999", engine.DrugStatusNotRecognised, []string{}, "RxNorm"},
		{"", engine.DrugStatusNotRecognised, []string{}, ""},
	}
	for _, tc := range tests {
		r := k.Names().ReadDrug(tc.in)
		got := struct {
			Status string
			Drugs  []string
			Via    string
		}{r.Status, r.Drugs, r.Via}
		want := struct {
			Status string
			Drugs  []string
			Via    string
		}{tc.status, tc.drugs, tc.via}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadDrug(%q) (-want +got):\n%s", tc.in, diff)
		}
		if r.Status == engine.DrugStatusNeedsConfirmation && len(r.DidYouMean) == 0 {
			t.Errorf("ReadDrug(%q): needs confirmation without did_you_mean", tc.in)
		}
	}
	for in, want := range map[string]string{"Plavixx": "clopidogrel", "clopidogrl": "clopidogrel", "warfrin": "warfarin", "Tegretoll": "carbamazepine"} {
		if r := k.Names().ReadDrug(in); !slices.Contains(r.DidYouMean, want) {
			t.Errorf("ReadDrug(%q).DidYouMean = %v, want %s among them", in, r.DidYouMean, want)
		}
	}
}

// TestEveryDataNameReads reads every trusted name of drug_names.json and
// requires it to name its drugs; a name that reads otherwise must be one
// that a stronger entry (a drug name, salt or synonym) also claims.
func TestEveryDataNameReads(t *testing.T) {
	k := kb(t)
	var other []string
	n := 0
	for _, dn := range k.DrugNames {
		if len(dn.Flags) > 0 {
			continue
		}
		n++
		r := k.Names().ReadDrug(dn.Name)
		if r.Status == engine.DrugStatusNotRecognised || r.Status == engine.DrugStatusNeedsConfirmation {
			t.Errorf("data name %q (%s of %v) reads as %s", dn.Name, dn.Kind, dn.Drugs, r.Status)
			continue
		}
		ok := true
		for _, d := range dn.Drugs {
			ok = ok && slices.Contains(r.Drugs, d)
		}
		if !ok {
			other = append(other, dn.Name+" → "+strings.Join(r.Drugs, "+")+" (data: "+strings.Join(dn.Drugs, "+")+", via "+r.Via+")")
		}
	}
	t.Logf("%d trusted data names read; %d read as another drug by a stronger entry:\n%s", n, len(other), strings.Join(other, "\n"))
	if len(other) > n/50 {
		t.Errorf("%d of %d data names read as another drug", len(other), n)
	}
}

func TestDrugAnswerNeverSilent(t *testing.T) {
	for _, in := range []string{"xyzzy", "Plavixx", "ctx"} {
		res := check(t, engine.Request{Drug: in, Variants: []string{"rs4244285"}, Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Hom}})
		if res.DrugRecognised || res.OverallSeverity == engine.SeverityNone || len(res.Alerts) != 1 || res.Alerts[0].Category != engine.CategoryNotInterpreted {
			t.Errorf("%q: recognised=%v overall=%s alerts=%+v: an unrecognised drug must carry a visible not-interpreted alert", in, res.DrugRecognised, res.OverallSeverity, res.Alerts)
		}
		if res.DrugReading == nil || res.DrugReading.Status == engine.DrugStatusRecognised {
			t.Errorf("%q: drug_reading %+v", in, res.DrugReading)
		}
	}
}

func TestCombinationEachIngredientChecked(t *testing.T) {
	// CYP2C19 *2/*2 and SLCO1B1 *5/*5: clopidogrel and atorvastatin both
	// have actionable findings.
	req := engine.Request{Drug: "Astin CV 10 capsule", Diplotypes: map[string]string{"CYP2C19": "*2/*2", "SLCO1B1": "*5/*5"}}
	res := check(t, req)
	if res.DrugNormalised != "atorvastatin + clopidogrel" || !res.DrugRecognised {
		t.Fatalf("drug_normalised %q recognised %v", res.DrugNormalised, res.DrugRecognised)
	}
	drugs := map[string]bool{}
	for _, a := range res.Alerts {
		if a.Category == engine.CategoryConfirmed {
			drugs[a.Drug] = true
		}
		if a.Drug == "" {
			t.Errorf("alert without its drug in a combination answer: %+v", a)
		}
	}
	if !drugs["clopidogrel"] || !drugs["atorvastatin"] {
		t.Errorf("confirmed alerts for %v, want clopidogrel and atorvastatin", drugs)
	}
	if res.OverallSeverity != engine.SeverityHigh || res.Alerts[0].Severity != engine.SeverityHigh {
		t.Errorf("overall %s, first alert %s", res.OverallSeverity, res.Alerts[0].Severity)
	}
	ids := map[string]bool{}
	for _, a := range res.Alerts {
		if ids[a.ID] || a.ID == "" {
			t.Errorf("alert id %q empty or repeated", a.ID)
		}
		ids[a.ID] = true
	}
	for _, c := range res.SourceCitations {
		switch c.Target.Kind {
		case engine.CitesAlert, engine.CitesAlertFrequencyIndia, engine.CitesAlertFrequencyGlobal:
			if !ids[c.Target.Alert] {
				t.Errorf("citation %+v names no alert of the answer", c.Target)
			}
		case engine.CitesAlternative:
			if c.Target.Index >= len(res.SaferAlternatives) {
				t.Errorf("citation %+v points outside the alternatives", c.Target)
			}
		case engine.CitesPopulationFrequency:
			if c.Target.Index >= len(res.IndianContext.PopulationFrequencies) {
				t.Errorf("citation %+v points outside the population frequencies", c.Target)
			}
		}
	}
}
