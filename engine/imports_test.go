package engine_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path of this module.
const module = "github.com/pgxsafety/pgxsafety"

// forbiddenInEngine are the packages (and their subpackages) the pure
// domain root must never reach (DESIGN.md §1).
var forbiddenInEngine = []string{
	"net/http",
	"database/sql",
	"github.com/google/fhir",
	"go.uber.org/zap",
}

// sqlStorePackage is the one engine subpackage allowed to use SQL.
const sqlStorePackage = module + "/engine/audit/sqlstore"

// transparencyLibraries are the only non-standard packages engine may
// import: engine/audit stands on transparency-dev/merkle, its checkpoint
// format and x/mod/sumdb/note (DESIGN.md §1). They are pure.
var transparencyLibraries = []string{
	"github.com/transparency-dev/merkle",
	"github.com/transparency-dev/formats/log",
	"golang.org/x/mod/sumdb/note",
	// engine/vcf reads BGZF files by region through their tabix index
	// with biogo/hts's bgzf, bgzf/index and tabix packages (and their
	// internal index code); pure Go, standard library only.
	"github.com/biogo/hts/bgzf",
	"github.com/biogo/hts/tabix",
	"github.com/biogo/hts/csi",
	"github.com/biogo/hts/internal",
}

func within(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// TestEngineImports enforces the import rules of DESIGN.md §1 on the
// non-test dependencies of engine and its subpackages (except sqlstore):
// only the standard library, engine's own packages and the transparency
// libraries, and in particular
// none of net/http, database/sql, the FHIR protos or zap.
func TestEngineImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH; cannot run go list")
	}
	// The test runs in the engine directory.
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderrOf(err))
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if !within(p, sqlStorePackage) {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... found no engine packages")
	}

	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{join .Imports \",\"}}"}, pkgs...)
	out, err = exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderrOf(err))
	}
	// importers maps each dependency to the dependencies that import it,
	// so a violation names the import that causes it.
	importers := map[string][]string{}
	standard := map[string]bool{}
	var deps []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		deps = append(deps, fields[0])
		standard[fields[0]] = fields[1] == "true"
		if len(fields) == 3 {
			for _, imp := range strings.Split(fields[2], ",") {
				importers[imp] = append(importers[imp], fields[0])
			}
		}
	}
	forbidden := func(pkg string) bool {
		for _, f := range forbiddenInEngine {
			if within(pkg, f) {
				return true
			}
		}
		return false
	}
	for _, path := range deps {
		// Report where a bad dependency enters (its importers that are
		// not bad themselves), not everything below it.
		if forbidden(path) {
			var entry []string
			for _, by := range importers[path] {
				if !forbidden(by) {
					entry = append(entry, by)
				}
			}
			if len(entry) > 0 {
				t.Errorf("engine reaches %s, imported by %s (forbidden: the domain root is pure)", path, strings.Join(entry, ", "))
			}
		}
		if !standard[path] && !within(path, module+"/engine") && !transparencyLibrary(path) {
			var entry []string
			for _, by := range importers[path] {
				if within(by, module+"/engine") {
					entry = append(entry, by)
				}
			}
			if len(entry) > 0 {
				t.Errorf("%s imports %s: engine may import only the standard library and its own subpackages",
					strings.Join(entry, ", "), path)
			}
		}
	}
}

func transparencyLibrary(pkg string) bool {
	for _, l := range transparencyLibraries {
		if within(pkg, l) {
			return true
		}
	}
	return false
}

// partRules are the engine packages whose imports inside engine are
// bounded (docs/architecture.md): the root imports no engine package; the
// allele caller, the drug-name reader and the population selector import
// only the root, never each other or the evaluation; only the evaluation
// joins them. The medication-list summary and the India panel read the
// root's rows and results only (the panel shares the summary's reading of
// actionable genes). The outside-call readers (engine/outside) read only
// the bytes they are given: the root at most, never the caller or the
// evaluation; the allele caller may use them (a check's outside_calls are
// evidence it judges). A package not listed here (service, labcsv, vcfcall, …) may
// use any of them.
var partRules = map[string][]string{
	module + "/engine":            {},
	module + "/engine/calling":    {module + "/engine", module + "/engine/outside"},
	module + "/engine/drugnames":  {module + "/engine"},
	module + "/engine/population": {module + "/engine"},
	module + "/engine/medlist":    {module + "/engine"},
	module + "/engine/indiapanel": {module + "/engine", module + "/engine/medlist"},
	module + "/engine/outside":    {module + "/engine"},
	module + "/engine/evaluate": {
		module + "/engine", module + "/engine/calling", module + "/engine/outside",
		module + "/engine/drugnames", module + "/engine/population",
	},
}

// TestEnginePartBoundaries enforces partRules on every dependency, direct
// or not, of each bounded package: a part reaches no other engine package
// than those it is allowed, even through a third package.
func TestEnginePartBoundaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH; cannot run go list")
	}
	for pkg, allowed := range partRules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderrOf(err))
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg || !within(dep, module+"/engine") || slices.Contains(allowed, dep) {
				continue
			}
			t.Errorf("%s depends on %s; it may reach only %v inside engine", pkg, dep, allowed)
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
