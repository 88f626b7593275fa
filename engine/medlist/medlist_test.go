package medlist_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/medlist"
	"github.com/pgxsafety/pgxsafety/knowledge"
)

// TestSummariseOrdering: drugs by severity, then sensitivity, then list
// order; genes to test by severity, then number of drugs.
func TestSummariseOrdering(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	kb := b.Engine
	unknown := func(gene string, sev engine.Severity) engine.Alert {
		return engine.Alert{Gene: gene, Severity: sev, Category: engine.CategoryUnknown, TestRecommended: true, Action: "test " + gene}
	}
	results := []engine.Result{
		{Drug: "a", DrugNormalised: "a", Confidence: "medium", OverallSeverity: engine.SeverityInfo, Sensitivity: "moderate",
			Alerts: []engine.Alert{unknown("G1", engine.SeverityInfo)}},
		{Drug: "b", DrugNormalised: "b", Confidence: "high", OverallSeverity: engine.SeverityNone, Sensitivity: "none"},
		{Drug: "c", DrugNormalised: "c", Confidence: "low", OverallSeverity: engine.SeverityInfo, Sensitivity: "high",
			Alerts: []engine.Alert{unknown("G2", engine.SeverityInfo), unknown("G1", engine.SeverityInfo)}},
		{Drug: "d", DrugNormalised: "d", Confidence: "high", OverallSeverity: engine.SeverityHigh, Sensitivity: "moderate",
			Alerts: []engine.Alert{{Gene: "G3", Severity: engine.SeverityHigh, Category: engine.CategoryConfirmed, Action: "avoid"}, unknown("G2", engine.SeverityModerate)}},
	}
	for i := range results {
		results[i].DrugRecognised = results[i].Drug != "b"
	}
	got := medlist.Summarise(kb, results)
	want := medlist.Summary{
		Confidence:      "low",
		OverallSeverity: engine.SeverityHigh,
		Drugs: []medlist.Drug{
			{Index: 3, Drug: "d", DrugNormalised: "d", DrugRecognised: true, OverallSeverity: engine.SeverityHigh, Sensitivity: "moderate", Genes: []string{"G3", "G2"}, Action: "avoid"},
			{Index: 2, Drug: "c", DrugNormalised: "c", DrugRecognised: true, OverallSeverity: engine.SeverityInfo, Sensitivity: "high", Genes: []string{"G2", "G1"}, Action: "test G2"},
			{Index: 0, Drug: "a", DrugNormalised: "a", DrugRecognised: true, OverallSeverity: engine.SeverityInfo, Sensitivity: "moderate", Genes: []string{"G1"}, Action: "test G1"},
			{Index: 1, Drug: "b", DrugNormalised: "b", OverallSeverity: engine.SeverityNone, Sensitivity: "none"},
		},
		GenesToTest: []medlist.GeneToTest{
			{Gene: "G2", Drugs: []string{"c", "d"}, HighestSeverity: engine.SeverityModerate},
			{Gene: "G1", Drugs: []string{"a", "c"}, HighestSeverity: engine.SeverityInfo},
		},
		NotCovered: []string{"b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarise (-want +got):\n%s", diff)
	}
}

// TestSharedGenes: drugs that share an actionable gene are named in the
// order listed, with the patient's call for the gene.
func TestSharedGenes(t *testing.T) {
	b, err := knowledge.DefaultBase()
	if err != nil {
		t.Fatalf("load knowledge: %v", err)
	}
	kb := b.Engine
	var results []engine.Result
	for _, d := range []string{"clopidogrel", "citalopram", "paracetamol"} {
		r, err := b.Evaluator.Evaluate(engine.Request{Drug: d, Diplotypes: map[string]string{"CYP2C19": "*2/*2"}})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	got := medlist.Summarise(kb, results).SharedGenes
	var genes []string
	for _, g := range got {
		genes = append(genes, g.Gene)
		if g.Gene == "CYP2C19" {
			if diff := cmp.Diff([]string{"clopidogrel", "citalopram"}, g.Drugs); diff != "" {
				t.Errorf("CYP2C19 drugs (-want +got):\n%s", diff)
			}
			if g.PatientGenotype == nil || g.PatientGenotype.Diplotype != "*2/*2" {
				t.Errorf("CYP2C19 patient genotype = %+v", g.PatientGenotype)
			}
		}
	}
	if diff := cmp.Diff([]string{"CYP2C19"}, genes); diff != "" {
		t.Errorf("shared genes (-want +got):\n%s", diff)
	}
}
