package pgxapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layer rules of the surfaces (docs/architecture.md): pgxapi, httpx
// and cdshooks reach the engine's evaluation, the classifier and the audit
// log only through the service layer (engine/service), and reach no
// infrastructure: no SQL driver, no Redis, no environment. cmd builds the
// infrastructure and hands it in. Two packages under these trees are not
// surfaces and are exempt: pgxapi/httpx/redisstore (the Redis adapters cmd
// builds) and pgxapi/internal/labcsvgen (a test-data generator).

const mod = "github.com/pgxsafety/pgxsafety"

// surfacePatterns are the packages the rules hold for.
var surfacePatterns = []string{"./...", "../cdshooks/..."}

var exempt = map[string]bool{
	mod + "/pgxapi/httpx/redisstore":       true,
	mod + "/pgxapi/internal/labcsvgen":     true,
	mod + "/pgxapi/internal/labcsvgen/cmd": true,
}

// forbiddenDeps may not be among the (transitive, non-test) dependencies
// of a surface. database/sql itself is not listed: the Prometheus
// collectors package imports it (for its DB-stats collector) without a
// driver; the drivers and sqlx are what would let a surface reach a
// database.
var forbiddenDeps = []string{
	"github.com/jackc/pgx",
	"modernc.org/sqlite",
	"github.com/jmoiron/sqlx",
	"github.com/redis/go-redis",
	"github.com/go-redis/redis_rate",
	mod + "/engine/audit/sqlstore",
}

// forbiddenImports may not be imported by a surface: the evaluation
// (engine/evaluate) is reached only through engine/service, which gives a
// surface the knowledge, the drug-name reader and the allele caller but no
// evaluation engine.
var forbiddenImports = []string{
	mod + "/engine/evaluate",
}

// forbiddenCalls are package-level functions a surface may not call: the
// evaluation engine's constructor, the classifier's, the lab CSV
// processor (all behind engine/service) and the environment (read in
// cmd).
var forbiddenCalls = map[string]map[string]bool{
	mod + "/engine/evaluate": {"New": true},
	mod + "/engine/classify": {"New": true},
	mod + "/engine/labcsv":   {"NewProcessor": true},
	"os":                     {"Getenv": true, "LookupEnv": true, "Environ": true},
}

// forbiddenMethods are method names a surface may not call on anything:
// the evaluation's entry points (evaluate.Engine.Evaluate, EvaluateSample),
// so that no value handed to a surface is used to answer outside the
// service layer.
var forbiddenMethods = map[string]bool{"Evaluate": true, "EvaluateSample": true}

type surfacePkg struct {
	path  string
	dir   string
	files []string
	deps  []string
}

func surfaces(t *testing.T) []surfacePkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is not on PATH: the layer rules cannot be checked")
	}
	args := append([]string{"list", "-deps=false", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .Deps \" \"}}"}, surfacePatterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []surfacePkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("go list line %q", line)
		}
		if exempt[f[0]] {
			continue
		}
		pkgs = append(pkgs, surfacePkg{path: f[0], dir: f[1], files: strings.Fields(f[2]), deps: strings.Fields(f[3])})
	}
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d surface packages", len(pkgs))
	}
	return pkgs
}

// TestSurfacesReachNoInfrastructure: no SQL driver, sqlx, Redis
// or audit store among a surface's dependencies.
func TestSurfacesReachNoInfrastructure(t *testing.T) {
	for _, p := range surfaces(t) {
		for _, d := range p.deps {
			for _, f := range forbiddenDeps {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s: infrastructure is built in cmd and handed in", p.path, d)
				}
			}
		}
	}
}

// TestSurfacesUseTheServiceLayer: a surface calls neither the engine's
// evaluation nor the classifier nor the CSV processor directly, builds no
// audit entry, and reads no environment variable.
func TestSurfacesUseTheServiceLayer(t *testing.T) {
	checked := 0
	for _, p := range surfaces(t) {
		for _, name := range p.files {
			path := filepath.Join(p.dir, name)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, v := range violations(f) {
				t.Errorf("%s: %s", fset.Position(v.pos), v.what)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no files checked")
	}
}

type violation struct {
	pos  token.Pos
	what string
}

// violations lists the forbidden imports, calls and audit entry literals
// of f.
func violations(f *ast.File) []violation {
	imports := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	var out []violation
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, bad := range forbiddenImports {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				out = append(out, violation{imp.Pos(), "imports " + p + ": go through engine/service"})
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && forbiddenMethods[sel.Sel.Name] {
				out = append(out, violation{n.Pos(), "calls ." + sel.Sel.Name + ": the evaluation is reached only through engine/service"})
			}
		case *ast.SelectorExpr:
			x, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			if p, ok := imports[x.Name]; ok && forbiddenCalls[p][n.Sel.Name] {
				out = append(out, violation{n.Pos(), "uses " + p + "." + n.Sel.Name + ": go through engine/service (or cmd for the environment)"})
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] == mod+"/engine/audit" && sel.Sel.Name == "Entry" {
					out = append(out, violation{n.Pos(), "builds an audit.Entry: only engine/service appends audit entries"})
				}
			}
		}
		return true
	})
	return out
}

// TestLayerRuleCatchesViolations: the checker finds each kind of
// violation in a file that commits them.
func TestLayerRuleCatchesViolations(t *testing.T) {
	src := `package bad
import (
	"os"
	"github.com/pgxsafety/pgxsafety/engine"
	cls "github.com/pgxsafety/pgxsafety/engine/classify"
	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/evaluate"
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
)
func f(kb *engine.Knowledge, held interface{ Evaluate(engine.Request) (engine.Result, error) }) {
	e, _ := evaluate.New(kb)
	_, _ = e.Evaluate(engine.Request{})
	_, _ = held.Evaluate(engine.Request{})
	_, _ = cls.New(kb)
	_ = labcsv.NewProcessor(kb, labcsv.Options{})
	_ = os.Getenv("X")
	_ = audit.Entry{}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(violations(f)); got != 8 {
		t.Errorf("found %d violations, want 8: %+v", got, violations(f))
	}
}
