package httpx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// The extensible intake of a large body (a CDS hook call carries its FHIR
// prefetch, 50 KB and more) in one pass: spanScan validates the body as
// strictly as encoding/json does, runs the duplicate-key and case checks
// of scanKeys, and records where each top-level member lies. Members
// whose field is a json.RawMessage, or a map[string]json.RawMessage,
// become sub-slices of the body (no copy, no second validation);
// encoding/json decodes only the others. Whatever this path does not
// accept (malformed JSON, a duplicate key, a key that may differ from a
// field only in case, a wrongly typed member, a target it cannot
// follow) is decoded again by the general path, which words the error:
// the fast path answers only where it is sure to give what the general
// path gives.

// spanField is a field of a struct that takes a member's bytes as they
// are: a json.RawMessage (raw) or a map[string]json.RawMessage.
type spanField struct {
	index int
	isMap bool
}

// spanPlan is what decodeSpans needs of a struct type: its span fields by
// exact JSON name. A nil plan means the type has none (or is not a
// struct) and the general path serves it.
type spanPlan struct {
	fields map[string]spanField
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	rawMessageMapType   = reflect.TypeFor[map[string]json.RawMessage]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	plansByType         sync.Map // reflect.Type (of the struct) → *spanPlan
)

// spanPlanOf returns the plan of the struct type t.
func spanPlanOf(t reflect.Type) *spanPlan {
	if p, ok := plansByType.Load(t); ok {
		return p.(*spanPlan)
	}
	p, _ := plansByType.LoadOrStore(t, readSpanPlan(t))
	return p.(*spanPlan)
}

// readSpanPlan reads what spanPlanOf returns. Only direct fields are
// taken, and only under a name no other direct field has: encoding/json
// then gives that field every member of exactly this name (a direct
// field hides embedded ones; two direct fields of one name hide each
// other).
func readSpanPlan(t reflect.Type) *spanPlan {
	// A type that decodes itself is given the whole body.
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(jsonUnmarshalerType) ||
		reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	names := map[string]int{}
	fields := map[string]spanField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			// An embedded struct's fields: not taken, and no name of
			// them is counted (a direct field hides them).
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name]++
		if !f.IsExported() || f.Anonymous {
			continue
		}
		switch f.Type {
		case rawMessageType:
			fields[name] = spanField{index: i}
		case rawMessageMapType:
			fields[name] = spanField{index: i, isMap: true}
		}
	}
	for name := range fields {
		if names[name] != 1 {
			delete(fields, name)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &spanPlan{fields: fields}
}

// member is one member of the top-level object: its key (unquoted), where
// its text starts (the key's quote), its value's bytes [start, end) and
// the struct field's index when it is a span field (else -1).
type member struct {
	key        []byte
	keyStart   int
	start, end int
	field      int
	isMap      bool
}

// innerMember is a member of an object that becomes a map of raw values.
type innerMember struct {
	key        []byte
	start, end int
}

// spanFrame is one open object or array of spanScan.
type spanFrame struct {
	object   bool
	keysFrom int
	seen     map[string]struct{}
	start    int // offset of the container's opening byte
	// typ and child as in keyFrame.
	typ   reflect.Type
	child reflect.Type
	// collect says this object's members are recorded as innerMembers.
	collect bool
}

// spanScan validates b, which must hold exactly one JSON object (and
// white space), checks it as scanKeys does against t (the pointer type
// of the decoding target) and records its members. ok is false when b is
// not such a body, holds a duplicate key, or a key that scanKeys would
// report as case-suspect: the general path then decides. It accepts no
// body that encoding/json refuses.
func spanScan(b []byte, t reflect.Type, plan *spanPlan) (members []member, inner []innerMember, ok bool) {
	var (
		stack []spanFrame
		keys  [][]byte
	)
	i, n := 0, len(b)
	skipSpace := func() {
		for i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	// readString validates the string at b[i] == '"' as encoding/json's
	// scanner does (no control bytes; only its escapes) and returns its
	// unquoted bytes when unquote is set.
	readString := func(unquote bool) ([]byte, bool) {
		start, plain := i, true
		for i++; i < n; i++ {
			c := b[i]
			switch {
			case c == '"':
				i++
				raw := b[start:i]
				if !unquote {
					return nil, true
				}
				if plain {
					return raw[1 : len(raw)-1], true
				}
				// As scanKeys: encoding/json unquotes (escapes; invalid
				// UTF-8 becomes U+FFFD).
				var s string
				if json.Unmarshal(raw, &s) != nil {
					return nil, false
				}
				return []byte(s), true
			case c == '\\':
				plain = false
				i++
				if i >= n {
					return nil, false
				}
				switch b[i] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					if i+4 >= n {
						return nil, false
					}
					for _, h := range b[i+1 : i+5] {
						if !isHex(h) {
							return nil, false
						}
					}
					i += 4
				default:
					return nil, false
				}
			case c < 0x20:
				return nil, false
			case c >= 0x80:
				plain = false
			}
		}
		return nil, false
	}
	// readNumber validates the number at b[i] by JSON's grammar.
	readNumber := func() bool {
		if b[i] == '-' {
			i++
		}
		switch {
		case i < n && b[i] == '0':
			i++
		case i < n && '1' <= b[i] && b[i] <= '9':
			for i++; i < n && isDigit(b[i]); i++ {
			}
		default:
			return false
		}
		if i < n && b[i] == '.' {
			i++
			if i >= n || !isDigit(b[i]) {
				return false
			}
			for i++; i < n && isDigit(b[i]); i++ {
			}
		}
		if i < n && (b[i] == 'e' || b[i] == 'E') {
			i++
			if i < n && (b[i] == '+' || b[i] == '-') {
				i++
			}
			if i >= n || !isDigit(b[i]) {
				return false
			}
			for i++; i < n && isDigit(b[i]); i++ {
			}
		}
		return true
	}
	// The key read last in the top-level object, and in a collected
	// object.
	var (
		topKey, innerKey []byte
		topKeyStart      int
	)
	// valueDone records the value [start, i) that just ended.
	valueDone := func(start int) {
		switch d := len(stack); {
		case d == 1:
			m := member{key: topKey, keyStart: topKeyStart, start: start, end: i, field: -1}
			if f, ok := plan.fields[string(topKey)]; ok {
				m.field, m.isMap = f.index, f.isMap
			}
			members = append(members, m)
		case d == 2 && stack[1].collect:
			inner = append(inner, innerMember{key: innerKey, start: start, end: i})
		}
	}
	pending := caseTarget(t)
	skipSpace()
	if i >= n || b[i] != '{' {
		return nil, nil, false
	}
	for {
		// A value starts at b[i] (white space skipped).
		if i >= n {
			return nil, nil, false
		}
		start := i
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= maxJSONDepth {
				return nil, nil, false
			}
			var typ reflect.Type
			if len(stack) == 0 {
				typ = pending
			} else {
				typ = stack[len(stack)-1].child
			}
			typ = containerTarget(c, typ)
			f := spanFrame{object: c == '{', keysFrom: len(keys), start: i, typ: typ}
			if typ != nil && c == '[' {
				f.child = caseTarget(typ.Elem())
			}
			if len(stack) == 1 && c == '{' {
				if sf, ok := plan.fields[string(topKey)]; ok && sf.isMap {
					f.collect = true
				}
			}
			stack = append(stack, f)
			i++
			skipSpace()
			if i < n && b[i] == byte(c+2) { // '{'+2 == '}', '['+2 == ']'
				i++
				goto closed
			}
			if c == '[' {
				continue
			}
			goto key
		case '"':
			if _, ok := readString(false); !ok {
				return nil, nil, false
			}
		case 't':
			if !bytes.HasPrefix(b[i:], []byte("true")) {
				return nil, nil, false
			}
			i += 4
		case 'f':
			if !bytes.HasPrefix(b[i:], []byte("false")) {
				return nil, nil, false
			}
			i += 5
		case 'n':
			if !bytes.HasPrefix(b[i:], []byte("null")) {
				return nil, nil, false
			}
			i += 4
		default:
			if c != '-' && !isDigit(c) {
				return nil, nil, false
			}
			if !readNumber() {
				return nil, nil, false
			}
		}
		valueDone(start)
		goto next

	closed:
		// The container on top of the stack ended at b[i-1].
		{
			top := stack[len(stack)-1]
			keys = keys[:top.keysFrom]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				skipSpace()
				return members, inner, i == n
			}
			valueDone(top.start)
		}

	next:
		// After a value inside a container: a comma or the closing byte.
		skipSpace()
		if i >= n {
			return nil, nil, false
		}
		if top := &stack[len(stack)-1]; top.object {
			switch b[i] {
			case '}':
				i++
				goto closed
			case ',':
				i++
				skipSpace()
				goto key
			}
			return nil, nil, false
		}
		switch b[i] {
		case ']':
			i++
			goto closed
		case ',':
			i++
			skipSpace()
			continue
		}
		return nil, nil, false

	key:
		// A key starts at b[i] in the object on top of the stack.
		{
			if i >= n || b[i] != '"' {
				return nil, nil, false
			}
			keyStart := i
			key, ok := readString(true)
			if !ok {
				return nil, nil, false
			}
			top := &stack[len(stack)-1]
			mine := keys[top.keysFrom:]
			dup := false
			if top.seen != nil {
				_, dup = top.seen[string(key)]
			} else {
				for _, k := range mine {
					if bytes.Equal(k, key) {
						dup = true
						break
					}
				}
			}
			if dup {
				return nil, nil, false
			}
			switch {
			case top.seen != nil:
				top.seen[string(key)] = struct{}{}
			case len(mine) < linearKeys:
				keys = append(keys, key)
			default:
				top.seen = make(map[string]struct{}, 2*linearKeys)
				for _, k := range mine {
					top.seen[string(k)] = struct{}{}
				}
				top.seen[string(key)] = struct{}{}
			}
			if top.typ != nil {
				var suspect bool
				top.child, suspect = caseChild(top.typ, string(key))
				if suspect {
					return nil, nil, false
				}
			}
			switch {
			case len(stack) == 1:
				topKey, topKeyStart = key, keyStart
			case len(stack) == 2 && top.collect:
				innerKey = key
			}
			skipSpace()
			if i >= n || b[i] != ':' {
				return nil, nil, false
			}
			i++
			skipSpace()
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// decodeSpans decodes raw into dst (a pointer to a zero struct with a
// plan) by spanScan; false when it cannot, dst then being zero again.
func decodeSpans(raw []byte, dst any) bool {
	pv := reflect.ValueOf(dst)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return false
	}
	v := pv.Elem()
	plan := spanPlanOf(v.Type())
	if plan == nil || !v.IsZero() {
		return false
	}
	members, inner, ok := spanScan(raw, pv.Type(), plan)
	if !ok {
		return false
	}
	// The other members, in their order, as one small object for
	// encoding/json. A key that is not a span field's name but equals
	// one ignoring case would reach that field there; spanScan has
	// refused such keys (as case-suspect), and this checks it again
	// rather than rely on it.
	var small []byte
	for _, m := range members {
		if m.field >= 0 {
			continue
		}
		for name := range plan.fields {
			if strings.EqualFold(name, string(m.key)) {
				return false
			}
		}
		if small == nil {
			small = append(make([]byte, 0, 256), '{')
		} else {
			small = append(small, ',')
		}
		small = append(small, raw[m.keyStart:m.end]...)
	}
	if small != nil {
		small = append(small, '}')
		if json.Unmarshal(small, dst) != nil {
			v.SetZero()
			return false
		}
	}
	in := 0
	for _, m := range members {
		if m.field < 0 {
			continue
		}
		f := v.Field(m.field)
		val := raw[m.start:m.end:m.end]
		if !m.isMap {
			*f.Addr().Interface().(*json.RawMessage) = val
			continue
		}
		switch val[0] {
		case 'n': // null leaves the map nil
		case '{':
			// inner holds the members of every collected object, in
			// order.
			p := f.Addr().Interface().(*map[string]json.RawMessage)
			mp := make(map[string]json.RawMessage)
			for ; in < len(inner) && inner[in].start < m.end; in++ {
				im := inner[in]
				mp[string(im.key)] = raw[im.start:im.end:im.end]
			}
			*p = mp
		default:
			// encoding/json refuses it (a map from a non-object).
			v.SetZero()
			return false
		}
	}
	return true
}
