package igvalidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
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
	// tasks[i] are the instances answered by in.Tasks[slot[i]]: an
	// invariant that does not look at the whole resource (%resource,
	// %rootResource) is evaluated once per distinct element value.
	var tasks []*InvariantTask
	var slot []int
	seen := map[string]int{}
	encoded := map[uintptr][]byte{} // a node's JSON, by the map or slice behind it
	nodeJSON := func(n any) []byte {
		rv := reflect.ValueOf(n)
		if k := rv.Kind(); k == reflect.Map || k == reflect.Slice {
			if b, ok := encoded[rv.Pointer()]; ok {
				return b
			}
			b, _ := json.Marshal(n)
			encoded[rv.Pointer()] = b
			return b
		}
		b, _ := json.Marshal(n)
		return b
	}
	for i, t := range targets {
		in.Resources = append(in.Resources, t.Resource)
		for j := range t.tasks {
			tk := &t.tasks[j]
			tk.Resource = i
			key := ""
			if !strings.Contains(tk.Expression, "%") {
				key = tk.Base + "\x00" + tk.Expression + "\x00" + string(nodeJSON(tk.Node))
				if k, ok := seen[key]; ok {
					tasks, slot = append(tasks, tk), append(slot, k)
					continue
				}
			}
			if key != "" {
				seen[key] = len(in.Tasks)
			}
			tasks, slot = append(tasks, tk), append(slot, len(in.Tasks))
			in.Tasks = append(in.Tasks, *tk)
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
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(in.Tasks) {
		return nil, nil, fmt.Errorf("igvalidate: node answered %d results for %d invariants (%v)", len(out), len(in.Tasks), err)
	}
	for i, t := range tasks {
		r := out[slot[i]]
		if r.OK {
			continue
		}
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
