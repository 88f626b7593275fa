package sqlstore

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

func TestEncodePayloads(t *testing.T) {
	answer := []byte(strings.Repeat(`{"gene":"CYP2C19","phenotype":"Poor Metabolizer"},`, 100))
	tests := []struct {
		name      string
		e         audit.Entry
		wantCodec any
	}{
		{"both", audit.Entry{Request: []byte(`{"drug":"clopidogrel"}`), Response: answer}, codecS2},
		{"response only", audit.Entry{Response: answer}, codecS2},
		{"none", audit.Entry{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := encodePayloads(tc.e)
			if p.codec != tc.wantCodec {
				t.Fatalf("codec %v, want %v", p.codec, tc.wantCodec)
			}
			codec := sql.NullString{}
			if p.codec != nil {
				codec = sql.NullString{String: codecS2, Valid: true}
			}
			for _, c := range []struct {
				name         string
				given, store []byte
			}{{"request", tc.e.Request, p.request}, {"response", tc.e.Response, p.response}} {
				if (c.given == nil) != (c.store == nil) {
					t.Errorf("%s: given %q stored %q: a missing payload must stay missing", c.name, c.given, c.store)
				}
				got, err := decodePayload(codec, c.store, 1, c.name)
				if err != nil || !bytes.Equal(got, c.given) {
					t.Errorf("%s: round trip = %q, %v", c.name, got, err)
				}
			}
		})
	}
}

func TestDecodePayloadRefuses(t *testing.T) {
	s2codec := sql.NullString{String: codecS2, Valid: true}
	huge := binary.AppendUvarint(nil, maxStoredPayload+1)
	tests := []struct {
		name  string
		codec sql.NullString
		b     []byte
		want  string
	}{
		{"unknown codec", sql.NullString{String: "zstd", Valid: true}, []byte("x"), `unknown payload_codec "zstd"`},
		{"claims more than the store writes", s2codec, append(huge, 0), "more than the store writes"},
		{"not a block", s2codec, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "request"},
		{"cut short", s2codec, s2.Encode(nil, []byte(strings.Repeat("abc", 1000)))[:20], "request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodePayload(tc.codec, tc.b, 7, "request")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "entry 7") {
				t.Errorf("decodePayload = %q, %v; want an error naming entry 7 and %q", got, err, tc.want)
			}
		})
	}
}

// FuzzDecodePayload: any stored bytes are refused or decoded within the
// bound, never a panic; any payload round-trips through encodePayloads.
func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"}}`))
	f.Add(s2.Encode(nil, []byte(strings.Repeat(`{"phenotype":"Poor Metabolizer"},`, 200))))
	f.Add(binary.AppendUvarint(nil, maxStoredPayload+1))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		codec := sql.NullString{String: codecS2, Valid: true}
		if got, err := decodePayload(codec, b, 1, "response"); err == nil && len(got) > maxStoredPayload {
			t.Fatalf("decoded %d bytes, over the bound", len(got))
		}
		p := encodePayloads(audit.Entry{Response: b})
		if p.codec == nil {
			return
		}
		got, err := decodePayload(codec, p.response, 1, "response")
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %q = %q, %v", b, got, err)
		}
	})
}
