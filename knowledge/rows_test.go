package knowledge

import (
	"reflect"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine"
)

// TestRowsEngineCarriesEveryField fills every field of every row with a
// non-zero value and checks that Engine sets every exported field of the
// engine's knowledge (but Version, which loading sets): a field added to a
// row or to an engine type and not converted fails here.
func TestRowsEngineCarriesEveryField(t *testing.T) {
	var r Rows
	fill(reflect.ValueOf(&r).Elem())
	kb := r.Engine()
	kb.Version = engine.Version{Digest: "x", Label: "x", DataVersions: map[string]string{"x": "x"}}
	for _, path := range zeroFields(reflect.ValueOf(*kb), "Knowledge") {
		t.Errorf("%s is not set from the rows", path)
	}
}

// TestRowTypesMatchEngine: each row type has the fields of the engine type
// of the same name, in the same order.
func TestRowTypesMatchEngine(t *testing.T) {
	pairs := []struct{ row, eng any }{
		{Source{}, engine.Source{}}, {Drug{}, engine.Drug{}}, {DrugPair{}, engine.DrugPair{}},
		{Gene{}, engine.Gene{}}, {Allele{}, engine.Allele{}}, {AlleleVariant{}, engine.AlleleVariant{}},
		{PhenotypeRule{}, engine.PhenotypeRule{}}, {RsID{}, engine.RsID{}},
		{Recommendation{}, engine.Recommendation{}}, {TrackedVariant{}, engine.TrackedVariant{}},
		{HLAAllele{}, engine.HLAAllele{}}, {State{}, engine.State{}}, {StateRisk{}, engine.StateRisk{}},
		{Community{}, engine.Community{}}, {HerbInteraction{}, engine.HerbInteraction{}},
		{FlowChart{}, engine.FlowChart{}}, {FlowChartNode{}, engine.FlowChartNode{}}, {Version{}, engine.Version{}},
		{GeneDefinition{}, engine.GeneDefinition{}}, {PriorityRule{}, engine.PriorityRule{}},
		{DefinedPosition{}, engine.DefinedPosition{}}, {DefinedAllele{}, engine.DefinedAllele{}},
		{AlleleCell{}, engine.AlleleCell{}}, {DrugName{}, engine.DrugName{}}, {IndicationCode{}, engine.IndicationCode{}},
	}
	for _, p := range pairs {
		rt, et := reflect.TypeOf(p.row), reflect.TypeOf(p.eng)
		if rt.NumField() != et.NumField() {
			t.Errorf("%s has %d fields, engine.%s %d", rt.Name(), rt.NumField(), et.Name(), et.NumField())
			continue
		}
		for i := range rt.NumField() {
			if rt.Field(i).Name != et.Field(i).Name {
				t.Errorf("%s field %d is %s, engine.%s's is %s", rt.Name(), i, rt.Field(i).Name, et.Name(), et.Field(i).Name)
			}
		}
	}
}

// fill sets every settable part of v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// zeroFields lists the paths of the exported fields of v that are zero.
func zeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(v.Elem(), path)
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		return zeroFields(v.Index(0), path+"[0]")
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, zeroFields(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	default:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
}
