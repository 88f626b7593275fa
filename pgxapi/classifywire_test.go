package pgxapi_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// TestClassificationWireCoversResult: every exported field of the
// classifier's result types has a field of the same name in its wire
// form, so a fact the classifier adds cannot silently stay off the wire.
func TestClassificationWireCoversResult(t *testing.T) {
	notOnWire := map[string]bool{"Citation.Target": true, "RuleResult.RuleSpec": true}
	pairs := []struct{ engine, wire any }{
		{classify.Result{}, pgxapi.Classification{}},
		{classify.VariantInfo{}, pgxapi.ClassifiedVariant{}},
		{classify.KnownVariant{}, pgxapi.KnownVariant{}},
		{classify.ESM{}, pgxapi.ESMSection{}},
		{classify.Conservation{}, pgxapi.Conservation{}},
		{classify.ResidueConservation{}, pgxapi.ResidueConservation{}},
		{classify.AlignmentStatus{}, pgxapi.AlignmentStatus{}},
		{classify.ESMConstants{}, pgxapi.ESMConstants{}},
		{classify.Population{}, pgxapi.PopulationSection{}},
		{classify.PopulationRecord{}, pgxapi.PopulationRecord{}},
		{classify.GraphSection{}, pgxapi.GraphSection{}},
		{classify.Synthesis{}, pgxapi.SynthesisSection{}},
		{classify.RuleResult{}, pgxapi.RuleResult{}},
		{classify.RuleSpec{}, pgxapi.ClassifierRule{}},
		{classify.Citation{}, pgxapi.ClassifierCitation{}},
	}
	for _, p := range pairs {
		et, wt := reflect.TypeOf(p.engine), reflect.TypeOf(p.wire)
		for i := 0; i < et.NumField(); i++ {
			f := et.Field(i)
			if !f.IsExported() || notOnWire[et.Name()+"."+f.Name] {
				continue
			}
			if _, ok := wt.FieldByName(f.Name); !ok {
				t.Errorf("classify.%s.%s has no wire field in pgxapi.%s: map it in classifywire.go", et.Name(), f.Name, wt.Name())
			}
		}
	}
}

// TestClassifierCitationPaths: each typed citation target becomes the
// JSON path the classifier's answers have always given.
func TestClassifierCitationPaths(t *testing.T) {
	cases := []struct {
		target classify.CitationTarget
		want   string
	}{
		{classify.CitationTarget{Kind: classify.CitesMatrix}, "esm.blosum62"},
		{classify.CitationTarget{Kind: classify.CitesResidueEntropy}, "esm.residue_only.ref_entropy_bits"},
		{classify.CitationTarget{Kind: classify.CitesSiteLogOdds}, "esm.site_log_odds"},
		{classify.CitationTarget{Kind: classify.CitesReferenceVerified}, "variant.reference_verified"},
		{classify.CitationTarget{Kind: classify.CitesKnownVariant, Index: 1}, "variant.known_variants[1]"},
		{classify.CitationTarget{Kind: classify.CitesFrequencyIndia, Index: 0}, "population.records[0].af_india"},
		{classify.CitationTarget{Kind: classify.CitesFrequencyGlobal, Index: 2}, "population.records[2].af_global"},
		{classify.CitationTarget{Kind: classify.CitesClinVar, Index: 0}, "population.records[0].clinvar_significance"},
		{classify.CitationTarget{Kind: classify.CitesGraphRow, Index: 7}, "graph.rows[7]"},
		{classify.CitationTarget{}, "unknown[0]"},
	}
	for _, c := range cases {
		if got := pgxapi.ClassifierFieldPath(c.target); got != c.want {
			t.Errorf("ClassifierFieldPath(%+v) = %q, want %q", c.target, got, c.want)
		}
	}
}

// TestClassifierCitationsResolve: in real classifications, every cited
// path names a field present in the wire JSON.
func TestClassifierCitationsResolve(t *testing.T) {
	cls, err := classify.New(kb.Knowledge, ck)
	if err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile(`^([a-z0-9_]+)(?:\[(\d+)\])?$`)
	for _, req := range []classify.Request{
		{Gene: "CYP2C9", ProteinChange: "p.Arg144Cys"},
		{Gene: "NUDT15", Variant: "rs116855232"},
		{Gene: "VKORC1", ProteinChange: "p.Arg58Gly"},
	} {
		res, err := cls.Classify(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(pgxapi.ClassificationOf(res))
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		cites := doc.(map[string]any)["source_citations"].([]any)
		if len(cites) == 0 {
			t.Errorf("%+v: no citations", req)
		}
		for _, c := range cites {
			path := c.(map[string]any)["field"].(string)
			var cur any = doc
			for _, part := range strings.Split(path, ".") {
				m := step.FindStringSubmatch(part)
				obj, ok := cur.(map[string]any)
				if m == nil || !ok {
					cur = nil
					break
				}
				cur = obj[m[1]]
				if m[2] != "" {
					i, _ := strconv.Atoi(m[2])
					arr, ok := cur.([]any)
					if !ok || i >= len(arr) {
						cur = nil
						break
					}
					cur = arr[i]
				}
			}
			if cur == nil {
				t.Errorf("%+v: citation path %q names no field of the answer", req, path)
			}
		}
	}
}
