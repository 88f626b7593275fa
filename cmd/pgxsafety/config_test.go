package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvironmentReadOnlyInConfig: config.go is the only file of the
// binary that reads the environment (the surfaces read none: see
// pgxapi/layers_test.go).
func TestEnvironmentReadOnlyInConfig(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	readers := map[string]bool{"Getenv": true, "LookupEnv": true, "Environ": true}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "config.go" {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && readers[sel.Sel.Name] {
					t.Errorf("%s: os.%s outside config.go", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
