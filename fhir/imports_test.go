package fhir_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyFHIRImportsGoogleFHIR: package fhir is the only package of the
// module that imports github.com/google/fhir/go (DESIGN.md §1).
func TestOnlyFHIRImportsGoogleFHIR(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/pgxsafety/pgxsafety/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "github.com/pgxsafety/pgxsafety/fhir" {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "github.com/google/fhir/") {
				t.Errorf("%s imports %s; only package fhir may", fields[0], imp)
			}
		}
	}
}
