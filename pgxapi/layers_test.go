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
// audit entry, writes neither the audit log nor the feedback store (by
// call: no .Append or .AppendFeedback except a decorator forwarding its
// own), and reads no environment variable.
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

// storeMethods are the methods that write the audit log or the feedback
// table. Only engine/service calls them; a surface may call one only to
// forward it from a method of the same name (a decorator such as
// httpx.AuditIDs).
var storeMethods = map[string]bool{"Append": true, "AppendFeedback": true}

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
	inspect := func(fn string, root ast.Node) {
		ast.Inspect(root, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && forbiddenMethods[sel.Sel.Name] {
					out = append(out, violation{n.Pos(), "calls ." + sel.Sel.Name + ": the evaluation is reached only through engine/service"})
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && storeMethods[sel.Sel.Name] && sel.Sel.Name != fn {
					if x, ok := sel.X.(*ast.Ident); !ok || imports[x.Name] == "" {
						out = append(out, violation{n.Pos(), "calls ." + sel.Sel.Name + ": only engine/service writes the audit log and the feedback store"})
					}
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
	}
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		inspect(fn, d)
	}
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
}
func g(ctx context.Context, a audit.Appender, fs service.FeedbackStore) {
	_, _ = a.Append(ctx, e)
	_, _ = fs.AppendFeedback(ctx, nil, nil)
}
type tap struct{ next audit.Appender }
func (t tap) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) { return t.next.Append(ctx, e) }`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(violations(f)); got != 10 {
		t.Errorf("found %d violations, want 10 (the forwarding Append passes): %+v", got, violations(f))
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

// tableFile is the one file that maps error kinds to statuses and
// declares the problem types (httpx's table of kinds).
const tableFile = "pgxapi/httpx/errors.go"

// TestOneErrorTable: no surface file but the table picks an error status
// (an http.Status constant of 400 or more, or such a number other than in
// a comparison or a product) or declares a problem type: every error response of REST,
// CDS Hooks and the SMART pages takes them from httpx's kinds.
func TestOneErrorTable(t *testing.T) {
	errorStatus := httpErrorStatuses(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range surfaces(t) {
		if strings.HasSuffix(p.path, "test") { // test doubles (smarttest)
			continue
		}
		for _, name := range p.files {
			path := filepath.Join(p.dir, name)
			if rel, _ := filepath.Rel(root, path); filepath.ToSlash(rel) == tableFile {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, v := range statusViolations(f, errorStatus) {
				t.Errorf("%s: %s", fset.Position(v.pos), v.what)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}

// httpErrorStatuses reads the names of net/http's status constants of 400
// and more from the standard library's source.
func httpErrorStatuses(t *testing.T) map[string]bool {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http", "status.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.INT {
			if v, err := strconv.Atoi(lit.Value); err == nil && v >= 400 {
				out[vs.Names[0].Name] = true
			}
		}
		return true
	})
	if !out["StatusBadRequest"] || !out["StatusServiceUnavailable"] || out["StatusOK"] {
		t.Fatalf("reading %s found %d error statuses, not the expected set", path, len(out))
	}
	return out
}

// statusViolations lists where f picks an error status or declares a
// problem type.
func statusViolations(f *ast.File, errorStatus map[string]bool) []violation {
	httpName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"net/http"` {
			httpName = "http"
			if imp.Name != nil {
				httpName = imp.Name.Name
			}
		}
	}
	notStatus := map[ast.Expr]bool{} // compared (reading a status) or scaled (500 * time.Millisecond)
	var out []violation
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS, token.GTR, token.LEQ, token.GEQ, token.EQL, token.NEQ, token.MUL:
				notStatus[n.X], notStatus[n.Y] = true, true
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && httpName != "" && x.Name == httpName && errorStatus[n.Sel.Name] {
				out = append(out, violation{n.Pos(), "uses http." + n.Sel.Name + ": error statuses come from httpx's table of kinds"})
			}
		case *ast.BasicLit:
			switch n.Kind {
			case token.INT:
				if v, err := strconv.Atoi(n.Value); err == nil && v >= 400 && v <= 599 && !notStatus[n] {
					out = append(out, violation{n.Pos(), "writes the status " + n.Value + ": error statuses come from httpx's table of kinds"})
				}
			case token.STRING:
				if strings.Contains(n.Value, "urn:pgxsafety:problem:") {
					out = append(out, violation{n.Pos(), "declares a problem type: problem types are declared in " + tableFile})
				}
			}
		}
		return true
	})
	return out
}

// TestErrorTableRuleCatchesViolations: the checker finds each way of
// picking a status or a problem type, and lets comparisons and success
// codes pass.
func TestErrorTableRuleCatchesViolations(t *testing.T) {
	src := `package bad
import (
	"net/http"
	"time"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)
const TypeX = "urn:pgxsafety:problem:x"
func f(w http.ResponseWriter, status int) error {
	if status >= 500 || status == 404 {
		w.WriteHeader(http.StatusOK)
	}
	_ = 500 * time.Millisecond
	http.Redirect(w, nil, "/", http.StatusSeeOther)
	w.WriteHeader(http.StatusTeapot)
	w.WriteHeader(503)
	return &httpx.Error{Kind: httpx.KindMalformed, Detail: "x"}
}`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := statusViolations(f, httpErrorStatuses(t))
	if len(got) != 3 {
		t.Errorf("found %d violations, want 3 (the URN, StatusTeapot, 503): %+v", len(got), got)
	}
}
