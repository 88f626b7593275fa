package fhir

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// This file reads the top level of a resource in one pass over its bytes
// (validating them as encoding/json does) without decoding the values it
// does not need: head's resourceType and id, and a Bundle's entries. Any
// input it is not sure to read exactly as encoding/json would (malformed
// JSON, a value of the wrong type, an entry key given twice) makes it
// give up, and the caller decodes with encoding/json instead, so errors
// and edge cases are those of encoding/json.

// maxNesting is encoding/json's nesting limit: deeper values are invalid.
const maxNesting = 10000

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString validates the string starting at b[i] == '"' and returns the
// index after it; plain is true when it holds no escape and no non-ASCII
// byte (its bytes are then its value).
func skipString(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	for i++; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			i++
			if i >= len(b) {
				return i, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false, false
					}
				}
				i += 4
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return i, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipNumber validates the number starting at b[i] and returns the index
// after it.
func skipNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

// skipValue validates the value at b[i] (after whitespace) and returns the
// index after it; depth is the number of arrays and objects around it.
func skipValue(b []byte, i, depth int) (int, bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; c {
	case '{':
		return scanObject(b, i, depth, nil)
	case '[':
		return scanArray(b, i, depth, nil)
	case '"':
		end, _, ok := skipString(b, i)
		return end, ok
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	default:
		if c == '-' || isDigit(c) {
			return skipNumber(b, i)
		}
		return i, false
	}
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// scanObject validates the object at b[i] == '{' and returns the index
// after it. member, when not nil, is called for each member with the key
// (quotes included), whether the key is plain (see skipString) and the
// index of the value; it returns the index after the value (nil: the
// value is skipped).
func scanObject(b []byte, i, depth int, member func(key []byte, plain bool, v int) (int, bool)) (int, bool) {
	if depth >= maxNesting {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		start := i
		end, plain, ok := skipString(b, i)
		if !ok {
			return end, false
		}
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = skipWS(b, i+1)
		if member != nil {
			i, ok = member(b[start:end], plain, i)
		} else {
			i, ok = skipValue(b, i, depth+1)
		}
		if !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// scanArray validates the array at b[i] == '[' and returns the index
// after it. elem, when not nil, is called with the index of each element
// and returns the index after it.
func scanArray(b []byte, i, depth int, elem func(v int) (int, bool)) (int, bool) {
	if depth >= maxNesting {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if elem != nil {
			i, ok = elem(i)
		} else {
			i, ok = skipValue(b, i, depth+1)
		}
		if !ok {
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// validJSON is json.Valid.
func validJSON(b []byte) bool {
	i, ok := skipValue(b, 0, 0)
	return ok && skipWS(b, i) == len(b)
}

// keyIs reports whether the JSON string key (quotes included) selects the
// struct field named like folded (upper case ASCII) when encoding/json
// decodes an object: its exact name or the same ignoring case, as
// encoding/json folds it.
func keyIs(key []byte, plain bool, folded string) bool {
	if plain {
		if len(key)-2 != len(folded) {
			return false
		}
		for j, c := range key[1 : len(key)-1] {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != folded[j] {
				return false
			}
		}
		return true
	}
	var s string
	if json.Unmarshal(key, &s) != nil {
		return false
	}
	return foldName(s) == folded
}

// foldName is encoding/json's folding of a key for case-insensitive
// matching: ASCII letters upper case, every other rune the smallest of
// its simple fold set.
func foldName(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			c := byte(r)
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			continue
		}
		out = utf8.AppendRune(out, foldRune(r))
	}
	return string(out)
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// bundleEntry is one element of bundle.Entry.
type bundleEntry = struct {
	FullURL  string          `json:"fullUrl"`
	Resource json.RawMessage `json:"resource"`
}

// stringValue reads the string or null at b[v] into *dst as encoding/json
// decodes it into a string field (null leaves *dst as it is); any other
// value is refused.
func stringValue(b []byte, v int, dst *string) (int, bool) {
	if v >= len(b) {
		return v, false
	}
	switch b[v] {
	case 'n':
		return skipLiteral(b, v, "null")
	case '"':
		end, plain, ok := skipString(b, v)
		if !ok {
			return end, false
		}
		if plain {
			*dst = string(b[v+1 : end-1])
			return end, true
		}
		return end, json.Unmarshal(b[v:end], dst) == nil
	}
	return v, false
}

// scanTop reads the top level of the resource raw in one pass: its head
// and, when entries is true, the entries of a Bundle (the entry element:
// fullUrl and the resource's bytes, as json.Unmarshal into a bundle reads
// them; link is only checked for the types json.Unmarshal would refuse).
// ok is false when raw is not read here (see the top of this file).
func scanTop(raw []byte, entries bool) (h rawHead, b bundle, ok bool) {
	const depth = 1 // inside the resource object
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return h, b, false
	}
	seenEntry := false
	entry := func(v int) (int, bool) {
		if v < len(raw) && raw[v] == 'n' {
			b.Entry = append(b.Entry, bundleEntry{})
			return skipLiteral(raw, v, "null")
		}
		if v >= len(raw) || raw[v] != '{' {
			return v, false
		}
		var e bundleEntry
		seenURL, seenResource := false, false
		end, ok := scanObject(raw, v, depth+1, func(key []byte, plain bool, v int) (int, bool) {
			switch {
			case keyIs(key, plain, "FULLURL"):
				if seenURL {
					return v, false
				}
				seenURL = true
				return stringValue(raw, v, &e.FullURL)
			case keyIs(key, plain, "RESOURCE"):
				if seenResource {
					return v, false
				}
				seenResource = true
				end, ok := skipValue(raw, v, depth+2)
				// Capacity ends with the value: appending to it copies.
				e.Resource = raw[v:end:end]
				return end, ok
			}
			return skipValue(raw, v, depth+2)
		})
		b.Entry = append(b.Entry, e)
		return end, ok
	}
	link := func(v int) (int, bool) {
		if v < len(raw) && raw[v] == 'n' {
			return skipLiteral(raw, v, "null")
		}
		if v >= len(raw) || raw[v] != '{' {
			return v, false
		}
		var discard string
		return scanObject(raw, v, depth+1, func(key []byte, plain bool, v int) (int, bool) {
			if keyIs(key, plain, "RELATION") || keyIs(key, plain, "URL") {
				return stringValue(raw, v, &discard)
			}
			return skipValue(raw, v, depth+2)
		})
	}
	end, ok := scanObject(raw, i, 0, func(key []byte, plain bool, v int) (int, bool) {
		switch {
		case keyIs(key, plain, "RESOURCETYPE"):
			return stringValue(raw, v, &h.ResourceType)
		case keyIs(key, plain, "ID"):
			return stringValue(raw, v, &h.ID)
		case entries && keyIs(key, plain, "ENTRY"):
			if seenEntry {
				return v, false
			}
			seenEntry = true
			if v < len(raw) && raw[v] == '[' {
				return scanArray(raw, v, depth, entry)
			}
			return skipLiteral(raw, v, "null")
		case entries && keyIs(key, plain, "LINK"):
			if v < len(raw) && raw[v] == '[' {
				return scanArray(raw, v, depth, link)
			}
			return skipLiteral(raw, v, "null")
		}
		return skipValue(raw, v, depth)
	})
	if !ok || skipWS(raw, end) != len(raw) {
		return rawHead{}, bundle{}, false
	}
	return h, b, true
}
