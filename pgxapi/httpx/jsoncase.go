package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// encoding/json matches object keys to struct fields case-insensitively:
// {"Variants": [...], "VARIANTS": [...]} would both fill "variants", and
// one silently replaces the other. Every JSON endpoint refuses a key that
// differs from a known field only in case.

// CaseMismatch walks the JSON value b against the type of dst and returns
// the first object key that is not a field's exact JSON name but equals
// one ignoring case, with its path ("patient.Sex") and the field's name.
// Keys of maps are not checked. Malformed JSON reports nothing (the
// decoder reports it better).
func CaseMismatch(b []byte, dst any) (path, known string, found bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "", "", false
	}
	t := reflect.TypeOf(dst)
	return walkCase(v, t, "")
}

// CaseError is the 400 for a key that differs from a known field only in
// case.
func CaseError(path, known string) *Error {
	return &Error{Kind: KindMalformed,
		Detail:        fmt.Sprintf("the key %q differs from the field %q only in case; JSON keys are case-sensitive", path, known),
		InvalidParams: []Param{{Name: path, Reason: fmt.Sprintf("unknown key; did you mean %q?", known)}}}
}

func walkCase(v any, t reflect.Type, path string) (string, string, bool) {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) {
		if t.Kind() == reflect.Interface {
			return "", "", false
		}
		t = t.Elem()
	}
	if t == nil {
		return "", "", false
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := jsonFields(t)
			for _, key := range sortedMapKeys(x) {
				p := key
				if path != "" {
					p = path + "." + key
				}
				if ft, ok := fields[key]; ok {
					if a, b, found := walkCase(x[key], ft, p); found {
						return a, b, true
					}
					continue
				}
				for name := range fields {
					if strings.EqualFold(name, key) {
						return p, name, true
					}
				}
			}
		case reflect.Map:
			for _, key := range sortedMapKeys(x) {
				p := key
				if path != "" {
					p = path + "." + key
				}
				if a, b, found := walkCase(x[key], t.Elem(), p); found {
					return a, b, true
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				if a, b, found := walkCase(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); found {
					return a, b, true
				}
			}
		}
	}
	return "", "", false
}

// fieldsByType caches jsonFields per struct type: the fields of a request
// type never change, and reading them by reflection on every request cost
// about a sixth of the JSON intake of /pgx/check. The cached maps are only
// read.
var fieldsByType sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields returns the JSON names of a struct's fields (embedded structs
// flattened) with their types. The map is shared: callers must not change
// it.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldsByType.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m, _ := fieldsByType.LoadOrStore(t, readJSONFields(t))
	return m.(map[string]reflect.Type)
}

// readJSONFields reads what jsonFields returns.
func readJSONFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, typ := range readJSONFields(et) {
					if _, ok := out[n]; !ok {
						out[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}

// caseTarget is t as walkCase follows it: pointers removed, nil for an
// interface (nothing below it is checked).
func caseTarget(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.Kind() == reflect.Interface {
		return nil
	}
	return t
}

// caseChild is the type walkCase follows for the value of key in an
// object decoded into typ (a struct or a map), and whether key differs
// from one of typ's fields only in case.
func caseChild(typ reflect.Type, key string) (reflect.Type, bool) {
	if typ.Kind() == reflect.Map {
		return caseTarget(typ.Elem()), false
	}
	fields := jsonFields(typ)
	if ft, ok := fields[key]; ok {
		return caseTarget(ft), false
	}
	for name := range fields {
		if strings.EqualFold(name, key) {
			return nil, true
		}
	}
	return nil, false
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Order of appearance is lost in a map; report the lexically first.
	sort.Strings(keys)
	return keys
}
