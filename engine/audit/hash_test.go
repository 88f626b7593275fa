package audit_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// purgedLog is a memLog whose first entries were purged behind a
// checkpoint.
type purgedLog struct {
	memLog
	cp audit.Checkpoint
}

func (p purgedLog) LatestCheckpoint(context.Context) (audit.Checkpoint, bool, error) {
	return p.cp, true, nil
}

func purged(m memLog, through int) purgedLog {
	last := m[through-1]
	return purgedLog{
		memLog: append(memLog(nil), m[through:]...),
		// VerifyChain only checks that a note is present; VerifyLog checks
		// it (transparency_test.go).
		cp: audit.Checkpoint{ThroughSequence: last.Sequence, EntryHash: last.EntryHash, ThroughTime: last.Time,
			Removed: int64(through), Note: []byte("signed note")},
	}
}

func TestVerifyFromCheckpoint(t *testing.T) {
	ctx := context.Background()
	full := chain(6)
	sum, err := audit.VerifyChain(ctx, purged(chain(6), 2))
	if err != nil {
		t.Fatalf("purged log: %v", err)
	}
	want := audit.Summary{Entries: 4, FirstSequence: 3, LastSequence: 6, HeadHash: full[5].EntryHash}
	if sum.Checkpoint == nil || sum.Checkpoint.ThroughSequence != 2 {
		t.Fatalf("summary checkpoint = %+v, want through 2", sum.Checkpoint)
	}
	sum.Checkpoint = nil
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// Everything purged: the head is the checkpoint.
	all := purged(chain(3), 3)
	sum, err = audit.VerifyChain(ctx, all)
	if err != nil || sum.Entries != 0 || sum.HeadHash != all.cp.EntryHash {
		t.Errorf("fully purged log: %+v, %v", sum, err)
	}

	tests := []struct {
		name    string
		log     purgedLog
		wantSeq int64
	}{
		{"gap after checkpoint", func() purgedLog { p := purged(chain(6), 2); p.memLog = p.memLog[1:]; return p }(), 3},
		{"wrong checkpoint hash", func() purgedLog { p := purged(chain(6), 2); p.cp.EntryHash = audit.GenesisHash; return p }(), 3},
		{"entry left below checkpoint", func() purgedLog {
			p := purged(chain(6), 2)
			p.memLog = append(memLog{chain(2)[1]}, p.memLog...)
			return p
		}(), 2},
	}
	unsigned := purged(chain(6), 2)
	unsigned.cp.Note = nil
	if err := audit.Verify(ctx, unsigned); !errors.Is(err, audit.ErrRetentionCheckpoint) {
		t.Errorf("Verify with an unsigned checkpoint = %v, want ErrRetentionCheckpoint", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ce *audit.ChainError
			if err := audit.Verify(ctx, tc.log); !errors.As(err, &ce) || ce.Sequence != tc.wantSeq {
				t.Errorf("Verify = %v, want a ChainError at %d", err, tc.wantSeq)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/canonical_entry.golden")

// TestCanonicalGolden pins the canonical bytes and the entry hash of one
// fixed entry with every field set, including characters JSON encoders like
// to escape. If this test fails, every stored chain stops verifying: change
// the canonical form only with a new chain version, never in place.
func TestCanonicalGolden(t *testing.T) {
	e := audit.Entry{
		ID:       "aud_01JQ0000000000000000000000",
		Sequence: 42,
		Time:     time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("IST", 5*3600+1800)),
		Principal: audit.Principal{
			Subject: "248289761001",
			Issuer:  "https://issuer.example.org/realms/pgx",
			Name:    "Dr. Ánanya <Rao> & co",
			Email:   "ananya.rao@example.org",
		},
		Endpoint:         "POST /pgx/check",
		RequestID:        "req_0123456789abcdef0123456789abcdef",
		KnowledgeVersion: "kv-2026-02-01+sha256:abcdef",
		RequestDigest:    "sha256:" + strings.Repeat("1", 64),
		ResponseDigest:   "sha256:" + strings.Repeat("2", 64),
		Request:          []byte(`{"drug":"clopidogrel","diplotypes":{"CYP2C19":"*2/*2"}}`),
		Response:         []byte(`{"overall_severity":"HIGH"}`),
		PrevHash:         strings.Repeat("ab", 32),
	}
	got := string(audit.Canonical(e)) + "\n" + audit.Hash(e.PrevHash, e) + "\n"
	path := filepath.Join("testdata", "canonical_entry.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("canonical bytes or hash changed (-golden +got):\n%s", diff)
	}
}
