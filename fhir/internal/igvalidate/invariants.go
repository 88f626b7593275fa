package igvalidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Invariants evaluates the FHIRPath invariants collected by Check for
// every target, with node and the fhirpath.js release vendored in
// testdata/fhirpath (run by testdata/run-invariants.mjs; dir is that
// testdata folder). An invariant of severity error that does not hold is a
// Problem named by its key; a warning one is returned apart. An invariant
// whose expression evaluates to an empty collection is taken as holding.
func Invariants(dir string, targets []*Target) (errs, warnings []Problem, err error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, nil, fmt.Errorf("igvalidate: node is needed to evaluate FHIRPath invariants: %w", err)
	}
	var in struct {
		Tasks     []InvariantTask  `json:"tasks"`
		Resources []map[string]any `json:"resources"`
	}
	var tasks []*InvariantTask
	for i, t := range targets {
		in.Resources = append(in.Resources, t.Resource)
		for j := range t.tasks {
			t.tasks[j].Resource = i
			in.Tasks = append(in.Tasks, t.tasks[j])
			tasks = append(tasks, &t.tasks[j])
		}
	}
	if len(tasks) == 0 {
		return nil, nil, nil
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(node, filepath.Join(dir, "run-invariants.mjs"))
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("igvalidate: node: %w: %s", err, stderr.String())
	}
	var out []struct {
		OK    bool   `json:"ok"`
		Value string `json:"value"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(tasks) {
		return nil, nil, fmt.Errorf("igvalidate: node answered %d results for %d invariants (%v)", len(out), len(tasks), err)
	}
	for i, r := range out {
		if r.OK {
			continue
		}
		t := tasks[i]
		msg := fmt.Sprintf("invariant %s does not hold: %s (result %s)", t.Key, t.Expression, r.Value)
		if r.Error != "" {
			msg = fmt.Sprintf("invariant %s could not be evaluated: %s", t.Key, r.Error)
		}
		p := Problem{Resource: t.target.Name, Rule: t.Key, Path: t.path, Message: msg}
		if t.severity == "error" || r.Error != "" {
			errs = append(errs, p)
		} else {
			warnings = append(warnings, p)
		}
	}
	return errs, warnings, nil
}
