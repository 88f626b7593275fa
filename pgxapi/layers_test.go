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
// infrastructure: no SQL driver, no Redis, no environment, nothing of cmd
// (the Redis adapters live in cmd/pgxsafety/internal/redisstore). cmd
// builds the infrastructure and hands it in, as interfaces the surfaces
// declare (httpx.RateStore, cdshooks.ReplayCache, service.FeedbackStore).
// One package under these trees is not a surface and is exempt:
// pgxapi/internal/labcsvgen (a test-data generator).

const mod = "github.com/pgxsafety/pgxsafety"

// surfacePatterns are the packages the rules hold for.
var surfacePatterns = []string{"./...", "../cdshooks/..."}

var exempt = map[string]bool{
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
	mod + "/cmd",
}

// forbiddenCalls are package-level functions a surface may not call: the
// engine's evaluation, the classifier's constructor, the lab CSV
// processor (all behind engine/service) and the environment (read in
// cmd).
var forbiddenCalls = map[string]map[string]bool{
	mod + "/engine":          {"Evaluate": true},
	mod + "/engine/classify": {"New": true},
	mod + "/engine/labcsv":   {"NewProcessor": true},
	"os":                     {"Getenv": true, "LookupEnv": true, "Environ": true},
}

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

// violations lists the forbidden calls and audit entry literals of f.
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
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
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
	"github.com/pgxsafety/pgxsafety/engine/labcsv"
)
func f(kb *engine.Knowledge) {
	_, _ = engine.Evaluate(kb, engine.Request{})
	_, _ = cls.New(kb)
	_ = labcsv.NewProcessor(kb, labcsv.Options{})
	_ = os.Getenv("X")
	_ = audit.Entry{}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(violations(f)); got != 5 {
		t.Errorf("found %d violations, want 5: %+v", got, violations(f))
	}
}

// TestOnlyCmdImportsRedis: the Redis client libraries are imported (not
// only depended on) by packages under cmd alone; the surfaces see the
// interfaces they declare.
func TestOnlyCmdImportsRedis(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "\t")
		n++
		for _, imp := range strings.Fields(imports) {
			redis := strings.HasPrefix(imp, "github.com/redis/go-redis") || strings.HasPrefix(imp, "github.com/go-redis/redis_rate")
			if redis && !strings.HasPrefix(pkg, mod+"/cmd/") {
				t.Errorf("%s imports %s: only cmd dials Redis", pkg, imp)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list found only %d packages", n)
	}
}
