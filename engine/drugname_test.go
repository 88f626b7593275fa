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
		if dn.Kind == engine.NameKindRegimen && len(dn.Drugs) == 0 {
			// A regimen of drugs the knowledge does not cover (HRZE):
			// read as its expansion, nothing checked.
			if r.Status != engine.DrugStatusNotRecognised || r.Via != engine.NameKindRegimen || !slices.Equal(r.Ingredients, dn.Ingredients) || len(r.Drugs) != 0 {
				t.Errorf("regimen %q of no covered drug reads as %s via %s %v %v, want not-recognised via regimen with ingredients %v", dn.Name, r.Status, r.Via, r.Drugs, r.Ingredients, dn.Ingredients)
			}
			continue
		}
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

// TestReadRegimens is the table of regimen abbreviations (HIV, TB,
// chemotherapy; knowledge/internal/gen/curated/regimens.csv, each row
// citing its page): each reads as its ingredients, the covered ones are
// checked and the others named as not checked; an abbreviation that also
// names another drug is not guessed.
func TestReadRegimens(t *testing.T) {
	k := kb(t)
	type reading struct {
		Status       string
		Via          string
		Drugs        []string
		Ingredients  []string
		Unrecognised []string
		DidYouMean   []string
	}
	tests := []struct {
		in   string
		want reading
	}{
		// The probe of issue 21: atazanavir boosted with ritonavir, not atorvastatin.
		{"ATV/r 300/100", reading{engine.DrugStatusPartial, "regimen", []string{"atazanavir"}, []string{"atazanavir", "ritonavir"}, []string{"ritonavir"}, nil}},
		{"ATV/r", reading{engine.DrugStatusPartial, "regimen", []string{"atazanavir"}, []string{"atazanavir", "ritonavir"}, []string{"ritonavir"}, nil}},
		{"atv/r 300 mg/100 mg tablet", reading{engine.DrugStatusPartial, "regimen", []string{"atazanavir"}, []string{"atazanavir", "ritonavir"}, []string{"ritonavir"}, nil}},
		{"LPV/r", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"lopinavir", "ritonavir"}, []string{"lopinavir", "ritonavir"}, nil}},
		{"DRV/r", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"darunavir", "ritonavir"}, []string{"darunavir", "ritonavir"}, nil}},
		{"EFV", reading{engine.DrugStatusRecognised, "regimen", []string{"efavirenz"}, []string{"efavirenz"}, nil, nil}},
		{"EFV 600 mg", reading{engine.DrugStatusRecognised, "regimen", []string{"efavirenz"}, []string{"efavirenz"}, nil, nil}},
		{"ABC", reading{engine.DrugStatusRecognised, "regimen", []string{"abacavir"}, []string{"abacavir"}, nil, nil}},
		{"3TC", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"lamivudine"}, []string{"lamivudine"}, nil}},
		{"AZT", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"zidovudine"}, []string{"zidovudine"}, nil}},
		{"ABC/3TC", reading{engine.DrugStatusPartial, "regimen", []string{"abacavir"}, []string{"abacavir", "lamivudine"}, []string{"lamivudine"}, nil}},
		{"ABC/DTG/3TC", reading{engine.DrugStatusPartial, "regimen", []string{"abacavir"}, []string{"abacavir", "dolutegravir", "lamivudine"}, []string{"dolutegravir", "lamivudine"}, nil}},
		{"FOLFOX", reading{engine.DrugStatusPartial, "regimen", []string{"fluorouracil"}, []string{"leucovorin", "fluorouracil", "oxaliplatin"}, []string{"leucovorin", "oxaliplatin"}, nil}},
		{"FOLFIRI", reading{engine.DrugStatusPartial, "regimen", []string{"fluorouracil", "irinotecan"}, []string{"irinotecan", "leucovorin", "fluorouracil"}, []string{"leucovorin"}, nil}},
		{"FOLFIRINOX", reading{engine.DrugStatusPartial, "regimen", []string{"fluorouracil", "irinotecan"}, []string{"leucovorin", "fluorouracil", "irinotecan", "oxaliplatin"}, []string{"leucovorin", "oxaliplatin"}, nil}},
		{"CAPOX", reading{engine.DrugStatusPartial, "regimen", []string{"capecitabine"}, []string{"capecitabine", "oxaliplatin"}, []string{"oxaliplatin"}, nil}},
		{"XELOX", reading{engine.DrugStatusPartial, "regimen", []string{"capecitabine"}, []string{"capecitabine", "oxaliplatin"}, []string{"oxaliplatin"}, nil}},
		{"HRZE", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"isoniazid", "rifampicin", "pyrazinamide", "ethambutol"}, []string{"isoniazid", "rifampicin", "pyrazinamide", "ethambutol"}, nil}},
		{"RIPE", reading{engine.DrugStatusNotRecognised, "regimen", []string{}, []string{"rifampin", "isoniazid", "pyrazinamide", "ethambutol"}, []string{"rifampin", "isoniazid", "pyrazinamide", "ethambutol"}, nil}},
		// Two meanings, not guessed: ATV is atazanavir in the HIV list and
		// the Indian atorvastatin brand "ATV 10mg Tablet".
		{"ATV", reading{engine.DrugStatusNeedsConfirmation, "regimen", []string{}, nil, nil, []string{"atazanavir", "atorvastatin"}}},
		// Written out with abbreviations of the table: each part is read.
		{"ABC + 3TC + EFV", reading{engine.DrugStatusPartial, "ingredient list", []string{"abacavir", "efavirenz"}, []string{"ABC", "EFV"}, []string{"3TC"}, nil}},
		{"TDF/FTC", reading{engine.DrugStatusNotRecognised, "", []string{}, nil, nil, nil}},
	}
	for _, tc := range tests {
		r := k.Names().ReadDrug(tc.in)
		got := reading{r.Status, r.Via, r.Drugs, r.Ingredients, r.Unrecognised, r.DidYouMean}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ReadDrug(%q) (-want +got):\n%s", tc.in, diff)
		}
		if r.Via == engine.NameKindRegimen && r.Status != engine.DrugStatusNeedsConfirmation && !strings.Contains(strings.Join(r.Notes, " "), "regimen-abbreviation table") {
			t.Errorf("ReadDrug(%q): notes %q do not say how it was read", tc.in, r.Notes)
		}
	}
	// Every regimen row is reached by its own name and cites a page.
	sources := map[string]string{}
	for _, s := range k.Sources {
		sources[s.ID] = s.URL
	}
	n := 0
	for _, dn := range k.DrugNames {
		if dn.Kind != engine.NameKindRegimen {
			continue
		}
		n++
		for _, id := range dn.SourceIDs {
			if !strings.HasPrefix(sources[id], "http") {
				t.Errorf("regimen %q cites %q, which has no page URL", dn.Name, id)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d regimen rows, want the table's 24", n)
	}
}

// TestRegimenEvaluated checks the answer for "ATV/r 300/100" with UGT1A1
// *28/*28: the atazanavir recommendation, never atorvastatin's, and the
// ritonavir it was not checked for named.
func TestRegimenEvaluated(t *testing.T) {
	res := check(t, engine.Request{Drug: "ATV/r 300/100", Diplotypes: map[string]string{"UGT1A1": "*28/*28", "SLCO1B1": "*5/*5"}})
	if res.DrugNormalised != "atazanavir" || !res.DrugRecognised {
		t.Fatalf("drug_normalised %q recognised %v, want atazanavir", res.DrugNormalised, res.DrugRecognised)
	}
	confirmed := false
	for _, a := range res.Alerts {
		if a.Gene == "SLCO1B1" {
			t.Errorf("an atorvastatin gene alert in the answer for ATV/r: %+v", a)
		}
		if a.Gene == "UGT1A1" && a.Category == engine.CategoryConfirmed {
			confirmed = true
		}
	}
	if !confirmed || res.OverallSeverity == engine.SeverityNone {
		t.Errorf("no genotype-confirmed UGT1A1 alert for atazanavir: overall %s, alerts %+v", res.OverallSeverity, res.Alerts)
	}
	if !strings.Contains(strings.Join(res.Warnings, " "), "ritonavir not checked") {
		t.Errorf("warnings %q do not say ritonavir was not checked", res.Warnings)
	}
	// A regimen none of whose drugs is covered is a visible not-interpreted answer.
	res = check(t, engine.Request{Drug: "HRZE", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}})
	if res.DrugRecognised || res.OverallSeverity == engine.SeverityNone || len(res.Alerts) != 1 || res.Alerts[0].Category != engine.CategoryNotInterpreted {
		t.Errorf("HRZE: recognised %v overall %s alerts %+v", res.DrugRecognised, res.OverallSeverity, res.Alerts)
	}
	if !strings.Contains(res.Alerts[0].Message, "isoniazid") {
		t.Errorf("HRZE alert %q does not name what HRZE was read as", res.Alerts[0].Message)
	}
}

// TestDidYouMean is the table of the near-miss rule (drugnames.didYouMean):
// a misspelt generic name gets its drug as a question; a brand that is not
// in the tables is not "corrected" to another drug; a name that is another
// name's tail is another substance. An offer is never a reading: the
// status stays not-recognised and no drug is checked.
func TestDidYouMean(t *testing.T) {
	k := kb(t)
	tests := []struct {
		in       string
		status   string
		drugs    []string
		offer    []string // did_you_mean, exactly
		notOffer string   // a drug that must not be offered
	}{
		{"clopidogral", engine.DrugStatusNotRecognised, []string{}, []string{"clopidogrel"}, ""},
		{"clopidogral 75", engine.DrugStatusNotRecognised, []string{}, []string{"clopidogrel"}, ""},
		{"clopidogrl", engine.DrugStatusNotRecognised, []string{}, []string{"clopidogrel"}, ""},
		{"warfrin", engine.DrugStatusNotRecognised, []string{}, []string{"warfarin"}, ""},
		{"clopidog", engine.DrugStatusNotRecognised, []string{}, []string{"clopidogrel"}, ""},
		{"Plavixx", engine.DrugStatusNotRecognised, []string{}, []string{"clopidogrel"}, ""},
		{"Tegretoll", engine.DrugStatusNotRecognised, []string{}, []string{"carbamazepine"}, ""},
		// Brands: Cytotam is read from its page (tamoxifen), never as citalopram.
		{"Cytotam", engine.DrugStatusRecognised, []string{"tamoxifen"}, nil, "citalopram"},
		{"Cytotam 20 mg Tablet", engine.DrugStatusRecognised, []string{"tamoxifen"}, nil, "citalopram"},
		// A brand not in the tables: two edits from Oxepin (oxcarbazepine) is not a typo of it.
		{"Oxotin", engine.DrugStatusNotRecognised, []string{}, nil, "oxcarbazepine"},
		// Another substance, not a misspelling.
		{"esomeprazole", engine.DrugStatusNotRecognised, []string{}, nil, "omeprazole"},
		{"desvenlafaxine", engine.DrugStatusNotRecognised, []string{}, nil, "venlafaxine"},
	}
	for _, tc := range tests {
		r := k.Names().ReadDrug(tc.in)
		if r.Status != tc.status || !slices.Equal(r.Drugs, tc.drugs) {
			t.Errorf("ReadDrug(%q) = %s %v, want %s %v", tc.in, r.Status, r.Drugs, tc.status, tc.drugs)
		}
		if diff := cmp.Diff(tc.offer, r.DidYouMean); diff != "" {
			t.Errorf("ReadDrug(%q).DidYouMean (-want +got):\n%s", tc.in, diff)
		}
		if tc.notOffer != "" && slices.Contains(r.DidYouMean, tc.notOffer) {
			t.Errorf("ReadDrug(%q) offers %s", tc.in, tc.notOffer)
		}
	}
	// The offer is a question: the answer checks nothing for it.
	res := check(t, engine.Request{Drug: "clopidogral 75", Diplotypes: map[string]string{"CYP2C19": "*2/*2"}})
	if res.DrugRecognised || len(res.Alerts) != 1 || res.Alerts[0].Category != engine.CategoryNotInterpreted {
		t.Fatalf("clopidogral: recognised %v alerts %+v, want only the not-interpreted alert", res.DrugRecognised, res.Alerts)
	}
	if !strings.Contains(res.Alerts[0].Action, "Did you mean clopidogrel?") || !slices.Equal(res.DidYouMean, []string{"clopidogrel"}) {
		t.Errorf("clopidogral: action %q did_you_mean %v", res.Alerts[0].Action, res.DidYouMean)
	}
}

// TestIndianBrandPages reads the Indian brands taken from public pages
// (knowledge/internal/gen/curated/in_brands.csv): each row cites its
// page and reads as its drug, by its product name and by its stem.
func TestIndianBrandPages(t *testing.T) {
	k := kb(t)
	sources := map[string]string{}
	for _, s := range k.Sources {
		sources[s.ID] = s.URL
	}
	n := 0
	for _, dn := range k.DrugNames {
		var pages []string
		for _, id := range dn.SourceIDs {
			if strings.HasPrefix(id, "in-") {
				pages = append(pages, sources[id])
			}
		}
		if len(pages) == 0 {
			continue
		}
		n++
		if !slices.Contains(dn.Markets, "IN") {
			t.Errorf("%q cites an Indian page but is not marked IN", dn.Name)
		}
		for _, u := range pages {
			if !strings.HasPrefix(u, "http") {
				t.Errorf("%q: page source without a URL", dn.Name)
			}
		}
		for _, in := range []string{dn.Name, dn.Stem, dn.Stem + " 10 mg tablet"} {
			if strings.TrimSpace(in) == "" || in == " 10 mg tablet" {
				continue
			}
			r := k.Names().ReadDrug(in)
			if r.Status != engine.DrugStatusRecognised || !slices.Equal(r.Drugs, dn.Drugs) {
				t.Errorf("ReadDrug(%q) = %s %v, want %v", in, r.Status, r.Drugs, dn.Drugs)
			}
		}
	}
	if n < 23 {
		t.Errorf("%d Indian brand rows from pages, want 23", n)
	}
	for in, want := range map[string]string{"Carbatol 200 Tablet": "carbamazepine", "Capegard 500 Tablet": "capecitabine", "Cytotam 20": "tamoxifen", "HCQS 200": "hydroxychloroquine", "Septran DS": "sulfamethoxazole / trimethoprim", "Saaz 500 Tablet": "sulfasalazine", "Atazor 200 mg capsule": "atazanavir",
		"PegiHep 80 mcg injection": "peginterferon alfa-2b", "Virafin": "peginterferon alfa-2b", "Vortidif 10 mg Tablet": "vortioxetine", "Pegasys 180 mcg injection": "peginterferon alfa-2a", "Enflox 400 Tablet": "norfloxacin", "Norflot 400": "norfloxacin",
		"ZEMDRI 500 mg injection": "plazomicin", "Celin 500 mg tablet": "vitamin c", "Limcee 500 Chewable Tablet": "vitamin c"} {
		if r := k.Names().ReadDrug(in); r.Status != engine.DrugStatusRecognised || !slices.Equal(r.Drugs, []string{want}) {
			t.Errorf("ReadDrug(%q) = %s %v, want %s", in, r.Status, r.Drugs, want)
		}
	}
	// Norflox is not in the table: its tablets are norfloxacin + lactic
	// acid bacillus and its drops norfloxacin alone (CiplaMed), so the
	// name stays unread (visible, with the question "did you mean
	// norfloxacin?", a one-edit slip of Norflot) rather than read as one
	// of the two.
	if r := k.Names().ReadDrug("Norflox 400 Tablet"); r.Status != engine.DrugStatusNotRecognised || !slices.Equal(r.DidYouMean, []string{"norfloxacin"}) {
		t.Errorf("ReadDrug(Norflox 400 Tablet) = %s %v did_you_mean %v, want not-recognised, offered norfloxacin", r.Status, r.Drugs, r.DidYouMean)
	}
	// The brand ATAZOR (atazanavir alone) must not take over the
	// combination Atazor-R (atazanavir + ritonavir): ritonavir stays
	// named as not checked.
	if r := k.Names().ReadDrug("Atazor-R 300mg/100mg Tablet"); r.Status != engine.DrugStatusPartial || !slices.Equal(r.Drugs, []string{"atazanavir"}) || !slices.Contains(r.Unrecognised, "Ritonavir") {
		t.Errorf("ReadDrug(Atazor-R) = %s %v unrecognised %v, want partly-recognised atazanavir with Ritonavir not checked", r.Status, r.Drugs, r.Unrecognised)
	}
}
