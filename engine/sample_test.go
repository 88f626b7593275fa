package engine_test

import (
	"errors"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/engine/calling"
)

// TestEvaluateSample: a drug check on a sample's calls (the VCF path):
// CYP2C19 *2/*2 from every definition position gives the clopidogrel
// HIGH alert; variants in the request are refused.
func TestEvaluateSample(t *testing.T) {
	k := kb(t)
	d, _ := k.Caller().Definition("CYP2C19")
	alt := map[string]string{"rs12769205": "G", "rs4244285": "A", "rs3758581": "G"}
	var obs []calling.PositionObservation
	for _, p := range d.Positions {
		o := calling.PositionObservation{Chrom: d.Chromosome, Pos: p.Pos, Ref: p.Ref, Alts: p.Alts, GT: []int{0, 0}, Source: "test"}
		if a, ok := alt[p.RsID]; ok {
			o.Alts, o.GT = []string{a}, []int{1, 1}
		}
		obs = append(obs, o)
	}
	sc := k.Caller().CallSample(obs, calling.CallOptions{})
	res, err := k.EvaluateSample(engine.Request{Drug: "clopidogrel", Indication: "PCI"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.OverallSeverity != engine.SeverityHigh || len(res.Genotype) != 1 || res.Genotype[0].Diplotype != "*2/*2" {
		t.Fatalf("overall %s genotype %+v", res.OverallSeverity, res.Genotype)
	}
	_, err = k.EvaluateSample(engine.Request{Drug: "clopidogrel", Variants: []string{"rs4244285"}}, sc)
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || ve.Fields[0].Field != "variants" {
		t.Errorf("variants with a sample: err %v", err)
	}
}
