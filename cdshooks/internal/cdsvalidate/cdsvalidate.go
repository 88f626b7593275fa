// Package cdsvalidate checks CDS Hooks 2.0 discovery documents and service
// responses against the rules of the specification (CDS Hooks 2.0.1,
// https://cds-hooks.hl7.org/2.0/): required fields, enumerations, summary
// length, suggestion and action structure, link types, prefetch-template
// restrictions. There is no official JSON Schema for CDS Hooks 2.0; these
// rules are written from the specification text.
//
// Strict mode adds pgxsafety's own rules: no null and no empty value
// anywhere (other than the top-level "cards": []), a uuid on every card
// and suggestion, and no keys outside the specification.
package cdsvalidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Options select the rules.
type Options struct {
	// Strict adds pgxsafety's rules (see the package comment).
	Strict bool
}

type checker struct {
	opt      Options
	problems []string
}

func (c *checker) bad(path, format string, args ...any) {
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// Response validates a CDS Service response ({"cards": [...]}) and
// returns every problem found (none: valid).
func Response(raw []byte, opt Options) []string {
	c := &checker{opt: opt}
	v, err := decode(raw)
	if err != nil {
		return []string{"response: not JSON: " + err.Error()}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{"response: must be an object"}
	}
	c.keys("response", obj, "cards", "systemActions")
	cards, ok := obj["cards"].([]any)
	if !ok {
		c.bad("cards", "is required and must be an array")
	}
	if opt.Strict {
		c.noEmpty("response", obj, true)
	}
	seen := map[string]bool{}
	for i, cv := range cards {
		c.card(fmt.Sprintf("cards[%d]", i), cv, seen)
	}
	if sa, ok := obj["systemActions"]; ok {
		arr, ok := sa.([]any)
		if !ok {
			c.bad("systemActions", "must be an array")
		}
		for i, a := range arr {
			c.action(fmt.Sprintf("systemActions[%d]", i), a)
		}
	}
	sort.Strings(c.problems)
	return c.problems
}

func (c *checker) keys(path string, obj map[string]any, allowed ...string) {
	if !c.opt.Strict {
		return
	}
	for k := range obj {
		if k == "extension" {
			continue
		}
		found := false
		for _, a := range allowed {
			if a == k {
				found = true
			}
		}
		if !found {
			c.bad(path, "unknown key %q", k)
		}
	}
}

// noEmpty reports null, "", [] and {} anywhere below v.
func (c *checker) noEmpty(path string, v any, top bool) {
	switch x := v.(type) {
	case nil:
		c.bad(path, "is null")
	case string:
		if strings.TrimSpace(x) == "" {
			c.bad(path, "is an empty string")
		}
	case []any:
		if len(x) == 0 && !(top && path == "response.cards") {
			c.bad(path, "is an empty array")
		}
		for i, e := range x {
			c.noEmpty(fmt.Sprintf("%s[%d]", path, i), e, false)
		}
	case map[string]any:
		if len(x) == 0 {
			c.bad(path, "is an empty object")
		}
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			c.noEmpty(path+"."+k, x[k], top && path == "response")
		}
	}
}

func str(obj map[string]any, k string) (string, bool) {
	s, ok := obj[k].(string)
	return s, ok
}

func (c *checker) requiredString(path string, obj map[string]any, k string) string {
	s, ok := str(obj, k)
	if !ok || strings.TrimSpace(s) == "" {
		c.bad(path+"."+k, "is required (a non-empty string)")
	}
	return s
}

func (c *checker) optionalString(path string, obj map[string]any, k string) (string, bool) {
	v, present := obj[k]
	if !present {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.bad(path+"."+k, "must be a string")
	}
	return s, ok
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http")
}

func (c *checker) card(path string, v any, seen map[string]bool) {
	card, ok := v.(map[string]any)
	if !ok {
		c.bad(path, "must be an object")
		return
	}
	c.keys(path, card, "uuid", "summary", "detail", "indicator", "source", "suggestions", "selectionBehavior", "overrideReasons", "links")
	if id, ok := c.optionalString(path, card, "uuid"); ok {
		if !uuidPattern.MatchString(strings.ToLower(id)) {
			c.bad(path+".uuid", "must be a UUID")
		}
		if seen[id] {
			c.bad(path+".uuid", "repeats another card's uuid")
		}
		seen[id] = true
	} else if c.opt.Strict {
		c.bad(path+".uuid", "is required (pgxsafety: every card has a uuid)")
	}
	if s := c.requiredString(path, card, "summary"); utf8.RuneCountInString(s) >= 140 {
		c.bad(path+".summary", "must be shorter than 140 characters, has %d", utf8.RuneCountInString(s))
	}
	c.optionalString(path, card, "detail")
	switch ind, _ := str(card, "indicator"); ind {
	case "info", "warning", "critical":
	default:
		c.bad(path+".indicator", "must be info, warning or critical, got %q", ind)
	}
	src, ok := card["source"].(map[string]any)
	if !ok {
		c.bad(path+".source", "is required (an object)")
	} else {
		c.keys(path+".source", src, "label", "url", "icon", "topic")
		c.requiredString(path+".source", src, "label")
		if u, ok := c.optionalString(path+".source", src, "url"); ok && !absoluteURL(u) {
			c.bad(path+".source.url", "must be an absolute URL")
		}
		if u, ok := c.optionalString(path+".source", src, "icon"); ok && !absoluteURL(u) {
			c.bad(path+".source.icon", "must be an absolute URL")
		}
		if t, ok := src["topic"]; ok {
			c.coding(path+".source.topic", t, false)
		}
	}
	sugs, hasSugs := card["suggestions"]
	if hasSugs {
		arr, ok := sugs.([]any)
		if !ok {
			c.bad(path+".suggestions", "must be an array")
		}
		sseen := map[string]bool{}
		for i, s := range arr {
			c.suggestion(fmt.Sprintf("%s.suggestions[%d]", path, i), s, sseen)
		}
		sb, _ := str(card, "selectionBehavior")
		if sb != "at-most-one" && sb != "any" {
			c.bad(path+".selectionBehavior", "is required with suggestions: at-most-one or any, got %q", sb)
		}
		if sb == "at-most-one" {
			n := 0
			for _, s := range arr {
				if m, ok := s.(map[string]any); ok && m["isRecommended"] == true {
					n++
				}
			}
			if n > 1 {
				c.bad(path+".suggestions", "with at-most-one, at most one suggestion may be recommended")
			}
		}
	} else if _, ok := card["selectionBehavior"]; ok && c.opt.Strict {
		c.bad(path+".selectionBehavior", "is given without suggestions")
	}
	if ors, ok := card["overrideReasons"]; ok {
		arr, ok := ors.([]any)
		if !ok {
			c.bad(path+".overrideReasons", "must be an array")
		}
		for i, o := range arr {
			c.coding(fmt.Sprintf("%s.overrideReasons[%d]", path, i), o, true)
		}
	}
	if ls, ok := card["links"]; ok {
		arr, ok := ls.([]any)
		if !ok {
			c.bad(path+".links", "must be an array")
		}
		for i, l := range arr {
			c.link(fmt.Sprintf("%s.links[%d]", path, i), l)
		}
	}
}

// coding checks a Coding: code and system required; display required for
// override reasons.
func (c *checker) coding(path string, v any, needDisplay bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.bad(path, "must be a Coding object")
		return
	}
	c.keys(path, m, "code", "system", "display")
	c.requiredString(path, m, "code")
	c.requiredString(path, m, "system")
	if needDisplay {
		c.requiredString(path, m, "display")
	} else {
		c.optionalString(path, m, "display")
	}
}

func (c *checker) suggestion(path string, v any, seen map[string]bool) {
	s, ok := v.(map[string]any)
	if !ok {
		c.bad(path, "must be an object")
		return
	}
	c.keys(path, s, "label", "uuid", "isRecommended", "actions")
	c.requiredString(path, s, "label")
	if id, ok := c.optionalString(path, s, "uuid"); ok {
		if !uuidPattern.MatchString(strings.ToLower(id)) {
			c.bad(path+".uuid", "must be a UUID")
		}
		if seen[id] {
			c.bad(path+".uuid", "repeats another suggestion's uuid")
		}
		seen[id] = true
	} else if c.opt.Strict {
		c.bad(path+".uuid", "is required (pgxsafety: every suggestion has a uuid)")
	}
	if r, ok := s["isRecommended"]; ok {
		if _, ok := r.(bool); !ok {
			c.bad(path+".isRecommended", "must be a boolean")
		}
	}
	if as, ok := s["actions"]; ok {
		arr, ok := as.([]any)
		if !ok {
			c.bad(path+".actions", "must be an array")
		}
		for i, a := range arr {
			c.action(fmt.Sprintf("%s.actions[%d]", path, i), a)
		}
	}
}

var relativeReference = regexp.MustCompile(`^[A-Z][A-Za-z]+/[A-Za-z0-9\-.]{1,64}$`)

func (c *checker) action(path string, v any) {
	a, ok := v.(map[string]any)
	if !ok {
		c.bad(path, "must be an object")
		return
	}
	c.keys(path, a, "type", "description", "resource", "resourceId")
	typ, _ := str(a, "type")
	switch typ {
	case "create", "update":
		r, ok := a["resource"].(map[string]any)
		if !ok {
			c.bad(path+".resource", "is required for %s (a FHIR resource)", typ)
		} else if rt, _ := str(r, "resourceType"); rt == "" {
			c.bad(path+".resource.resourceType", "is required")
		}
	case "delete":
		id, ok := str(a, "resourceId")
		if !ok || !relativeReference.MatchString(id) {
			c.bad(path+".resourceId", "is required for delete: a relative reference such as MedicationRequest/123")
		}
	default:
		c.bad(path+".type", "must be create, update or delete, got %q", typ)
	}
	c.requiredString(path, a, "description")
}

func (c *checker) link(path string, v any) {
	l, ok := v.(map[string]any)
	if !ok {
		c.bad(path, "must be an object")
		return
	}
	c.keys(path, l, "label", "url", "type", "appContext", "autolaunchable")
	c.requiredString(path, l, "label")
	if u := c.requiredString(path, l, "url"); u != "" && !absoluteURL(u) {
		c.bad(path+".url", "must be an absolute URL")
	}
	typ, _ := str(l, "type")
	switch typ {
	case "absolute":
		if _, ok := l["appContext"]; ok {
			c.bad(path+".appContext", "is only for smart links")
		}
	case "smart":
	default:
		c.bad(path+".type", "must be absolute or smart, got %q", typ)
	}
	c.optionalString(path, l, "appContext")
	if al, ok := l["autolaunchable"]; ok {
		if _, ok := al.(bool); !ok {
			c.bad(path+".autolaunchable", "must be a boolean")
		}
	}
}

// Discovery validates a discovery document ({"services": [...]}).
func Discovery(raw []byte, opt Options) []string {
	c := &checker{opt: opt}
	v, err := decode(raw)
	if err != nil {
		return []string{"discovery: not JSON: " + err.Error()}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{"discovery: must be an object"}
	}
	c.keys("discovery", obj, "services")
	if opt.Strict {
		c.noEmpty("discovery", obj, false)
	}
	svcs, ok := obj["services"].([]any)
	if !ok {
		c.bad("services", "is required and must be an array")
	}
	ids := map[string]bool{}
	for i, sv := range svcs {
		path := fmt.Sprintf("services[%d]", i)
		s, ok := sv.(map[string]any)
		if !ok {
			c.bad(path, "must be an object")
			continue
		}
		c.keys(path, s, "hook", "title", "description", "id", "prefetch", "usageRequirements")
		c.requiredString(path, s, "hook")
		c.requiredString(path, s, "description")
		id := c.requiredString(path, s, "id")
		if ids[id] {
			c.bad(path+".id", "repeats another service's id")
		}
		ids[id] = true
		c.optionalString(path, s, "title")
		c.optionalString(path, s, "usageRequirements")
		if p, ok := s["prefetch"]; ok {
			m, ok := p.(map[string]any)
			if !ok {
				c.bad(path+".prefetch", "must be an object of templates")
				continue
			}
			for k, t := range m {
				ts, ok := t.(string)
				if !ok {
					c.bad(path+".prefetch."+k, "must be a string")
					continue
				}
				for _, pr := range Template(ts) {
					c.bad(path+".prefetch."+k, "%s", pr)
				}
			}
		}
	}
	sort.Strings(c.problems)
	return c.problems
}

var (
	tokenPattern = regexp.MustCompile(`\{\{([^{}]*)\}\}`)
	// allowedTokens are the prefetch tokens of CDS Hooks 2.0 besides
	// context fields.
	allowedTokens = map[string]bool{"userPractitionerId": true, "userPractitionerRoleId": true, "userPatientId": true, "userRelatedPersonId": true}
	readPattern   = regexp.MustCompile(`^[A-Z][A-Za-z]+/[^/?]+$`)
	typePattern   = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
	datePrefix    = regexp.MustCompile(`^(eq|lt|gt|ge|le)?[0-9{]`)
)

// Template checks one prefetch template against the restrictions of CDS
// Hooks 2.0: tokens are context fields or the user tokens; the query is an
// instance read (Type/{{token}}) or a type-level search whose parameters
// use no modifiers other than :in, with date prefixes eq, lt, gt, ge, le
// only.
func Template(t string) []string {
	var out []string
	for _, m := range tokenPattern.FindAllStringSubmatch(t, -1) {
		tok := strings.TrimSpace(m[1])
		if !strings.HasPrefix(tok, "context.") && !allowedTokens[tok] {
			out = append(out, fmt.Sprintf("token {{%s}} is not a context field or user token", tok))
		}
	}
	typ, query, isSearch := strings.Cut(t, "?")
	if !isSearch {
		if !readPattern.MatchString(t) {
			out = append(out, "must be an instance read (Type/id) or a type-level search (Type?params)")
		}
		return out
	}
	if !typePattern.MatchString(typ) {
		out = append(out, "a search must name one resource type")
	}
	for _, p := range strings.Split(query, "&") {
		name, val, _ := strings.Cut(p, "=")
		if name == "" {
			out = append(out, "empty search parameter")
			continue
		}
		if base, mod, ok := strings.Cut(name, ":"); ok {
			if mod != "in" && !(strings.HasPrefix(base, "_sort") || base == "sort") {
				out = append(out, fmt.Sprintf("parameter %s uses modifier :%s (only :in is allowed)", name, mod))
			}
		}
		if name == "date" || strings.HasSuffix(name, "-date") {
			if !datePrefix.MatchString(val) {
				out = append(out, fmt.Sprintf("date parameter %s may use only the prefixes eq, lt, gt, ge, le", name))
			}
		}
	}
	return out
}
