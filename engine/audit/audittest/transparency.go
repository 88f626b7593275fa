package audittest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// Origin is the log name (and key name) of the stores under test.
const Origin = "audittest.example/pgxsafety/audit"

var (
	signerOnce sync.Once
	signer     *tlog.Signer
)

// Signer is the log key of the stores under test: harnesses open their
// stores with it, and the suite checks signatures with its verifier.
func Signer() *tlog.Signer {
	signerOnce.Do(func() {
		skey, _, err := tlog.GenerateKey(rand.Reader, Origin)
		if err != nil {
			panic(err)
		}
		if signer, err = tlog.NewSigner(skey); err != nil {
			panic(err)
		}
	})
	return signer
}

// signedCheckpoint is the checkpoint a server would publish now: the whole
// tree of s, signed.
func signedCheckpoint(t *testing.T, s Store) []byte {
	t.Helper()
	cp, err := audit.NewLog(s).Checkpoint(context.Background(), Origin)
	if err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	msg, err := Signer().SignCheckpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// verifyLog is what "pgxsafety audit verify --checkpoint" runs.
func verifyLog(s Store, kept ...[]byte) (audit.LogSummary, error) {
	return audit.VerifyLog(context.Background(), s, audit.VerifyOptions{Key: Signer().Verifier(), Kept: kept})
}

func mustOpenCheckpoint(t *testing.T, msg []byte) tlog.Checkpoint {
	t.Helper()
	cp, err := Signer().Verifier().OpenCheckpoint(msg)
	if err != nil {
		t.Fatalf("OpenCheckpoint: %v", err)
	}
	return cp
}

// wantTreeError fails unless err is a *audit.TreeError (a log that does
// not match a checkpoint).
func wantTreeError(t *testing.T, what string, err error) {
	t.Helper()
	var te *audit.TreeError
	if !errors.As(err, &te) || !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("%s = %v, want an *audit.TreeError", what, err)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rewriteStatements re-chains entries from the hash before the first of
// them and returns UPDATE statements that store them, payloads cleared:
// the attacker's rewrite of the log with every hash recomputed.
func rewriteStatements(prev string, entries []audit.Entry) []string {
	var stmts []string
	for _, e := range entries {
		e.Request, e.Response = nil, nil
		e.PrevHash = prev
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		stmts = append(stmts, fmt.Sprintf(`UPDATE audit_log SET time = %s, principal_subject = %s, endpoint = %s,
request_id = %s, request_digest = %s, response_digest = %s, request = NULL, response = NULL, prev_hash = %s, entry_hash = %s WHERE seq = %d`,
			quote(e.Time.UTC().Format(audit.TimeFormat)), quote(e.Principal.Subject), quote(e.Endpoint), quote(e.RequestID),
			quote(e.RequestDigest), quote(e.ResponseDigest), quote(e.PrevHash), quote(e.EntryHash), e.Sequence))
	}
	return stmts
}

func testReplaceRefused(t *testing.T, h Harness) {
	s := open(t, h)
	for i := range 3 {
		mustAppend(t, s, Entry(i))
	}
	const cols = `seq, id, time, principal_subject, principal_issuer, principal_name, principal_email, endpoint,
request_id, knowledge_version, request_digest, response_digest, request, response, prev_hash, entry_hash, committed_at`
	// The same row, with the answer changed from HIGH to NONE.
	const changed = `seq, id, time, principal_subject, principal_issuer, principal_name, principal_email, endpoint,
request_id, knowledge_version, request_digest, 'sha256:NONE', request, response, prev_hash, entry_hash, committed_at`
	stmts := []string{
		`INSERT INTO audit_log (` + cols + `) SELECT ` + changed + ` FROM audit_log WHERE seq = 2
ON CONFLICT (seq) DO UPDATE SET response_digest = excluded.response_digest`,
		`INSERT INTO audit_log (` + cols + `) SELECT ` + changed + ` FROM audit_log WHERE seq = 2 ON CONFLICT DO NOTHING`,
	}
	if h.Dialect == "sqlite" {
		stmts = append(stmts,
			`INSERT OR REPLACE INTO audit_log (`+cols+`) SELECT `+changed+` FROM audit_log WHERE seq = 2`,
			`REPLACE INTO audit_log (`+cols+`) SELECT `+changed+` FROM audit_log WHERE seq = 2`,
			`INSERT OR IGNORE INTO audit_log (`+cols+`) SELECT `+changed+` FROM audit_log WHERE seq = 2`)
	}
	for _, stmt := range stmts {
		err := h.Exec(t, s, stmt)
		if strings.Contains(stmt, "DO NOTHING") || strings.Contains(stmt, "OR IGNORE") {
			// Refused or ignored: either way nothing may change.
			if err != nil && !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s: %v", stmt, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v, want the append-only trigger to refuse it", stmt, err)
		}
	}
	got := ReadAll(t, s, 0)
	if len(got) != 3 || got[1].ResponseDigest != Entry(1).ResponseDigest {
		t.Errorf("the log changed: %+v", got)
	}
	if err := audit.Verify(context.Background(), s); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func testProofs(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	var entries []audit.Entry
	for i := range 5 {
		entries = append(entries, mustAppend(t, s, Entry(i)))
	}
	old := mustOpenCheckpoint(t, signedCheckpoint(t, s))
	for i := 5; i < 11; i++ {
		entries = append(entries, mustAppend(t, s, Entry(i)))
	}
	log := audit.NewLog(s)
	cur, err := log.Checkpoint(ctx, Origin)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Size != 11 || old.Size != 5 {
		t.Fatalf("checkpoint sizes %d and %d, want 5 and 11", old.Size, cur.Size)
	}
	for _, e := range entries {
		for _, cp := range []tlog.Checkpoint{old, cur} {
			if uint64(e.Sequence) > cp.Size {
				continue
			}
			p, err := log.InclusionProof(ctx, e.Sequence, cp.Size)
			if err != nil {
				t.Fatalf("InclusionProof(%d, %d): %v", e.Sequence, cp.Size, err)
			}
			leaf, err := audit.LeafHash(audit.Hash(e.PrevHash, e))
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.VerifyInclusion(uint64(e.Sequence-1), cp.Size, leaf, p, cp.Root); err != nil {
				t.Errorf("inclusion of %d in %d: %v", e.Sequence, cp.Size, err)
			}
		}
	}
	p, err := log.ConsistencyProof(ctx, old.Size, cur.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.VerifyConsistency(old.Size, cur.Size, p, old.Root, cur.Root); err != nil {
		t.Errorf("consistency 5→11: %v", err)
	}
	if _, err := log.InclusionProof(ctx, 12, cur.Size); !errors.Is(err, tlog.ErrProof) {
		t.Errorf("proof of a missing entry = %v, want ErrProof", err)
	}
	// An appended entry is seen by the same Log (it syncs).
	mustAppend(t, s, Entry(20))
	if n, err := log.Sync(ctx); err != nil || n != 12 {
		t.Errorf("Sync = %d, %v; want 12", n, err)
	}
}

func testTruncation(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		stmt string
	}{
		{"last entry", `DELETE FROM audit_log WHERE seq = 6`},
		{"last five entries", `DELETE FROM audit_log WHERE seq >= 2`},
		{"every entry", `DELETE FROM audit_log`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, h)
			ctx := context.Background()
			for i := range 6 {
				mustAppend(t, s, Entry(i))
			}
			live := audit.NewLog(s)
			if _, err := live.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			kept := signedCheckpoint(t, s)
			h.Tamper(t, s, tc.stmt)

			// The hash chain alone cannot tell: what remains chains.
			if err := audit.Verify(ctx, s); err != nil {
				t.Fatalf("the truncated chain should still chain (that is the attack): %v", err)
			}
			// The checkpoint kept from before exposes it.
			_, err := verifyLog(s, kept)
			wantTreeError(t, "VerifyLog against the checkpoint from before the truncation", err)

			// The server's tree notices as soon as the store moves on: the
			// next entry reuses a sequence the tree already holds and
			// does not chain to it.
			mustAppend(t, s, Entry(30))
			_, err = live.Sync(ctx)
			if _, err2 := live.Sync(ctx); err == nil || !errors.Is(err2, audit.ErrChainBroken) {
				t.Errorf("Sync after truncation = %v, then %v; want the log to be reported broken", err, err2)
			}
			if live.Broken() == nil {
				t.Error("Broken() = nil after truncation")
			}
			// A fresh server cannot prove the new tree extends the kept one.
			old := mustOpenCheckpoint(t, kept)
			fresh := audit.NewLog(s)
			cur, err := fresh.Checkpoint(ctx, Origin)
			if err != nil {
				t.Fatal(err)
			}
			if p, err := fresh.ConsistencyProof(ctx, old.Size, cur.Size); err == nil {
				if tlog.VerifyConsistency(old.Size, cur.Size, p, old.Root, cur.Root) == nil {
					t.Error("a consistency proof from the kept checkpoint to the truncated log verified")
				}
			}
		})
	}
}

func testRewrite(t *testing.T, h Harness) {
	tests := []struct {
		name   string
		mutate func(es []audit.Entry) (first int, out []audit.Entry)
	}{
		{"answer changed from HIGH to NONE, hashes recomputed", func(es []audit.Entry) (int, []audit.Entry) {
			es[2].ResponseDigest = "sha256:NONE"
			return 2, es[2:]
		}},
		{"entries reordered, hashes recomputed", func(es []audit.Entry) (int, []audit.Entry) {
			a, b := es[1], es[2]
			a.Sequence, b.Sequence = 3, 2
			a.ID, b.ID = es[2].ID, es[1].ID
			return 1, append([]audit.Entry{b, a}, es[3:]...)
		}},
		{"whole chain rewritten from the genesis", func(es []audit.Entry) (int, []audit.Entry) {
			for i := range es {
				es[i].Principal.Subject = "someone-else"
			}
			return 0, es
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, h)
			ctx := context.Background()
			for i := range 6 {
				mustAppend(t, s, Entry(i))
			}
			kept := signedCheckpoint(t, s)
			es := ReadAll(t, s, 0)
			first, out := tc.mutate(append([]audit.Entry(nil), es...))
			prev := audit.GenesisHash
			if first > 0 {
				prev = es[first-1].EntryHash
			}
			h.Tamper(t, s, rewriteStatements(prev, out)...)
			if err := audit.Verify(ctx, s); err != nil {
				t.Fatalf("the rewritten chain should verify on its own (that is the attack): %v", err)
			}
			_, err := verifyLog(s, kept)
			wantTreeError(t, "VerifyLog against the checkpoint from before the rewrite", err)
		})
	}
}

func testForgedRetention(t *testing.T, h Harness) {
	ctx := context.Background()
	now := time.Now().UTC()
	forger := func() *tlog.Signer {
		skey, _, err := tlog.GenerateKey(rand.Reader, Origin)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tlog.NewSigner(skey)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}()
	tests := []struct {
		name string
		note func(cp audit.Checkpoint, root tlog.Hash) string
	}{
		{"unsigned", func(audit.Checkpoint, tlog.Hash) string { return "" }},
		{"signed with another key", func(cp audit.Checkpoint, root tlog.Hash) string {
			msg, err := forger.Sign(audit.RetentionNoteText(Origin, cp, root))
			if err != nil {
				t.Fatal(err)
			}
			return string(msg)
		}},
		{"signed with the log key, covering entries 10 minutes old", func(cp audit.Checkpoint, root tlog.Hash) string {
			msg, err := Signer().Sign(audit.RetentionNoteText(Origin, cp, root))
			if err != nil {
				t.Fatal(err)
			}
			return string(msg)
		}},
		{"log signature over other values", func(cp audit.Checkpoint, root tlog.Hash) string {
			other := cp
			other.ThroughTime = now.AddDate(-2, 0, 0)
			other.PurgedAt = now
			msg, err := Signer().Sign(audit.RetentionNoteText(Origin, other, root))
			if err != nil {
				t.Fatal(err)
			}
			return string(msg)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, h)
			var all []audit.Entry
			for i := range 5 {
				e := Entry(i)
				e.Time = now.Add(-10 * time.Minute).Add(time.Duration(i) * time.Second)
				all = append(all, mustAppend(t, s, e))
			}
			tree, err := audit.BuildTree(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			root, _ := tree.Root(3)
			cp := audit.Checkpoint{ThroughSequence: 3, EntryHash: all[2].EntryHash, ThroughTime: all[2].Time, PurgedAt: now, Removed: 3}
			note := tc.note(cp, root)
			noteSQL := "NULL"
			if note != "" {
				noteSQL = quote(note)
			}
			// The database refuses the forged checkpoint itself.
			insert := fmt.Sprintf(`INSERT INTO audit_checkpoint (through_seq, entry_hash, through_time, purged_at, removed, note)
VALUES (3, %s, %s, %s, 3, %s)`, quote(cp.EntryHash), quote(cp.ThroughTime.Format(audit.TimeFormat)), quote(now.Format(audit.TimeFormat)), noteSQL)
			if err := h.Exec(t, s, insert); err == nil {
				t.Fatal("the database accepted a checkpoint covering entries 10 minutes old")
			}
			// An attacker with DDL rights inserts it anyway, keeps the
			// leaves and deletes the entries.
			h.Tamper(t, s, insert,
				`INSERT INTO audit_purged_leaf (seq, entry_hash) SELECT seq, entry_hash FROM audit_log WHERE seq <= 3`,
				`DELETE FROM audit_log WHERE seq <= 3`)
			if note == "" {
				if err := audit.Verify(ctx, s); !errors.Is(err, audit.ErrRetentionCheckpoint) {
					t.Errorf("Verify = %v, want the unsigned checkpoint refused", err)
				}
			}
			if _, err := verifyLog(s); !errors.Is(err, audit.ErrRetentionCheckpoint) {
				t.Errorf("VerifyLog = %v, want the forged checkpoint refused", err)
			}
		})
	}
}

func testSkewedPurge(t *testing.T, h Harness) {
	now := time.Now().UTC()

	// A replica whose clock is 400 days behind wrote these entries just
	// now: by their own time they look expired.
	s := open(t, h)
	var all []audit.Entry
	for i := range 3 {
		e := Entry(i)
		e.Time = now.AddDate(0, 0, -400).Add(time.Duration(i) * time.Second)
		all = append(all, mustAppend(t, s, e))
	}
	n, err := h.Purge(t, s, now.AddDate(0, 0, -365))
	if err != nil || n != 0 {
		t.Errorf("Purge of entries committed just now (dated 400 days ago) = %d, %v; want nothing removed", n, err)
	}
	if err := h.Exec(t, s, fmt.Sprintf(`INSERT INTO audit_checkpoint (through_seq, entry_hash, through_time, purged_at, removed, note)
VALUES (2, %s, %s, %s, 2, 'note')`, quote(all[1].EntryHash), quote(all[1].Time.Format(audit.TimeFormat)), quote(now.Format(audit.TimeFormat)))); err == nil {
		t.Error("the database accepted a checkpoint covering entries it committed just now")
	}
	if got := len(ReadAll(t, s, 0)); got != 3 {
		t.Errorf("the log holds %d entries, want 3", got)
	}

	// A service whose clock is 400 days ahead: its cutoff is in the
	// database's future.
	ahead := h.OpenClock(t, func() time.Time { return time.Now().AddDate(0, 0, 400) })
	t.Cleanup(func() { ahead.Close() })
	for i := range 3 {
		e := Entry(i)
		e.Time = time.Now().AddDate(0, 0, 400)
		mustAppend(t, ahead, e)
	}
	n, err = h.Purge(t, ahead, now.AddDate(0, 0, 400-365))
	if err != nil || n != 0 {
		t.Errorf("Purge by a service 400 days ahead = %d, %v; want nothing removed", n, err)
	}
	// Nor does the committed time alone decide: entries committed long
	// ago but dated recently stay.
	h.Backdate(t, ahead, 3, now.AddDate(-2, 0, 0))
	n, err = h.Purge(t, ahead, now.AddDate(0, 0, 400-365))
	if err != nil || n != 0 {
		t.Errorf("Purge of entries dated recently = %d, %v; want nothing removed", n, err)
	}
	if _, err := verifyLog(ahead); err != nil {
		t.Errorf("VerifyLog: %v", err)
	}
}
