package igvalidate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Entry is one resource of a set checked together (a Bundle's entries).
type Entry struct {
	FullURL  string
	Resource map[string]any
}

// Entries returns the resources of raw: a Bundle's entries (nested
// Bundles opened), or raw itself.
func Entries(raw []byte) ([]Entry, error) {
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return entriesOf(res, ""), nil
}

func entriesOf(res map[string]any, full string) []Entry {
	if res["resourceType"] != "Bundle" {
		return []Entry{{FullURL: full, Resource: res}}
	}
	var out []Entry
	for _, e := range values(res, "entry") {
		m, _ := e.(map[string]any)
		r, _ := m["resource"].(map[string]any)
		f, _ := m["fullUrl"].(string)
		if r != nil {
			out = append(out, entriesOf(r, f)...)
		}
	}
	return out
}

// nameOf is "Type/id" or the entry's fullUrl.
func nameOf(e Entry, i int) string {
	rt, _ := e.Resource["resourceType"].(string)
	if id, _ := e.Resource["id"].(string); id != "" {
		return rt + "/" + id
	}
	if e.FullURL != "" {
		return e.FullURL
	}
	return fmt.Sprintf("%s (entry %d)", rt, i+1)
}

// CheckSet checks every resource of the set that claims a known profile
// (references resolved within the set, by fullUrl or Type/id) and
// returns the structure problems, the targets for Invariants and the
// number of resources checked against a profile. requireProfile lists
// resource types that must claim one of the known profiles.
func (v *Validator) CheckSet(entries []Entry, requireProfile ...string) ([]Problem, []*Target, int) {
	byRef := map[string]map[string]any{}
	for _, e := range entries {
		if e.FullURL != "" {
			byRef[e.FullURL] = e.Resource
		}
		rt, _ := e.Resource["resourceType"].(string)
		if id, _ := e.Resource["id"].(string); id != "" {
			byRef[rt+"/"+id] = e.Resource
		}
	}
	resolve := func(ref string) map[string]any {
		if r := byRef[ref]; r != nil {
			return r
		}
		// An absolute URL ending in Type/id.
		parts := strings.Split(ref, "/")
		if len(parts) >= 2 {
			return byRef[parts[len(parts)-2]+"/"+parts[len(parts)-1]]
		}
		return nil
	}
	var problems []Problem
	var targets []*Target
	n := 0
	for i, e := range entries {
		name := nameOf(e, i)
		ps := v.ProfilesOf(e.Resource)
		rt, _ := e.Resource["resourceType"].(string)
		if len(ps) == 0 {
			for _, want := range requireProfile {
				if rt == want {
					problems = append(problems, Problem{Resource: name, Rule: "profile", Path: rt, Message: "claims none of the Genomics Reporting profiles checked"})
				}
			}
			continue
		}
		for _, p := range ps {
			ps, t := v.Check(name, e.Resource, p, resolve)
			problems = append(problems, ps...)
			targets = append(targets, t)
			n++
		}
	}
	return problems, targets, n
}
