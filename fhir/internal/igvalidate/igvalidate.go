// Package igvalidate checks FHIR R4 JSON resources against the snapshots
// of Genomics Reporting IG 3.0.0 StructureDefinitions (testdata/ig, CC0):
// element cardinalities, fixed and pattern values, required bindings
// whose value set can be enumerated, slicing by the discriminators the
// profile names, and the profile's FHIRPath invariants (evaluated by the
// vendored fhirpath.js under node, see Invariants). It is imported by
// tests only; the structure of a resource (R4 datatypes and codes) is
// checked by google/fhir's parser in package fhir's tests.
package igvalidate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Problem is one broken rule.
type Problem struct {
	// Resource names the resource ("Observation/abc" or its place).
	Resource string
	// Rule is the kind and id of the rule: "cardinality", "pattern",
	// "fixed", "binding", "slicing", or the invariant's key ("obs-6").
	Rule string
	// Path is the element id of the rule ("Observation.component:gene-studied").
	Path    string
	Message string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s [%s] %s", p.Resource, p.Path, p.Rule, p.Message)
}

// Element is the part of an ElementDefinition the checks use.
type Element struct {
	ID        string          `json:"id"`
	Path      string          `json:"path"`
	SliceName string          `json:"sliceName"`
	Min       int             `json:"min"`
	Max       string          `json:"max"`
	Slicing   *Slicing        `json:"slicing"`
	Binding   *Binding        `json:"binding"`
	Type      []ElementType   `json:"type"`
	Constrain []Constraint    `json:"constraint"`
	raw       json.RawMessage // for fixed[x] / pattern[x]
	fixed     any
	pattern   any
	children  []*Element
	slices    []*Element
}

// ElementType is one type of an element.
type ElementType struct {
	Code          string   `json:"code"`
	Profile       []string `json:"profile"`
	TargetProfile []string `json:"targetProfile"`
}

// Slicing is an element's slicing.
type Slicing struct {
	Discriminator []struct {
		Type string `json:"type"`
		Path string `json:"path"`
	} `json:"discriminator"`
	Rules string `json:"rules"`
}

// Binding is an element's terminology binding.
type Binding struct {
	Strength string `json:"strength"`
	ValueSet string `json:"valueSet"`
}

// Constraint is one invariant.
type Constraint struct {
	Key        string `json:"key"`
	Severity   string `json:"severity"`
	Human      string `json:"human"`
	Expression string `json:"expression"`
}

// Profile is a StructureDefinition's snapshot as a tree.
type Profile struct {
	URL  string
	Type string
	root *Element
	all  []*Element
}

// Load reads the StructureDefinitions in dir.
func Load(dir string) (map[string]*Profile, error) {
	files, err := filepath.Glob(filepath.Join(dir, "StructureDefinition-*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]*Profile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p, err := parseProfile(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out[p.URL] = p
	}
	return out, nil
}

func parseProfile(b []byte) (*Profile, error) {
	var sd struct {
		URL      string `json:"url"`
		Type     string `json:"type"`
		Snapshot struct {
			Element []json.RawMessage `json:"element"`
		} `json:"snapshot"`
	}
	if err := json.Unmarshal(b, &sd); err != nil {
		return nil, err
	}
	if len(sd.Snapshot.Element) == 0 {
		return nil, fmt.Errorf("no snapshot")
	}
	p := &Profile{URL: sd.URL, Type: sd.Type}
	byID := map[string]*Element{}
	for _, raw := range sd.Snapshot.Element {
		e := &Element{raw: raw}
		if err := json.Unmarshal(raw, e); err != nil {
			return nil, err
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		for k, v := range m {
			switch {
			case strings.HasPrefix(k, "fixed"):
				e.fixed = v
			case strings.HasPrefix(k, "pattern"):
				e.pattern = v
			}
		}
		byID[e.ID] = e
		p.all = append(p.all, e)
		if p.root == nil {
			p.root = e
			continue
		}
		parentID, last := splitID(e.ID)
		parent := byID[parentID]
		if parent == nil {
			return nil, fmt.Errorf("element %s has no parent %s", e.ID, parentID)
		}
		if strings.HasPrefix(last, ":") {
			parent.slices = append(parent.slices, e)
		} else {
			parent.children = append(parent.children, e)
		}
	}
	return p, nil
}

// splitID splits "A.b:s.c" into ("A.b:s", ".c") and "A.b:s" into
// ("A.b", ":s"): the parent's id and the last step.
func splitID(id string) (string, string) {
	i := strings.LastIndexAny(id, ".:")
	// A slice name may hold no dots; a choice "value[x]" holds none.
	return id[:i], id[i:]
}

// name is the element's last path step ("value[x]", "component").
func (e *Element) name() string {
	return e.Path[strings.LastIndex(e.Path, ".")+1:]
}

func (e *Element) max() int {
	if e.Max == "*" || e.Max == "" {
		return -1
	}
	var n int
	fmt.Sscan(e.Max, &n)
	return n
}

// values returns the values of the element's name in obj (arrays
// flattened; a choice "value[x]" matches valueXxx).
func values(obj map[string]any, name string) []any {
	var v any
	if strings.HasSuffix(name, "[x]") {
		base := strings.TrimSuffix(name, "[x]")
		for k, x := range obj {
			if strings.HasPrefix(k, base) && len(k) > len(base) && k[len(base)] >= 'A' && k[len(base)] <= 'Z' {
				v = x
			}
		}
	} else {
		v = obj[name]
	}
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	default:
		return []any{x}
	}
}

// Resolver finds the resource a reference names (within a Bundle).
type Resolver func(ref string) map[string]any

// Validator checks resources against profiles.
type Validator struct {
	Profiles map[string]*Profile
	// ValueSets maps a value set URL (with or without |version) to its
	// codes, "system|code". A required binding to a value set not here is
	// listed in Unchecked, not failed.
	ValueSets map[string]map[string]bool
	// Unchecked collects the required bindings that could not be checked.
	Unchecked map[string]bool
}

// New returns a validator for profiles, knowing the core R4 value sets of
// CoreValueSets.
func New(profiles map[string]*Profile) *Validator {
	return &Validator{Profiles: profiles, ValueSets: CoreValueSets(), Unchecked: map[string]bool{}}
}

// Target is one resource to check and the invariant tasks it makes.
type Target struct {
	Name     string
	Resource map[string]any
	Profile  *Profile
	// tasks are the invariants to evaluate (by Invariants).
	tasks []InvariantTask
}

// InvariantTask is one invariant at one element instance.
type InvariantTask struct {
	Resource   int    `json:"resource"`
	Node       any    `json:"node"`
	Base       string `json:"base"`
	Key        string `json:"key"`
	Expression string `json:"expression"`
	severity   string
	path       string
	target     *Target
}

// ProfilesOf returns the profiles a resource claims that the validator
// knows.
func (v *Validator) ProfilesOf(res map[string]any) []*Profile {
	meta, _ := res["meta"].(map[string]any)
	var out []*Profile
	for _, p := range values(meta, "profile") {
		s, _ := p.(string)
		if pr := v.Profiles[strings.Split(s, "|")[0]]; pr != nil {
			out = append(out, pr)
		}
	}
	return out
}

// Check checks res against p (structure rules), resolving references with
// resolve, and returns the problems and the target whose invariants are
// still to be evaluated.
func (v *Validator) Check(name string, res map[string]any, p *Profile, resolve Resolver) ([]Problem, *Target) {
	t := &Target{Name: name, Resource: res, Profile: p}
	c := &checker{v: v, t: t, resolve: resolve}
	if rt, _ := res["resourceType"].(string); rt != p.Type {
		c.fail("type", p.root.ID, "resourceType %q, the profile is on %s", rt, p.Type)
		return c.problems, t
	}
	c.element(p.root, []any{res})
	return c.problems, t
}

type checker struct {
	v        *Validator
	t        *Target
	resolve  Resolver
	problems []Problem
}

func (c *checker) fail(rule, path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Resource: c.t.Name, Rule: rule, Path: path, Message: fmt.Sprintf(format, args...)})
}

// element checks the instances of e (already counted by the caller).
func (c *checker) element(e *Element, insts []any) {
	for _, in := range insts {
		if e.fixed != nil && !reflect.DeepEqual(normal(in), normal(e.fixed)) {
			c.fail("fixed", e.ID, "value %s, the profile fixes %s", short(in), short(e.fixed))
		}
		if e.pattern != nil && !matches(in, e.pattern) {
			c.fail("pattern", e.ID, "value %s does not hold the pattern %s", short(in), short(e.pattern))
		}
		c.binding(e, in)
		for _, k := range e.Constrain {
			c.t.tasks = append(c.t.tasks, InvariantTask{Node: in, Base: e.Path, Key: k.Key, Expression: k.Expression,
				severity: k.Severity, path: e.ID, target: c.t})
		}
		obj, ok := in.(map[string]any)
		if !ok {
			continue
		}
		for _, ch := range e.children {
			vals := values(obj, ch.name())
			c.count(ch, len(vals))
			c.element(ch, vals)
			if len(ch.slices) > 0 {
				c.slice(ch, vals)
			}
		}
	}
}

func (c *checker) count(e *Element, n int) {
	if n < e.Min {
		c.fail("cardinality", e.ID, "%d present, the profile requires at least %d", n, e.Min)
	}
	if mx := e.max(); mx >= 0 && n > mx {
		c.fail("cardinality", e.ID, "%d present, the profile allows at most %d", n, mx)
	}
}

// slice assigns each value of a sliced element to the slices its
// discriminators match, and checks each slice's cardinality and content.
func (c *checker) slice(e *Element, vals []any) {
	assigned := make([][]any, len(e.slices))
	for _, val := range vals {
		hit := false
		for i, s := range e.slices {
			if c.inSlice(e, s, val) {
				assigned[i] = append(assigned[i], val)
				hit = true
				break
			}
		}
		if !hit && e.Slicing != nil && e.Slicing.Rules == "closed" {
			c.fail("slicing", e.ID, "value %s matches no slice and the slicing is closed", short(val))
		}
	}
	for i, s := range e.slices {
		c.count(s, len(assigned[i]))
		// The slice's own children (its sub-elements) are checked on the
		// values assigned to it.
		c.element(s, assigned[i])
	}
}

// inSlice reports whether val matches every discriminator of slice s.
func (c *checker) inSlice(e, s *Element, val any) bool {
	if e.Slicing == nil || len(e.Slicing.Discriminator) == 0 {
		return false
	}
	for _, d := range e.Slicing.Discriminator {
		switch d.Type {
		case "value", "pattern":
			want := discriminatorElement(s, d.Path)
			if want == nil {
				if d.Path == "url" && s.Path == e.Path && len(s.Type) == 1 && len(s.Type[0].Profile) == 1 {
					// An extension slice: its url is the extension's profile.
					obj, _ := val.(map[string]any)
					if u, _ := obj["url"].(string); u != s.Type[0].Profile[0] {
						return false
					}
					continue
				}
				return false
			}
			fx := want.fixed
			if fx == nil {
				fx = want.pattern
			}
			if fx == nil {
				return false
			}
			obj, _ := val.(map[string]any)
			got := values(obj, d.Path)
			ok := false
			for _, g := range got {
				if matches(g, fx) {
					ok = true
				}
			}
			if len(got) > 1 && want.fixed != nil {
				ok = false
			}
			if !ok {
				return false
			}
		case "profile":
			if d.Path != "resolve()" {
				return false
			}
			obj, _ := val.(map[string]any)
			ref, _ := obj["reference"].(string)
			target := c.resolve(ref)
			if target == nil {
				return false
			}
			claimed := map[string]bool{}
			meta, _ := target["meta"].(map[string]any)
			for _, p := range values(meta, "profile") {
				if ps, ok := p.(string); ok {
					claimed[strings.Split(ps, "|")[0]] = true
				}
			}
			ok := false
			for _, ty := range s.Type {
				for _, tp := range ty.TargetProfile {
					if claimed[tp] {
						ok = true
					}
				}
			}
			if !ok {
				return false
			}
		case "type":
			obj, _ := val.(map[string]any)
			if d.Path == "$this" && len(s.Type) == 1 {
				if rt, _ := obj["resourceType"].(string); rt != s.Type[0].Code {
					return false
				}
				continue
			}
			return false
		default:
			return false
		}
	}
	return true
}

// discriminatorElement finds the slice's element at path ("coding", "code").
func discriminatorElement(s *Element, path string) *Element {
	cur := s
	for _, step := range strings.Split(path, ".") {
		var next *Element
		for _, ch := range cur.children {
			if ch.name() == step {
				next = ch
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// binding checks a required binding whose value set is known.
func (c *checker) binding(e *Element, in any) {
	if e.Binding == nil || e.Binding.Strength != "required" || e.Binding.ValueSet == "" {
		return
	}
	vs := c.v.ValueSets[e.Binding.ValueSet]
	if vs == nil {
		vs = c.v.ValueSets[strings.Split(e.Binding.ValueSet, "|")[0]]
	}
	if vs == nil {
		c.v.Unchecked[e.ID+" → "+e.Binding.ValueSet] = true
		return
	}
	var codes []string
	switch x := in.(type) {
	case string: // a code: the value set's system is implied
		for k := range vs {
			if strings.HasSuffix(k, "|"+x) {
				return
			}
		}
		c.fail("binding", e.ID, "code %q is not in the required value set %s", x, e.Binding.ValueSet)
		return
	case map[string]any:
		cs := values(x, "coding")
		if sys, ok := x["system"].(string); ok { // a Coding
			cs = []any{map[string]any{"system": sys, "code": x["code"]}}
		}
		for _, cd := range cs {
			m, _ := cd.(map[string]any)
			sys, _ := m["system"].(string)
			code, _ := m["code"].(string)
			if vs[sys+"|"+code] {
				return
			}
			codes = append(codes, sys+"|"+code)
		}
	}
	c.fail("binding", e.ID, "no coding from the required value set %s (codings: %s)", e.Binding.ValueSet, strings.Join(codes, ", "))
}

// matches reports whether in holds pattern: objects key by key, arrays
// each pattern item matched by some item, primitives equal.
func matches(in, pattern any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		m, ok := in.(map[string]any)
		if !ok {
			return false
		}
		for k, pv := range p {
			if !matches(m[k], pv) {
				return false
			}
		}
		return true
	case []any:
		arr, ok := in.([]any)
		if !ok {
			arr = []any{in}
		}
		for _, pv := range p {
			found := false
			for _, x := range arr {
				if matches(x, pv) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(normal(in), normal(pattern))
	}
}

func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 160 {
		return string(b[:160]) + "…"
	}
	return string(b)
}

// Unresolved lists the unchecked bindings, sorted.
func (v *Validator) UncheckedList() []string {
	var out []string
	for k := range v.Unchecked {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
