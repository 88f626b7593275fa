package classify_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestResultCarriesNoWireFormat: the classifier's answer (Result and its
// parts) carries no struct tags; its REST names and citation paths belong
// to pgxapi (classifywire.go). The knowledge types that are the format of
// the classifier_*.json files, and the substrate document's types, may.
func TestResultCarriesNoWireFormat(t *testing.T) {
	result := map[string]bool{
		"Result": true, "VariantInfo": true, "KnownVariant": true, "ESM": true, "AlignmentStatus": true,
		"GraphSection": true, "Conservation": true, "ResidueConservation": true, "Population": true,
		"PopulationRecord": true, "Synthesis": true, "RuleResult": true, "Citation": true, "CitationTarget": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !result[ts.Name.Name] {
					continue
				}
				seen[ts.Name.Name] = true
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					if field.Tag != nil {
						t.Errorf("%s: %s has struct tag %s: the wire names belong to pgxapi", fset.Position(field.Pos()), ts.Name.Name, field.Tag.Value)
					}
				}
			}
		}
	}
	for name := range result {
		if !seen[name] {
			t.Errorf("type %s not found: update the list", name)
		}
	}
}
