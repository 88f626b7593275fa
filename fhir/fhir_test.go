package fhir_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/fhir"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

var (
	kb     *evaluate.Engine
	parser *fhir.Parser
	mapper *fhir.Mapper
)

func TestMain(m *testing.M) {
	var err error
	kb, err = knowledge.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	parser, err = fhir.NewParser()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mapper = fhir.NewMapper(parser, kb.Names(), kb.Caller())
	os.Exit(m.Run())
}

// fixture reads testdata/fhir/<name>.
func fixture(t testing.TB, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fhir", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit returns a copy of raw with fn applied to its decoded object.
func edit(t testing.TB, raw json.RawMessage, fn func(map[string]any)) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// notInterpreted are the fixtures read whole whose genomic content
// pgxsafety does not interpret (and says so).
var notInterpreted = map[string]bool{
	"Observation-Pgx-var-1015.json":               true, // HGVS on GRCh37 only
	"Observation-GenotypeExample1-pgxsafety.json": true, // one HLA-B allele named: silent on *57:01, *58:01
}

// TestFixturesParse checks that every FHIR fixture (the official examples
// and ours) is read whole: no issue of severity error or warning.
func TestFixturesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "fhir", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		raw := fixture(t, filepath.Base(f))
		var issues []fhir.Issue
		switch {
		case strings.Contains(f, "MedicationRequest"):
			issues = mapper.MedicationOrders([]json.RawMessage{raw}, "test", nil).Issues
		case strings.Contains(f, "Observation"):
			issues = mapper.ReadGenomics([]json.RawMessage{raw}, "", "test").Issues
		case strings.Contains(f, "Patient"):
			issues = mapper.ReadPatient(raw, time.Now()).Issues
		default:
			continue
		}
		for _, is := range issues {
			if notInterpreted[filepath.Base(f)] && (strings.HasPrefix(is.Message, "present but not interpreted") || strings.HasPrefix(is.Message, "partly interpreted")) {
				continue
			}
			if is.Severity != fhir.IssueInfo {
				t.Errorf("%s: %+v", filepath.Base(f), is)
			}
		}
	}
}

func TestReadGenomics(t *testing.T) {
	geno := fixture(t, "Observation-Pgx-geno-1001.json")
	var1015 := fixture(t, "Observation-Pgx-var-1015.json")
	tx01 := fixture(t, "Observation-TxImp01.json")
	txHLA := fixture(t, "Observation-TherapeuticImplicationExample1.json")
	hlaGeno := fixture(t, "Observation-GenotypeExample1-pgxsafety.json")
	variant := fixture(t, "Observation-variant-1-pgx-example.json")
	const pt = "CGPatientExample01"

	withValue := func(raw json.RawMessage, id, text, when string) json.RawMessage {
		return edit(t, raw, func(m map[string]any) {
			m["id"] = id
			m["valueCodeableConcept"] = map[string]any{"text": text}
			m["effectiveDateTime"] = when
		})
	}
	rsVariant := func(id, rs, presence, zyg string) json.RawMessage {
		return edit(t, variant, func(m map[string]any) {
			m["id"] = id
			m["subject"] = map[string]any{"reference": "Patient/" + pt}
			comps := m["component"].([]any)
			comps[1].(map[string]any)["valueCodeableConcept"] = map[string]any{
				"coding": []any{map[string]any{"system": fhir.SystemDbSNP, "code": rs}}}
			code := map[string]string{"present": fhir.LAPresent, "absent": fhir.LAAbsent}[presence]
			m["valueCodeableConcept"] = map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": code}}}
			if zyg != "" {
				zc := map[string]string{"hom": fhir.LAHomozygous, "het": fhir.LAHeterozygous}[zyg]
				m["component"] = append(comps, map[string]any{
					"code":                 map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": fhir.LOINCZygosity}}},
					"valueCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": zc}}},
				})
			}
		})
	}
	haplotype := func(id, text string) json.RawMessage {
		return edit(t, geno, func(m map[string]any) {
			m["id"] = id
			m["code"] = map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": fhir.LOINCHaplotype}}}
			m["valueCodeableConcept"] = map[string]any{"text": text}
			delete(m, "derivedFrom")
		})
	}

	type want struct {
		Variants     []string
		Zygosity     map[string]engine.Zygosity
		Diplotypes   map[string]string
		HLA          map[string]string
		Implications []fhir.Implication
		Used         []string
		IssueRefs    []string
	}
	tests := []struct {
		name string
		in   []json.RawMessage
		want want
	}{
		{
			name: "IG genotype CYP2C19*2/*2 and its therapeutic implication",
			in:   []json.RawMessage{geno, tx01},
			want: want{
				Diplotypes: map[string]string{"CYP2C19": "*2/*2"},
				Implications: []fhir.Implication{{Ref: "Observation/TxImp01", Drug: "clopidogrel", Medication: "clopidogrel",
					Phenotype: "Poor metabolizer", DerivedFrom: []string{"Observation/Pgx-geno-1001"}, Resolved: true, Effective: "2019-04-01"}},
				Used: []string{"Observation/Pgx-geno-1001", "Observation/TxImp01"},
			},
		},
		{
			name: "therapeutic implication without its genotype is unresolved",
			in:   []json.RawMessage{tx01},
			want: want{
				Implications: []fhir.Implication{{Ref: "Observation/TxImp01", Drug: "clopidogrel", Medication: "clopidogrel",
					Phenotype: "Poor metabolizer", DerivedFrom: []string{"Observation/Pgx-geno-1001"}, Effective: "2019-04-01"}},
			},
		},
		{
			name: "HLA-B*15:02 genotype and the IG's carbamazepine implication",
			in:   []json.RawMessage{hlaGeno, txHLA},
			want: want{
				HLA: map[string]string{"HLA-B*15:02": "positive"},
				Implications: []fhir.Implication{{Ref: "Observation/TherapeuticImplicationExample1", Drug: "carbamazepine", Medication: "Carbamazepine",
					Phenotype: "High risk", DerivedFrom: []string{"Observation/GenotypeExample1"}, Resolved: true, Effective: "2019-04-01"}},
				Used:      []string{"Observation/GenotypeExample1", "Observation/TherapeuticImplicationExample1"},
				IssueRefs: []string{"Observation/GenotypeExample1"}, // silent on *57:01 and *58:01
			},
		},
		{
			name: "a full HLA-B typing makes the other keyed alleles negative",
			in:   []json.RawMessage{withValue(hlaGeno, "t1", "HLA-B*15:02:01, HLA-B*07:02", "2020-01-01")},
			want: want{
				HLA:  map[string]string{"HLA-B*15:02": "positive", "HLA-B*57:01": "negative", "HLA-B*58:01": "negative"},
				Used: []string{"Observation/t1"},
			},
		},
		{
			name: "a GL String genotype (+) is a full typing",
			in:   []json.RawMessage{withValue(hlaGeno, "t1", "hla#3.23.0#HLA-B*15:02:01G+HLA-B*07:02:01:01", "2020-01-01")},
			want: want{
				HLA:  map[string]string{"HLA-B*15:02": "positive", "HLA-B*57:01": "negative", "HLA-B*58:01": "negative"},
				Used: []string{"Observation/t1"},
			},
		},
		{
			// "A/B" is one copy, A or B, by GL String rules and a
			// genotype by the star-allele habit: where the readings
			// disagree the allele is present but not interpreted.
			name: "an HLA value A/B is ambiguous where the two readings disagree",
			in:   []json.RawMessage{withValue(hlaGeno, "t1", "HLA-B*15:02:01/HLA-B*07:02", "2020-01-01")},
			want: want{
				Used:      []string{"Observation/t1"},
				IssueRefs: []string{"Observation/t1", "Observation/t1", "Observation/t1"},
			},
		},
		{
			name: "an HLA result written negative",
			in:   []json.RawMessage{withValue(hlaGeno, "t2", "HLA-B*15:02 negative", "2020-01-01")},
			// It says nothing about *57:01 or *58:01: partly interpreted.
			want: want{HLA: map[string]string{"HLA-B*15:02": "negative"}, Used: []string{"Observation/t2"}, IssueRefs: []string{"Observation/t2"}},
		},
		{
			name: "a variant given only in HGVS on GRCh37 is present but not interpreted",
			in:   []json.RawMessage{var1015},
			want: want{IssueRefs: []string{"Observation/Pgx-var-1015"}},
		},
		{
			name: "dbSNP variants: present with zygosity, absent is not a carrier",
			in: []json.RawMessage{
				rsVariant("v1", "rs4244285", "present", "het"),
				rsVariant("v2", "rs12248560", "absent", ""),
				rsVariant("v3", "RS4986893", "present", "hom"),
			},
			want: want{
				Variants: []string{"rs4244285", "rs4986893"},
				Zygosity: map[string]engine.Zygosity{"rs4244285": engine.Het, "rs4986893": engine.Hom},
				Used:     []string{"Observation/v1", "Observation/v2", "Observation/v3"},
			},
		},
		{
			name: "two haplotypes make a diplotype",
			in:   []json.RawMessage{haplotype("h1", "CYP2C19*1"), haplotype("h2", "CYP2C19*17")},
			want: want{Diplotypes: map[string]string{"CYP2C19": "*1/*17"}, Used: []string{"Observation/h1", "Observation/h2"}},
		},
		{
			name: "a preliminary result does not count",
			in:   []json.RawMessage{edit(t, geno, func(m map[string]any) { m["status"] = "preliminary" })},
		},
		{
			name: "another patient's result is refused",
			in:   []json.RawMessage{edit(t, geno, func(m map[string]any) { m["subject"] = map[string]any{"reference": "Patient/someone-else"} })},
			want: want{IssueRefs: []string{"Observation/Pgx-geno-1001"}},
		},
		{
			name: "disagreeing genotypes: the latest is used",
			in: []json.RawMessage{
				withValue(geno, "old", "CYP2C19*1/*1", "2015-01-01"),
				withValue(geno, "new", "CYP2C19*1/*2", "2021-06-01"),
			},
			want: want{Diplotypes: map[string]string{"CYP2C19": "*1/*2"}, Used: []string{"Observation/new"}, IssueRefs: []string{"Observation/new"}},
		},
		{
			name: "disagreeing genotypes on the same day: none is used",
			in: []json.RawMessage{
				withValue(geno, "a", "CYP2C19*1/*1", "2021-06-01"),
				withValue(geno, "b", "CYP2C19*2/*2", "2021-06-01"),
			},
			want: want{IssueRefs: []string{"Observation/a"}},
		},
		{
			name: "a diplotype outside the allele definitions is refused",
			in:   []json.RawMessage{withValue(geno, "bad", "CYP2C19*999/*2", "2021-06-01")},
			want: want{IssueRefs: []string{"Observation/bad"}},
		},
		{
			name: "one unreadable entry does not drop the others",
			in: []json.RawMessage{
				json.RawMessage(`{"resourceType":"Observation","id":"broken","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"84413-4"}]},"valueCodeableConcept":7}`),
				geno,
			},
			want: want{
				Diplotypes: map[string]string{"CYP2C19": "*2/*2"},
				Used:       []string{"Observation/Pgx-geno-1001"},
				IssueRefs:  []string{"Observation/broken"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mapper.ReadGenomics(tc.in, pt, "test")
			got := want{Variants: g.Variants, Zygosity: g.Zygosity, Diplotypes: g.Diplotypes, HLA: g.HLA, Implications: g.Implications}
			for _, r := range g.UsedResults() {
				got.Used = append(got.Used, r.Ref)
			}
			for _, is := range g.Issues {
				if is.Severity != fhir.IssueInfo {
					got.IssueRefs = append(got.IssueRefs, is.Ref)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\nissues: %+v\nresults: %+v", diff, g.Issues, g.Results)
			}
		})
	}
}

func TestReadGenomicsSpecimenAndDates(t *testing.T) {
	raw := edit(t, fixture(t, "Observation-Pgx-geno-1001.json"), func(m map[string]any) {
		m["contained"] = []any{map[string]any{
			"resourceType": "Specimen", "id": "sp1",
			"collection": map[string]any{"collectedDateTime": "2019-03-28"},
		}}
		m["specimen"] = map[string]any{"reference": "#sp1"}
		m["issued"] = "2019-04-02T10:00:00+05:30"
	})
	g := mapper.ReadGenomics([]json.RawMessage{raw}, "", "test")
	if len(g.Results) != 1 {
		t.Fatalf("results: %+v issues %+v", g.Results, g.Issues)
	}
	r := g.Results[0]
	want := fhir.GenomicResult{Ref: "Observation/Pgx-geno-1001", Kind: fhir.KindGenotype, Gene: "CYP2C19", Value: "CYP2C19*2/*2",
		Status: "final", Effective: "2019-04-01", Issued: "2019-04-02T10:00:00+05:30", SpecimenCollected: "2019-03-28",
		Performer: "Organization/ExampleOrg", Used: true}
	if diff := cmp.Diff(want, r, cmpopts.IgnoreUnexported(fhir.GenomicResult{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A performer's display names the laboratory in preference to its
	// reference.
	raw = edit(t, raw, func(m map[string]any) {
		m["performer"] = []any{map[string]any{"reference": "Organization/lab1", "display": "Example Genomics Lab"}, map[string]any{"reference": "Practitioner/p2"}}
	})
	g = mapper.ReadGenomics([]json.RawMessage{raw}, "", "test")
	if got := g.Results[0].Performer; got != "Example Genomics Lab; Practitioner/p2" {
		t.Errorf("performer = %q", got)
	}
}

func TestMedicationOrders(t *testing.T) {
	clop := fixture(t, "MedicationRequest-draft-clopidogrel-pgxsafety.json")
	contained := fixture(t, "MedicationRequest-medicationrequest-contained-oral-axid.json")
	coded := fixture(t, "MedicationRequest-medicationrequest-coded-oral-axid.json")
	withMed := func(id string, cc map[string]any) json.RawMessage {
		return edit(t, clop, func(m map[string]any) {
			m["id"] = id
			m["medicationCodeableConcept"] = cc
		})
	}
	coding := func(system, code, display string) map[string]any {
		c := map[string]any{"system": system, "code": code}
		if display != "" {
			c["display"] = display
		}
		return c
	}
	tests := []struct {
		name      string
		in        []json.RawMessage
		want      [][]fhir.DrugMatch // per order
		issueRefs []string
		other     []string
	}{
		{name: "RxNorm ingredient code", in: []json.RawMessage{clop},
			want: [][]fhir.DrugMatch{{{Drug: "clopidogrel", Via: "RxNorm 32968"}}}},
		{name: "ATC code", in: []json.RawMessage{withMed("a", map[string]any{"coding": []any{coding(fhir.SystemATC, "n03af01", "")}})},
			want: [][]fhir.DrugMatch{{{Drug: "carbamazepine", Via: "ATC N03AF01"}}}},
		{name: "product code the knowledge does not hold: the display names the drug",
			in:   []json.RawMessage{withMed("b", map[string]any{"coding": []any{coding(fhir.SystemRxNorm, "0000000", "Clopidogrel 75 MG Oral Tablet")}})},
			want: [][]fhir.DrugMatch{{{Drug: "clopidogrel", Via: "name in text"}}}},
		{name: "SNOMED CT display and salt name",
			in:   []json.RawMessage{withMed("c", map[string]any{"coding": []any{coding(fhir.SystemSNOMED, "0", "Product containing clopidogrel bisulfate")}})},
			want: [][]fhir.DrugMatch{{{Drug: "clopidogrel", Via: "name in text"}}}},
		{name: "text naming two covered drugs",
			in:   []json.RawMessage{withMed("d", map[string]any{"text": "Simvastatin 10 MG / Omeprazole 20 MG (test text)"})},
			want: [][]fhir.DrugMatch{{{Drug: "simvastatin", Via: "name in text"}, {Drug: "omeprazole", Via: "name in text"}}}},
		{name: "a knowledge name with punctuation",
			in:   []json.RawMessage{withMed("d2", map[string]any{"text": "Sulfamethoxazole/Trimethoprim 800 MG"})},
			want: [][]fhir.DrugMatch{{{Drug: "sulfamethoxazole / trimethoprim", Via: "name in text"}}}},
		{name: "a word inside another word is not a drug name",
			in:   []json.RawMessage{withMed("e", map[string]any{"text": "Noclopidogrelish syrup"})},
			want: [][]fhir.DrugMatch{nil}},
		{name: "US Core contained Medication (nizatidine is not covered)", in: []json.RawMessage{contained}, want: [][]fhir.DrugMatch{nil}},
		{name: "US Core coded order (not covered)", in: []json.RawMessage{coded}, want: [][]fhir.DrugMatch{nil}},
		{name: "Medication referenced from the same Bundle",
			in: []json.RawMessage{
				edit(t, clop, func(m map[string]any) {
					delete(m, "medicationCodeableConcept")
					m["medicationReference"] = map[string]any{"reference": "Medication/med-9"}
				}),
				json.RawMessage(`{"resourceType":"Medication","id":"med-9","code":{"coding":[{"system":"http://www.nlm.nih.gov/research/umls/rxnorm","code":"2002"}]}}`),
			},
			want: [][]fhir.DrugMatch{{{Drug: "carbamazepine", Via: "RxNorm 2002"}}}},
		{name: "unresolvable Medication reference",
			in: []json.RawMessage{edit(t, clop, func(m map[string]any) {
				delete(m, "medicationCodeableConcept")
				m["medicationReference"] = map[string]any{"reference": "Medication/missing"}
			})},
			want: [][]fhir.DrugMatch{nil}, issueRefs: []string{"MedicationRequest/draft-clopidogrel-1"}},
		{name: "NutritionOrder is not checked and a broken entry drops only itself",
			in: []json.RawMessage{
				json.RawMessage(`{"resourceType":"NutritionOrder","id":"n1","status":"draft","intent":"order","patient":{"reference":"Patient/1"},"dateTime":"2020-01-01"}`),
				json.RawMessage(`{"resourceType":"MedicationRequest","id":"x","status":"draft","intent":"order","subject":{"reference":"Patient/1"},"medicationCodeableConcept":{"text":"clopidogrel"},"dosageInstruction":{"text":"an object, not an array"}}`),
				json.RawMessage(`{"resourceType":"MedicationRequest","id":"y","status":"bogus"`),
				json.RawMessage(`[1,2]`),
			},
			want:      [][]fhir.DrugMatch{{{Drug: "clopidogrel", Via: "name in text"}}},
			issueRefs: []string{"test entry 3", "test entry 4", "MedicationRequest/x"},
			other:     []string{"NutritionOrder/n1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := mapper.MedicationOrders(tc.in, "test", nil)
			var got [][]fhir.DrugMatch
			for _, m := range o.Medications {
				got = append(got, m.Drugs)
			}
			var refs []string
			for _, is := range o.Issues {
				refs = append(refs, is.Ref)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drugs (-want +got):\n%s\nissues: %+v", diff, o.Issues)
			}
			if diff := cmp.Diff(tc.issueRefs, refs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("issues (-want +got):\n%s\n%+v", diff, o.Issues)
			}
			if diff := cmp.Diff(tc.other, o.Other, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("other (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMedicationOrderFields(t *testing.T) {
	o := mapper.MedicationOrders([]json.RawMessage{fixture(t, "MedicationRequest-draft-clopidogrel-pgxsafety.json")}, "draftOrders", nil)
	want := []fhir.MedicationOrder{{
		Ref: "MedicationRequest/draft-clopidogrel-1", ID: "draft-clopidogrel-1", Status: "draft", Intent: "order",
		Subject: "Patient/CGPatientExample01", Label: "clopidogrel", Identified: true,
		Drugs:      []fhir.DrugMatch{{Drug: "clopidogrel", Via: "RxNorm 32968"}},
		Indication: "Acute coronary syndrome with PCI", Place: "draftOrders entry 1",
	}}
	if diff := cmp.Diff(want, o.Medications); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	contained := mapper.MedicationOrders([]json.RawMessage{fixture(t, "MedicationRequest-medicationrequest-contained-oral-axid.json")}, "x", nil)
	if len(contained.Medications) != 1 || !contained.Medications[0].Identified || contained.Medications[0].Label == "" {
		t.Errorf("contained Medication not resolved: %+v %+v", contained.Medications, contained.Issues)
	}
}

func TestReadPatient(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	base := fixture(t, "Patient-CGPatientExample01-pgxsafety.json")
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		in   json.RawMessage
		want fhir.PatientFacts
	}{
		{"full", base, fhir.PatientFacts{Ref: "Patient/CGPatientExample01", Sex: "male", AgeYears: f(55), BirthDate: "1970-05-14", State: "Tamil Nadu"}},
		{"birthday not yet reached", edit(t, base, func(m map[string]any) { m["birthDate"] = "2007-06-02" }),
			fhir.PatientFacts{Ref: "Patient/CGPatientExample01", Sex: "male", AgeYears: f(17), BirthDate: "2007-06-02", State: "Tamil Nadu"}},
		{"year and month, unambiguous", edit(t, base, func(m map[string]any) { m["birthDate"] = "1950-01" }),
			fhir.PatientFacts{Ref: "Patient/CGPatientExample01", Sex: "male", AgeYears: f(75), BirthDate: "1950-01", State: "Tamil Nadu"}},
		{"year only straddling a birthday", edit(t, base, func(m map[string]any) { m["birthDate"] = "2007"; m["gender"] = "other" }),
			fhir.PatientFacts{Ref: "Patient/CGPatientExample01", BirthDate: "2007", State: "Tamil Nadu",
				Issues: []fhir.Issue{{Ref: "Patient/CGPatientExample01", ResourceType: "Patient", Severity: fhir.IssueInfo,
					Message: "birth date 2007 is too coarse to tell the age in whole years; age not used"}}}},
		{"address outside India", edit(t, base, func(m map[string]any) {
			m["address"] = []any{map[string]any{"state": "Kerala", "country": "US"}}
		}), fhir.PatientFacts{Ref: "Patient/CGPatientExample01", Sex: "male", AgeYears: f(55), BirthDate: "1970-05-14"}},
		{"not a patient", json.RawMessage(`{"resourceType":"Practitioner","id":"p"}`),
			fhir.PatientFacts{Issues: []fhir.Issue{{Ref: "Practitioner/p", ResourceType: "Practitioner", Severity: fhir.IssueError,
				Message: "a Patient was expected, got Practitioner"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mapper.ReadPatient(tc.in, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestResources(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		outcome bool
	}{
		{"null", `null`, 0, false},
		{"bundle without type", `{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient"}},{"resource":null},{}]}`, 1, false},
		{"single resource", `{"resourceType":"Patient","id":"1"}`, 1, false},
		{"operation outcome", `{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"timeout","diagnostics":"upstream"}]}`, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fhir.Resources(json.RawMessage(tc.in))
			var oe *fhir.OutcomeError
			if isOutcome := err != nil && asOutcome(err, &oe); isOutcome != tc.outcome {
				t.Fatalf("err = %v, want outcome %v", err, tc.outcome)
			}
			if !tc.outcome && err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("got %d resources, want %d", len(got), tc.want)
			}
		})
	}
	if _, err := fhir.Resources(json.RawMessage(`{"id":"x"}`)); err == nil {
		t.Error("a resource without resourceType was accepted")
	}
}

func asOutcome(err error, target **fhir.OutcomeError) bool {
	oe, ok := err.(*fhir.OutcomeError)
	if ok {
		*target = oe
	}
	return ok
}
