package audit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// memLog is an in-memory Reader that chains entries like a store does.
type memLog []audit.Entry

func (m memLog) Entries(_ context.Context, from int64, fn func(audit.Entry) error) error {
	for _, e := range m {
		if e.Sequence < from {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func chain(n int) memLog {
	var m memLog
	prev := audit.GenesisHash
	for i := range n {
		e := audit.Entry{
			ID:        "aud_" + strings.Repeat(string(rune('A'+i)), 26),
			Sequence:  int64(i + 1),
			Time:      time.Date(2025, 1, 2, 3, 4, 5, i, time.FixedZone("IST", 19800)),
			Principal: audit.Principal{Subject: "s"},
			Endpoint:  "POST /pgx/check",
			Request:   []byte(`{"drug":"x"}`),
			PrevHash:  prev,
		}
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		m = append(m, e)
	}
	return m
}

func TestCanonicalIsStable(t *testing.T) {
	e := chain(1)[0]
	want := `{"id":"aud_AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":1,"time":"2025-01-01T21:34:05Z",` +
		`"principal":{"subject":"s","issuer":"","name":"","email":""},"endpoint":"POST /pgx/check",` +
		`"request_id":"","knowledge_version":"","request_digest":"","response_digest":"",` +
		`"request":"eyJkcnVnIjoieCJ9","response":"","prev_hash":"` + audit.GenesisHash + `"}`
	if got := string(audit.Canonical(e)); got != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
	// EntryHash is not part of the canonical form; nil and empty payloads
	// hash alike; the time zone of Time does not matter.
	f := e
	f.EntryHash = "different"
	f.Response = []byte{}
	f.Time = e.Time.UTC()
	if audit.Hash(audit.GenesisHash, f) != e.EntryHash {
		t.Error("hash depends on EntryHash, payload nil-ness or time zone")
	}
	if len(e.EntryHash) != 64 {
		t.Errorf("EntryHash %q is not hex SHA-256", e.EntryHash)
	}
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	if err := audit.Verify(ctx, memLog(nil)); err != nil {
		t.Errorf("empty log: %v", err)
	}
	if err := audit.Verify(ctx, chain(4)); err != nil {
		t.Errorf("intact log: %v", err)
	}

	tests := []struct {
		name    string
		mutate  func(memLog) memLog
		wantSeq int64
	}{
		{"changed field", func(m memLog) memLog { m[2].Endpoint = "x"; return m }, 3},
		{"changed payload", func(m memLog) memLog { m[1].Request = []byte("{}"); return m }, 2},
		{"dropped middle", func(m memLog) memLog { return append(m[:1:1], m[2:]...) }, 2},
		{"dropped first", func(m memLog) memLog { return m[1:] }, 1},
		{"relinked", func(m memLog) memLog {
			m[2].PrevHash = m[0].EntryHash
			m[2].EntryHash = audit.Hash(m[2].PrevHash, m[2])
			return m
		}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := audit.Verify(ctx, tc.mutate(chain(4)))
			var ce *audit.ChainError
			if !errors.As(err, &ce) || !errors.Is(err, audit.ErrChainBroken) {
				t.Fatalf("Verify = %v, want a ChainError", err)
			}
			if ce.Sequence != tc.wantSeq {
				t.Errorf("Verify names sequence %d, want %d (%v)", ce.Sequence, tc.wantSeq, err)
			}
		})
	}
}
