package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestKnowledgeTypesCarryNoFileFormat: the knowledge's domain types
// (knowledge.go, definition.go, names.go) carry no struct tags; the file
// format of knowledge/data belongs to package knowledge (rowtypes.go).
func TestKnowledgeTypesCarryNoFileFormat(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range []string{"knowledge.go", "definition.go", "names.go"} {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if field, ok := n.(*ast.Field); ok && field.Tag != nil {
				t.Errorf("%s: struct tag %s: the file format belongs to package knowledge", fset.Position(field.Pos()), field.Tag.Value)
			}
			return true
		})
	}
}
