package fhir_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
	"github.com/pgxsafety/pgxsafety/fhir"
)

// posVariant builds a Variant Observation placed by GRCh38 position or
// genomic HGVS.
func posVariant(id string, comps map[string]any, zyg string) json.RawMessage {
	var cs []any
	add := func(code string, value map[string]any) {
		c := map[string]any{"code": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": code}}}}
		for k, v := range value {
			c[k] = v
		}
		cs = append(cs, c)
	}
	cc := func(system, code string) map[string]any {
		return map[string]any{"valueCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": system, "code": code}}}}
	}
	for k, v := range comps {
		switch k {
		case "hgvs":
			add(fhir.LOINCGenomicHGVS, cc(fhir.SystemHGVS, v.(string)))
		case "refseq":
			add(fhir.LOINCGenomicRefSeq, cc(fhir.SystemRefSeq, v.(string)))
		case "coord":
			add(fhir.LOINCCoordSystem, cc(fhir.SystemLOINC, v.(string)))
		case "start":
			add(fhir.LOINCAlleleStartEnd, map[string]any{"valueRange": map[string]any{"low": map[string]any{"value": v}}})
		case "ref":
			add(fhir.LOINCRefAllele, map[string]any{"valueString": v})
		case "alt":
			add(fhir.LOINCAltAllele, map[string]any{"valueString": v})
		}
	}
	if zyg != "" {
		add(fhir.LOINCZygosity, cc(fhir.SystemLOINC, map[string]string{"het": fhir.LAHeterozygous, "hom": fhir.LAHomozygous}[zyg]))
	}
	b, _ := json.Marshal(map[string]any{"resourceType": "Observation", "id": id, "status": "final",
		"code":                 map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": fhir.LOINCVariant}}},
		"subject":              map[string]any{"reference": "Patient/p1"},
		"valueCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemLOINC, "code": fhir.LAPresent}}},
		"component":            cs})
	return b
}

// TestPositionVariants: variants given on GRCh38 by genomic HGVS or by
// position go to the engine's position-level matcher; what cannot be
// placed is present but not interpreted, with the reason.
func TestPositionVariants(t *testing.T) {
	const star2 = "NC_000010.11:g.94781859G>A" // CYP2C19*2 (rs4244285) on GRCh38
	g := mapper.ReadGenomics([]json.RawMessage{
		posVariant("h1", map[string]any{"hgvs": star2}, "hom"),
		posVariant("c1", map[string]any{"refseq": "NC_000010.11", "coord": fhir.LAOneBased, "start": 94775367, "ref": "A", "alt": "A"}, "hom"),
		posVariant("d1", map[string]any{"refseq": "NC_000010.11", "coord": fhir.LAOneBased, "start": 94761900, "ref": "CA", "alt": "C"}, ""),
		posVariant("z1", map[string]any{"refseq": "NC_000010.11", "coord": "LA30100-4", "start": 94781858, "ref": "G", "alt": "A"}, "het"),
	}, "p1", "test")
	if d := cmp.Diff([]string{star2}, g.Variants); d != "" {
		t.Errorf("variants (-want +got):\n%s", d)
	}
	if g.Zygosity[star2] != engine.Hom {
		t.Errorf("zygosity %v", g.Zygosity)
	}
	if d := cmp.Diff([]engine.PositionCall{{Chrom: "chr10", Pos: 94775367, Ref: "A", Genotype: "0/0"}}, g.Calls); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	var why []string
	for _, u := range g.Uninterpreted {
		why = append(why, u.Ref+": "+u.Reason)
	}
	if len(why) != 2 || !strings.Contains(why[0], "allelic state") || !strings.Contains(why[1], "not 1-based") {
		t.Errorf("not interpreted: %q", why)
	}
	req := engine.Request{Drug: "clopidogrel"}
	g.Apply(&req)
	res, err := kb.Evaluate(req)
	if err != nil {
		t.Fatal(err)
	}
	// The matcher received the position (PharmCAT's *2 also needs
	// rs12769205, so one position alone is "review", never normal).
	b, _ := json.Marshal(res.Alerts)
	if !strings.Contains(string(b), "94781859") || res.OverallSeverity == engine.SeverityNone {
		t.Errorf("clopidogrel with CYP2C19*2 homozygous by GRCh38 HGVS: %s; %s", res.OverallSeverity, b)
	}
}
