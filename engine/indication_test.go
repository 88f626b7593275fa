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
		{"codes and text disagree: both", "clopidogrel", population.PopulationContext{Codes: []engine.Coding{c(icd10cm, "I25.10")}, Text: "ACS with stent"}, []string{population.PopACSPCI, population.PopNonACS}, false, ""},
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

// TestNegationInIndicationText: negation cues are whole words, the prefix
// "non" negates only the term it is attached to, and the medical names
// that start with "non" (non-STEMI, non-ST elevation, non-Hodgkin,
// non-small cell …) negate nothing. Each rule both ways: a real negation
// still negates.
func TestNegationInIndicationText(t *testing.T) {
	k := kb(t)
	tests := []struct {
		text    string
		want    []string
		decided bool
	}{
		// Names that contain "non".
		{"non-STEMI", []string{population.PopACSPCI}, true},
		{"Non-STEMI today", []string{population.PopACSPCI}, true},
		{"non STEMI", []string{population.PopACSPCI}, true},
		{"non–STEMI", []string{population.PopACSPCI}, true}, // en dash
		{"non-ST elevation myocardial infarction", []string{population.PopACSPCI}, true},
		{"non-ST-elevation acute coronary syndrome", []string{population.PopACSPCI}, true},
		{"non-ST segment elevation MI with PCI", []string{population.PopACSPCI}, true},
		{"non-Q wave myocardial infarction", []string{population.PopACSPCI}, true},
		{"non-Hodgkin lymphoma with coronary stent", []string{population.PopACSPCI}, true},
		{"non-small cell lung cancer with drug-eluting stent in 2023", []string{population.PopACSPCI}, true},
		{"myocardial infarction with non-obstructive coronary arteries", []string{population.PopACSPCI}, true},
		// "non" attached to another word negates nothing else.
		{"non-invasive testing before PCI", []string{population.PopACSPCI}, true},
		{"non-diabetic, coronary angioplasty", []string{population.PopACSPCI}, true},
		// Real negations still negate.
		{"non-ACS non-PCI", []string{population.PopNonACS}, true},
		{"non-ACS, coronary artery disease", []string{population.PopNonACS}, true},
		{"non acute coronary syndrome, stable angina", []string{population.PopNonACS}, true},
		{"non-cardiac chest pain", allClopidogrel, false},
		{"no history of ACS; peripheral arterial disease", []string{population.PopNonACS}, true},
		{"denies chest pain, no history of myocardial infarction, coronary artery disease", []string{population.PopNonACS}, true},
		{"NSTEMI ruled out; stable angina", []string{population.PopNonACS}, true},
		{"no STEMI or NSTEMI, stable coronary disease", []string{population.PopNonACS}, true},
		{"without stent; cerebrovascular disease", []string{population.PopNeuro}, true},
		// Whole words: "no" inside another word is not a cue.
		{"known NSTEMI", []string{population.PopACSPCI}, true},
		{"nothing else; NSTEMI", []string{population.PopACSPCI}, true},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			ch := k.Populations().SelectPopulation("clopidogrel", population.PopulationContext{Text: tc.text})
			if diff := cmp.Diff(tc.want, ch.Populations); diff != "" {
				t.Errorf("populations (-want +got):\n%s\nreason %q notes %q", diff, ch.Reason, ch.Notes)
			}
			if ch.Decided != tc.decided {
				t.Errorf("decided %v, want %v (reason %q)", ch.Decided, tc.decided, ch.Reason)
			}
		})
	}
}

// TestIndicationCodeTitles re-checks every coronary row of the population
// table against its code title (issue 21): a code whose title names
// unstable angina or a myocardial infarction is "CVI ACS PCI" — alone
// when the title names unstable angina, beside "CVI non-ACS non-PCI" when
// the data pack read the infarction as old or not current. Cerebral
// infarction is neurovascular, not coronary, and stays "NVI".
func TestIndicationCodeTitles(t *testing.T) {
	k := kb(t)
	pops := map[string][]string{} // system|code → populations
	title := map[string]string{}
	for _, r := range k.Indications {
		key := r.System + "|" + r.Code
		pops[key] = append(pops[key], r.Population)
		title[key] = r.Display
	}
	checked := 0
	for key, ps := range pops {
		tl := strings.ToLower(title[key])
		coronary := slices.Contains(ps, population.PopACSPCI) || slices.Contains(ps, population.PopNonACS)
		switch {
		case !coronary:
			continue
		case strings.Contains(tl, "unstable angina"):
			checked++
			if diff := cmp.Diff([]string{population.PopACSPCI}, ps); diff != "" {
				t.Errorf("%s %q: populations (-want +got):\n%s", key, title[key], diff)
			}
		case strings.Contains(tl, "infarct"):
			checked++
			if !slices.Contains(ps, population.PopACSPCI) {
				t.Errorf("%s %q names an infarction but is not under %q: %q", key, title[key], population.PopACSPCI, ps)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d coronary rows name unstable angina or an infarction; the table is not the one expected", checked)
	}
	// Through the selector, both ways.
	c := func(system, code string) engine.Coding { return engine.Coding{System: system, Code: code} }
	tests := []struct {
		name    string
		codes   []engine.Coding
		want    []string
		decided bool
	}{
		{"I25.110 native coronary artery with unstable angina", []engine.Coding{c(icd10cm, "I25.110")}, []string{population.PopACSPCI}, true},
		{"I25.700 bypass graft with unstable angina", []engine.Coding{c(icd10cm, "I25.700")}, []string{population.PopACSPCI}, true},
		{"I25.750 transplanted heart with unstable angina", []engine.Coding{c(icd10cm, "I25.750")}, []string{population.PopACSPCI}, true},
		{"I20.0 unstable angina", []engine.Coding{c(icd10cm, "I20.0")}, []string{population.PopACSPCI}, true},
		{"I21.4 NSTEMI", []engine.Coding{c(icd10cm, "I21.4")}, []string{population.PopACSPCI}, true},
		// Stable disease stays stable.
		{"I25.10 without angina", []engine.Coding{c(icd10cm, "I25.10")}, []string{population.PopNonACS}, true},
		{"I25.111 angina with documented spasm", []engine.Coding{c(icd10cm, "I25.111")}, []string{population.PopNonACS}, true},
		{"I25.119 unspecified angina", []engine.Coding{c(icd10cm, "I25.119")}, []string{population.PopNonACS}, true},
		{"I25.709 bypass graft, unspecified angina", []engine.Coding{c(icd10cm, "I25.709")}, []string{population.PopNonACS}, true},
		// An old infarction: the code does not decide; every population is evaluated.
		{"I25.2 old myocardial infarction", []engine.Coding{c(icd10cm, "I25.2")}, allClopidogrel, false},
		{"WHO I25.2 old myocardial infarction", []engine.Coding{c(icd10, "I25.2")}, allClopidogrel, false},
		{"SNOMED post infarct angina", []engine.Coding{c(sct, "314116003")}, allClopidogrel, false},
		// An old infarction beside a code of ACS or PCI alone: ACS/PCI.
		{"I25.2 with a PCI procedure", []engine.Coding{c(icd10cm, "I25.2"), c(pcs, "0270346")}, []string{population.PopACSPCI}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := k.Populations().SelectPopulation("clopidogrel", population.PopulationContext{Codes: tc.codes})
			if diff := cmp.Diff(tc.want, ch.Populations); diff != "" {
				t.Errorf("populations (-want +got):\n%s\nreason %q notes %q", diff, ch.Reason, ch.Notes)
			}
			if ch.Decided != tc.decided {
				t.Errorf("decided %v, want %v (reason %q)", ch.Decided, tc.decided, ch.Reason)
			}
			if !tc.decided && !strings.Contains(ch.Reason, "more than one guideline population") {
				t.Errorf("undecided without saying why: reason %q", ch.Reason)
			}
		})
	}
}

// TestCodesAndTextDisagree: coded context and free text that decide
// different populations are both evaluated and the disagreement is
// stated; when they agree, or the text decides nothing, the codes decide.
func TestCodesAndTextDisagree(t *testing.T) {
	k := kb(t)
	c := func(system, code string) engine.Coding { return engine.Coding{System: system, Code: code} }
	tests := []struct {
		name     string
		codes    []engine.Coding
		text     string
		want     []string
		conflict bool
		basis    string
	}{
		{"stable CAD coded, NSTEMI written", []engine.Coding{c(icd10cm, "I25.10")}, "NSTEMI today", []string{population.PopACSPCI, population.PopNonACS}, true, ""},
		{"stable CAD coded, non-STEMI written", []engine.Coding{c(icd10cm, "I25.10")}, "non-STEMI", []string{population.PopACSPCI, population.PopNonACS}, true, ""},
		{"NSTEMI coded, stable angina written", []engine.Coding{c(icd10cm, "I21.4")}, "stable angina", []string{population.PopACSPCI, population.PopNonACS}, true, ""},
		{"stroke coded, PCI written", []engine.Coding{c(icd10cm, "I63.9")}, "PCI last month", []string{population.PopACSPCI, population.PopNeuro}, true, ""},
		// Agreeing, or text that decides nothing: the codes.
		{"stable CAD coded and written", []engine.Coding{c(icd10cm, "I25.10")}, "stable coronary disease, no PCI", []string{population.PopNonACS}, false, "codes"},
		{"NSTEMI coded and written", []engine.Coding{c(icd10cm, "I21.4")}, "NSTEMI", []string{population.PopACSPCI}, false, "codes"},
		{"NSTEMI coded, text negated only", []engine.Coding{c(icd10cm, "I21.4")}, "no history of ACS", []string{population.PopACSPCI}, false, "codes"},
		{"stable CAD coded, text says nothing", []engine.Coding{c(icd10cm, "I25.10")}, "follow-up visit", []string{population.PopNonACS}, false, "codes"},
		{"stable CAD coded, ACS denied in text", []engine.Coding{c(icd10cm, "I25.10")}, "denies chest pain, ACS ruled out", []string{population.PopNonACS}, false, "codes"},
		// Codes that decide nothing: every population, whatever the text.
		{"codes undecided", []engine.Coding{c(icd10cm, "I63.9"), c(icd10cm, "I25.10")}, "NSTEMI", allClopidogrel, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := k.Populations().SelectPopulation("clopidogrel", population.PopulationContext{Codes: tc.codes, Text: tc.text})
			if diff := cmp.Diff(tc.want, ch.Populations); diff != "" {
				t.Errorf("populations (-want +got):\n%s\nreason %q notes %q", diff, ch.Reason, ch.Notes)
			}
			if ch.Conflict != tc.conflict || ch.Basis != tc.basis {
				t.Errorf("conflict %v basis %q, want %v %q (reason %q)", ch.Conflict, ch.Basis, tc.conflict, tc.basis, ch.Reason)
			}
			if tc.conflict && (ch.Decided || !strings.Contains(ch.Reason, "disagree") || !strings.Contains(ch.Reason, tc.codes[0].Code) || !strings.Contains(ch.Reason, tc.text)) {
				t.Errorf("disagreement not stated: decided %v reason %q", ch.Decided, ch.Reason)
			}
		})
	}
}

// TestContextInAnswer: the cases end to end, for a CYP2C19
// intermediate metabolizer (CPIC: avoid clopidogrel in ACS/PCI, no
// recommendation outside it) and a poor metabolizer.
func TestContextInAnswer(t *testing.T) {
	tests := []struct {
		name     string
		diplo    string
		codes    []engine.Coding
		text     string
		wantPop  string
		wantSev  engine.Severity
		wantNote string // a substring of an assumption of the alert
	}{
		{"non-STEMI written, poor metabolizer", "*2/*2", nil, "non-STEMI", population.PopACSPCI, engine.SeverityHigh, "chosen from the indication text"},
		{"non-STEMI written, intermediate metabolizer", "*1/*2", nil, "non-STEMI", population.PopACSPCI, engine.SeverityHigh, "chosen from the indication text"},
		{"I25.110 coded, intermediate metabolizer", "*1/*2", []engine.Coding{{System: icd10cm, Code: "I25.110"}}, "", population.PopACSPCI, engine.SeverityHigh, "unstable angina, which is acute coronary syndrome"},
		{"I25.700 coded, intermediate metabolizer", "*1/*2", []engine.Coding{{System: icd10cm, Code: "I25.700"}}, "", population.PopACSPCI, engine.SeverityHigh, "I25.700"},
		{"I25.10 coded, NSTEMI today written", "*1/*2", []engine.Coding{{System: icd10cm, Code: "I25.10"}}, "NSTEMI today", population.PopACSPCI, engine.SeverityHigh, "the coded context and the free text disagree"},
		// Both ways: a real negation still negates, and stable disease stays stable.
		{"I25.10 coded, NSTEMI ruled out", "*1/*2", []engine.Coding{{System: icd10cm, Code: "I25.10"}}, "NSTEMI ruled out", population.PopNonACS, engine.SeverityInfo, "chosen from the coded indication ICD-10-CM I25.10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, engine.Request{Drug: "clopidogrel", Diplotypes: map[string]string{"CYP2C19": tc.diplo}, IndicationCodes: tc.codes, Indication: tc.text})
			a := confirmed(res)
			if len(a) != 1 {
				t.Fatalf("confirmed alerts %+v, want one", a)
			}
			if a[0].Population != tc.wantPop || a[0].Severity != tc.wantSev {
				t.Errorf("population %q severity %v, want %q %v (%s)", a[0].Population, a[0].Severity, tc.wantPop, tc.wantSev, a[0].Recommendation)
			}
			if !slices.ContainsFunc(a[0].Assumptions, func(s string) bool { return strings.Contains(s, tc.wantNote) }) {
				t.Errorf("assumptions %q do not say %q", a[0].Assumptions, tc.wantNote)
			}
		})
	}
}
