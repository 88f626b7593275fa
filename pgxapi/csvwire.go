package pgxapi

// The wire form of one lab CSV row result (spec §2.7), written by
// POST /pgx/batch_csv and "pgxsafety batch". It is written by hand, not
// with encoding/json, because it wraps the row's result JSON (already
// encoded once per distinct row by the processor) without decoding it.

import (
	"strconv"
	"unicode/utf8"

	"github.com/pgxsafety/pgxsafety/engine/labcsv"
)

// AppendRowJSON appends the JSON object of one row result: row, line,
// patient_ref, ok, audit_log_id (when auditID is not empty) and either
// result or error. kind, when not empty, is written first as "kind" (the
// NDJSON line type).
func AppendRowJSON(dst []byte, r *labcsv.Row, auditID, kind string) []byte {
	dst = append(dst, '{')
	if kind != "" {
		dst = append(dst, `"kind":`...)
		dst = appendJSONString(dst, kind)
		dst = append(dst, ',')
	}
	dst = append(dst, `"row":`...)
	dst = strconv.AppendInt(dst, int64(r.Row), 10)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, int64(r.Line), 10)
	dst = append(dst, `,"patient_ref":`...)
	dst = appendJSONString(dst, r.PatientRef())
	dst = append(dst, `,"ok":`...)
	dst = strconv.AppendBool(dst, r.OK)
	if auditID != "" {
		dst = append(dst, `,"audit_log_id":`...)
		dst = appendJSONString(dst, auditID)
	}
	if r.OK {
		dst = append(dst, `,"result":`...)
		dst = append(dst, r.Result...)
	} else if r.Error != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = appendJSONString(dst, r.Error.Code)
		dst = append(dst, `,"field":`...)
		dst = appendJSONString(dst, r.Error.Field)
		dst = append(dst, `,"detail":`...)
		dst = appendJSONString(dst, r.Error.Detail)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped exactly as
// encoding/json does with HTML escaping off (invalid UTF-8 becomes
// U+FFFD; U+2028 and U+2029 are escaped).
func appendJSONString(dst []byte, s string) []byte {
	return appendJSONStringHTML(dst, s, false)
}

// appendJSONStringHTML appends s as a JSON string, escaped exactly as
// encoding/json does: with escapeHTML, '<', '>' and '&' become \u003c,
// \u003e and \u0026 (json.Marshal's form); without, they are kept (an
// Encoder with SetEscapeHTML(false)).
func appendJSONStringHTML(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = skipPlainWords(s, i, escapeHTML)
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Byte-wise masks for skipPlainWords.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// skipPlainWords returns the index, from i on, of the first 8-byte word of
// s that is not all plain ASCII (or of its last, shorter, tail): plain is
// what a JSON string holds as it is, no control character, '"' or '\\',
// and with escapeHTML no '<', '>' or '&'. It tests eight bytes at once
// (the "has a zero byte" and "has a byte less than n" tricks), which is
// what makes appendJSONStringHTML faster than encoding/json on plain text.
func skipPlainWords(s string, i int, escapeHTML bool) int {
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := v ^ ('"' * ones)
		bs := v ^ ('\\' * ones)
		bad := v | (v-0x20*ones)&^v | (q-ones)&^q | (bs-ones)&^bs
		if escapeHTML {
			lt, gt, amp := v^('<'*ones), v^('>'*ones), v^('&'*ones)
			bad |= (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
		}
		if bad&highs != 0 {
			return i
		}
	}
	return i
}
