package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// canonicalReference is the canonical form as it was first defined:
// encoding/json encoding a struct of the fields in a fixed order, HTML
// escaping off, trailing newline dropped. Canonical and Hash write the same
// bytes field by field; FuzzCanonicalMatchesReference holds them to it.
func canonicalReference(e audit.Entry) []byte {
	type principal struct {
		Subject string `json:"subject"`
		Issuer  string `json:"issuer"`
		Name    string `json:"name"`
		Email   string `json:"email"`
	}
	c := struct {
		ID               string    `json:"id"`
		Sequence         int64     `json:"sequence"`
		Time             string    `json:"time"`
		Principal        principal `json:"principal"`
		Endpoint         string    `json:"endpoint"`
		RequestID        string    `json:"request_id"`
		KnowledgeVersion string    `json:"knowledge_version"`
		RequestDigest    string    `json:"request_digest"`
		ResponseDigest   string    `json:"response_digest"`
		Request          string    `json:"request"`
		Response         string    `json:"response"`
		PrevHash         string    `json:"prev_hash"`
	}{
		ID:               e.ID,
		Sequence:         e.Sequence,
		Time:             e.Time.UTC().Format(audit.TimeFormat),
		Principal:        principal{e.Principal.Subject, e.Principal.Issuer, e.Principal.Name, e.Principal.Email},
		Endpoint:         e.Endpoint,
		RequestID:        e.RequestID,
		KnowledgeVersion: e.KnowledgeVersion,
		RequestDigest:    e.RequestDigest,
		ResponseDigest:   e.ResponseDigest,
		Request:          base64.StdEncoding.EncodeToString(e.Request),
		Response:         base64.StdEncoding.EncodeToString(e.Response),
		PrevHash:         e.PrevHash,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func hashReference(prev string, e audit.Entry) string {
	h := sha256.Sum256(append([]byte(prev), canonicalReference(e)...))
	return hex.EncodeToString(h[:])
}

// checkCanonical reports where Canonical or Hash differ from the reference.
func checkCanonical(t *testing.T, e audit.Entry) {
	t.Helper()
	if diff := cmp.Diff(string(canonicalReference(e)), string(audit.Canonical(e))); diff != "" {
		t.Fatalf("Canonical differs from the reference (-reference +got):\n%s", diff)
	}
	want := hashReference(e.PrevHash, e)
	if got := audit.Hash(e.PrevHash, e); got != want {
		t.Fatalf("Hash = %s, reference %s", got, want)
	}
	// A store writes the body before its writer assigns the id, sequence
	// and prev_hash: the hash must not depend on when the body was written.
	unassigned := e
	unassigned.ID, unassigned.Sequence, unassigned.Time, unassigned.PrevHash = "", 0, time.Time{}, ""
	body := audit.CanonicalBody(unassigned)
	if got := audit.HashWithBody(e.PrevHash, e, body); got != want {
		t.Fatalf("HashWithBody = %s, reference %s", got, want)
	}
}

func TestCanonicalMatchesReference(t *testing.T) {
	long := bytes.Repeat([]byte(`{"drug":"clopidogrel","note":"<&>"}`), 300)
	for _, e := range []audit.Entry{
		{},
		chain(1)[0],
		{ID: "aud_X", Sequence: -7, Time: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Principal: audit.Principal{Subject: "a\"b\\c\nd\te\x00\x1f\x7f", Name: "Dr. Ánanya <Rao> & co", Email: "\u2028\u2029"},
			Endpoint: "bad \xff utf-8", RequestID: "é", Request: long, Response: long[:1], PrevHash: audit.GenesisHash},
	} {
		checkCanonical(t, e)
	}
}

// FuzzCanonicalMatchesReference is the differential test of the
// field-by-field canonical writer against encoding/json.
func FuzzCanonicalMatchesReference(f *testing.F) {
	f.Add("aud_01", int64(1), int64(1741945166535897932), "sub", "iss", "Dr. <Rao> & co", "a@b", "POST /pgx/check",
		"req", "kv", "sha256:1", "sha256:2", []byte(`{"drug":"x"}`), []byte(`{}`), audit.GenesisHash)
	f.Add("\x00\"\\", int64(-1), int64(0), "\u2028", "\xff", "é", "\t", "", "\n", "\r", "\b", "\f", []byte{}, []byte{0xff}, "")
	f.Fuzz(func(t *testing.T, id string, seq, ns int64, sub, iss, name, email, endpoint, reqID, kv, reqDig, resDig string,
		req, res []byte, prev string) {
		checkCanonical(t, audit.Entry{
			ID: id, Sequence: seq, Time: time.Unix(0, ns),
			Principal: audit.Principal{Subject: sub, Issuer: iss, Name: name, Email: email},
			Endpoint:  endpoint, RequestID: reqID, KnowledgeVersion: kv, RequestDigest: reqDig, ResponseDigest: resDig,
			Request: req, Response: res, PrevHash: prev,
		})
	})
}

// BenchmarkHash measures the entry hash of a /pgx/check-sized entry (1 KB
// request, 4 KB response), against the reference that builds the
// canonical bytes first.
func BenchmarkHash(b *testing.B) {
	e := chain(1)[0]
	e.Request = bytes.Repeat([]byte("r"), 1024)
	e.Response = bytes.Repeat([]byte("a"), 4096)
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			audit.Hash(e.PrevHash, e)
		}
	})
	b.Run("body-written-before", func(b *testing.B) {
		body := audit.CanonicalBody(e)
		b.ReportAllocs()
		for b.Loop() {
			audit.HashWithBody(e.PrevHash, e, body)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			hashReference(e.PrevHash, e)
		}
	})
}
