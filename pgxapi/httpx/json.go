package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// DecodeJSON decodes the request body into dst. It requires Content-Type
// application/json (charset utf-8 allowed), reads at most maxBytes, rejects
// unknown fields and keys that differ from a field only in case, and
// requires exactly one JSON value. Every failure is an
// *Error: 415 for the media type, 413 naming the limit, 400 naming the
// unknown field, the mistyped field or the offset of a syntax error.
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64) error {
	return decodeJSON(w, r, dst, maxBytes, true)
}

// DecodeJSONExtensible is DecodeJSON for bodies whose specification lets
// clients add members (CDS Hooks extensions): unknown fields are ignored.
// Every other rule holds, the duplicate-key guard included. The
// json.RawMessage values it gives (struct fields of that type, and the
// values of map[string]json.RawMessage fields) may share the body's
// memory: they are capped at their own length, so an append copies, but
// they must not be changed in place.
func DecodeJSONExtensible(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64) error {
	return decodeJSON(w, r, dst, maxBytes, false)
}

func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64, strict bool) error {
	if err := requireJSON(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	if r.Body == nil || r.Body == http.NoBody {
		return emptyBody()
	}
	raw, err := readBody(http.MaxBytesReader(w, r.Body, maxBytes), r.ContentLength, maxBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(maxBytes)
		}
		return &Error{Kind: KindMalformed, Detail: "the request body could not be read"}
	}
	// An extensible body whose target takes members as raw JSON (a CDS
	// hook call and its prefetch) is decoded in one pass when it is
	// well-formed; every other body, and every error, by decodeRead.
	if !strict && decodeSpans(raw, dst) {
		return nil
	}
	return decodeRead(raw, dst, maxBytes, strict)
}

// maxPresized bounds the buffer readBody makes before the body arrives.
const maxPresized = 1 << 20

// readBody is io.ReadAll into one buffer of the size the request
// declares (at most maxBytes, and at most maxPresized before any byte
// arrived), when it declares one: io.ReadAll reads into chunks of growing
// size and copies them into a final slice, about three times the body in
// allocations for a 54 KB CDS hook call. The bytes and errors are
// io.ReadAll's; a body longer than declared still reads to its end.
func readBody(rd io.Reader, contentLength, maxBytes int64) ([]byte, error) {
	if contentLength <= 0 {
		return io.ReadAll(rd)
	}
	// One byte more than declared, so that the read which meets the end
	// has room. A larger declared body grows as it arrives: a client that
	// declares megabytes and sends nothing costs at most maxPresized.
	b := make([]byte, 0, min(contentLength, maxBytes, maxPresized)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// decodeRead decodes a body already read: the duplicate-key and case
// checks, then encoding/json.
func decodeRead(raw []byte, dst any, maxBytes int64, strict bool) error {
	// A key given twice would make the audited request ambiguous (the last
	// one wins in encoding/json): refuse it. The same pass notes whether a
	// key differs from a field of dst only in case.
	key, dup, caseSuspect := scanKeys(raw, reflect.TypeOf(dst))
	if dup {
		return &Error{Kind: KindMalformed,
			Detail:        fmt.Sprintf("the key %q appears more than once in one object", key),
			InvalidParams: []Param{{Name: key, Reason: "duplicate key"}}}
	}
	// encoding/json matches keys case-insensitively: a key that differs
	// from a field only in case would be read (or would overwrite another).
	// When the scan saw one, CaseMismatch names the one it reports (the
	// lexically first, depth first).
	if caseSuspect {
		if path, known, ok := CaseMismatch(raw, dst); ok {
			return CaseError(path, known)
		}
	}
	return decodeInPlace(raw, dst, maxBytes, strict)
}

// decodeInPlace is decodeValue for a body already read. A body that is one
// valid JSON value decodes in place: json.Unmarshal reads raw where a
// json.Decoder would copy it into a buffer grown by doubling (230 KB for
// a 54 KB CDS body). Unmarshal has no unknown-field check, so strict
// bodies, and every body Unmarshal refuses (whose error decodeValue
// words), go through the Decoder.
func decodeInPlace(raw []byte, dst any, maxBytes int64, strict bool) error {
	if !strict && json.Unmarshal(raw, dst) == nil {
		return nil
	}
	return decodeValue(raw, dst, maxBytes, strict)
}

// decodeValue decodes raw, which must hold exactly one JSON value, into
// dst with a json.Decoder and words its errors.
func decodeValue(raw []byte, dst any, maxBytes int64, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		if errors.Is(err, io.EOF) {
			return emptyBody()
		}
		return decodeError(err, maxBytes)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return &Error{Kind: KindMalformed,
			Detail: fmt.Sprintf("the body must hold exactly one JSON value; more data follows at offset %d", dec.InputOffset()-int64(len(extra)))}
	default:
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(maxBytes)
		}
		return &Error{Kind: KindMalformed,
			Detail: "the body must hold exactly one JSON value; it is followed by data that is not JSON"}
	}
}

// duplicateKey reports the first key that appears twice in one JSON
// object of b, with its path ("patient.sex"). Malformed JSON is left to the
// decoder, which reports it better. It scans the bytes once without
// building tokens (json.Decoder.Token cost about as much as the decode
// itself); key strings with escapes or non-ASCII bytes are unquoted as
// encoding/json does, so "\u0061" and "a" are the same key.
func duplicateKey(b []byte) (string, bool) {
	key, dup, _ := scanKeys(b, nil)
	return key, dup
}

// keyFrame is one open object or array of scanKeys.
type keyFrame struct {
	object    bool
	expectKey bool
	// keys[keysFrom:] of the scan are this object's keys so far; seen
	// replaces the linear search once an object has many keys.
	keysFrom int
	seen     map[string]struct{}
	lastKey  []byte
	// typ is the Go type this container decodes into (pointers
	// removed), nil when no case check applies below it; child is the
	// type of the value after the current key (objects) or of every
	// element (arrays).
	typ   reflect.Type
	child reflect.Type
}

// linearKeys is the number of keys of one object compared one by one
// before scanKeys indexes them in a map.
const linearKeys = 16

// scanKeys is duplicateKey that also follows the Go type t (the type of
// the decoding target, nil for none) as CaseMismatch does and reports
// whether some object key is not a field's JSON name but equals one
// ignoring case (caseSuspect). On a body whose first JSON value is valid,
// caseSuspect is false exactly when CaseMismatch finds nothing; on a
// malformed body CaseMismatch finds nothing whatever caseSuspect says.
// Paths are built only for the duplicate reported; keys are compared as
// bytes (unquoted only when they hold escapes or non-ASCII bytes).
func scanKeys(b []byte, t reflect.Type) (dupKey string, dup, caseSuspect bool) {
	var (
		stack []keyFrame
		keys  [][]byte
	)
	i, n := 0, len(b)
	skipSpace := func() {
		for i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	// readString reads the string starting at b[i] == '"' and returns its
	// unquoted bytes.
	readString := func() ([]byte, bool) {
		start, escaped := i, false
		for i++; i < n; i++ {
			switch b[i] {
			case '\\':
				escaped = true
				i++
			case '"':
				i++
				raw := b[start:i]
				if !escaped {
					return raw[1 : len(raw)-1], true
				}
				var s string
				if json.Unmarshal(raw, &s) != nil {
					return nil, false
				}
				return []byte(s), true
			default:
				// Non-ASCII: encoding/json replaces invalid UTF-8 with
				// U+FFFD, so let it unquote the key.
				if b[i] >= 0x80 {
					escaped = true
				}
			}
		}
		return nil, false
	}
	// path names key in the innermost object: the keys leading to it,
	// joined by dots (an empty path takes no dot: {"":{"a":…}} gives "a").
	path := func(key []byte) string {
		p := ""
		for _, f := range stack[:len(stack)-1] {
			if !f.object {
				continue
			}
			if p == "" {
				p = string(f.lastKey)
			} else {
				p += "." + string(f.lastKey)
			}
		}
		if p == "" {
			return string(key)
		}
		return p + "." + string(key)
	}
	// afterValue records that a value ended; false when it was the
	// top-level value.
	afterValue := func() bool {
		if len(stack) == 0 {
			return false
		}
		if top := &stack[len(stack)-1]; top.object {
			top.expectKey = true
		}
		return true
	}
	pending := caseTarget(t)
	for {
		skipSpace()
		if i >= n {
			return "", false, caseSuspect
		}
		c := b[i]
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey {
			switch c {
			case ',':
				i++
				continue
			case '}':
				i++
				keys = keys[:stack[len(stack)-1].keysFrom]
				stack = stack[:len(stack)-1]
				if !afterValue() {
					return "", false, caseSuspect
				}
				continue
			case '"':
			default:
				return "", false, caseSuspect
			}
			key, ok := readString()
			if !ok {
				return "", false, caseSuspect
			}
			top := &stack[len(stack)-1]
			mine := keys[top.keysFrom:]
			switch {
			case top.seen != nil:
				_, dup = top.seen[string(key)]
			default:
				for _, k := range mine {
					if bytes.Equal(k, key) {
						dup = true
						break
					}
				}
			}
			if dup {
				return path(key), true, caseSuspect
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
			top.lastKey, top.expectKey = key, false
			if top.typ != nil && !caseSuspect {
				top.child, caseSuspect = caseChild(top.typ, string(key))
			}
			skipSpace()
			if i >= n || b[i] != ':' {
				return "", false, caseSuspect
			}
			i++
			continue
		}
		switch c {
		case ',':
			i++
		case '{', '[':
			if len(stack) >= maxJSONDepth {
				return "", false, caseSuspect
			}
			// The type this container decodes into, as walkCase follows
			// it (containerTarget).
			var typ reflect.Type
			if len(stack) == 0 {
				typ = pending
			} else {
				typ = stack[len(stack)-1].child
			}
			typ = containerTarget(c, typ)
			f := keyFrame{object: c == '{', expectKey: c == '{', keysFrom: len(keys), typ: typ}
			if typ != nil && c == '[' {
				f.child = caseTarget(typ.Elem())
			}
			stack = append(stack, f)
			i++
		case ']', '}':
			if len(stack) == 0 {
				return "", false, caseSuspect
			}
			i++
			keys = keys[:stack[len(stack)-1].keysFrom]
			stack = stack[:len(stack)-1]
			if !afterValue() {
				return "", false, caseSuspect
			}
		case '"':
			if _, ok := readString(); !ok {
				return "", false, caseSuspect
			}
			if !afterValue() {
				return "", false, caseSuspect
			}
		default:
			// A number, true, false or null: up to the next delimiter.
			for i < n && !isValueEnd(b[i]) {
				i++
			}
			if !afterValue() {
				return "", false, caseSuspect
			}
		}
	}
}

// containerTarget returns typ when a container opened by c ('{' or '[')
// decodes into it as walkCase follows it — an object into a struct or a
// map, an array into a slice or an array — and nil otherwise (not looked
// into).
func containerTarget(c byte, typ reflect.Type) reflect.Type {
	if typ == nil {
		return nil
	}
	switch k := typ.Kind(); {
	case c == '{' && (k == reflect.Struct || k == reflect.Map):
	case c == '[' && (k == reflect.Slice || k == reflect.Array):
	default:
		return nil
	}
	return typ
}

// isValueEnd reports whether c ends a number or literal.
func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return true
	}
	return false
}

// maxJSONDepth is the nesting the duplicate-key scan follows; deeper
// bodies are left to encoding/json, which refuses them (its limit is
// 10000).
const maxJSONDepth = 10000

func requireJSON(contentType string) error {
	// The usual values, which the parse below accepts, without its
	// allocations.
	if contentType == "application/json" || contentType == "application/json; charset=utf-8" {
		return nil
	}
	return requireJSONParsed(contentType)
}

// requireJSONParsed is requireJSON by mime.ParseMediaType.
func requireJSONParsed(contentType string) error {
	unsupported := &Error{
		Kind:   KindUnsupportedMedia,
		Detail: "Content-Type must be application/json",
		Header: http.Header{"Accept": {"application/json"}},
	}
	if contentType == "" {
		return unsupported
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return unsupported
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			unsupported.Detail = "Content-Type must be application/json; the only parameter accepted is charset=utf-8"
			return unsupported
		}
	}
	return nil
}

func emptyBody() error {
	return &Error{Kind: KindMalformed, Detail: "the request body is empty; a JSON object is required"}
}

func tooLarge(maxBytes int64) error {
	return &Error{Kind: KindTooLarge,
		Detail: fmt.Sprintf("the request body exceeds the limit of %d bytes", maxBytes)}
}

// decodeError turns an encoding/json error into a 400 (or 413).
func decodeError(err error, maxBytes int64) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return tooLarge(maxBytes)
	case errors.As(err, &se):
		return &Error{Kind: KindMalformed,
			Detail: fmt.Sprintf("malformed JSON at offset %d", se.Offset), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: KindMalformed, Detail: "malformed JSON: the body ends before the value does", Err: err}
	case errors.As(err, &te):
		want := jsonKind(te.Type)
		if te.Field == "" {
			return &Error{Kind: KindMalformed,
				Detail: fmt.Sprintf("the body must be %s, not %s", want, te.Value), Err: err}
		}
		return &Error{Kind: KindMalformed,
			Detail:        fmt.Sprintf("field %q has the wrong type", te.Field),
			InvalidParams: []Param{{Name: te.Field, Reason: fmt.Sprintf("must be %s, not %s", want, te.Value)}},
			Err:           err}
	}
	if name, ok := unknownField(err); ok {
		return &Error{Kind: KindMalformed,
			Detail:        fmt.Sprintf("unknown field %q", name),
			InvalidParams: []Param{{Name: name, Reason: "unknown field"}},
			Err:           err}
	}
	return &Error{Kind: KindMalformed, Detail: "the body is not valid JSON for this endpoint", Err: err}
}

// unknownField extracts the field name from the error DisallowUnknownFields
// produces (encoding/json has no typed error for it).
func unknownField(err error) (string, bool) {
	const prefix = `json: unknown field `
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	name, uerr := strconv.Unquote(strings.TrimPrefix(msg, prefix))
	if uerr != nil {
		return "", false
	}
	return name, true
}

// jsonKind describes the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
}

// WriteJSON encodes v completely before writing anything, so an encoding
// failure is returned (and becomes a 500 through Handle) instead of a half
// written body. HTML characters are not escaped. An error writing the
// encoded body means the client has gone; it is not reported.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}
