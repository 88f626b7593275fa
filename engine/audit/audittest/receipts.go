package audittest

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

// receiptOf signs and opens the receipt of a stored entry, as a client
// keeps it from the answer.
func receiptOf(t *testing.T, e audit.Entry) audit.Receipt {
	t.Helper()
	enc, err := audit.NewReceiptSigner(Signer()).Sign(e)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return openReceipt(t, enc)
}

func openReceipt(t *testing.T, enc string) audit.Receipt {
	t.Helper()
	r, err := audit.OpenReceipt(Signer().Verifier(), enc)
	if err != nil {
		t.Fatalf("OpenReceipt: %v", err)
	}
	return r
}

// receiptsOf signs and opens the receipts of stored entries of
// consecutive sequences: one by one (v1) when batches is empty, else as
// batch receipts (v2) of that many entries each, in order.
func receiptsOf(t *testing.T, entries []audit.Entry, batches []int) []audit.Receipt {
	t.Helper()
	var rs []audit.Receipt
	if len(batches) == 0 {
		for _, e := range entries {
			rs = append(rs, receiptOf(t, e))
		}
		return rs
	}
	for _, n := range batches {
		encs, err := audit.NewReceiptSigner(Signer()).SignBatch(entries[:n])
		if err != nil {
			t.Fatalf("SignBatch: %v", err)
		}
		for _, enc := range encs {
			if !strings.HasPrefix(decoded(t, enc), "pgxsafety audit receipt v2\n") {
				t.Fatalf("not a batch receipt: %s", decoded(t, enc))
			}
			rs = append(rs, openReceipt(t, enc))
		}
		entries = entries[n:]
	}
	if len(entries) != 0 {
		t.Fatalf("%d entries in no batch", len(entries))
	}
	return rs
}

func decoded(t *testing.T, enc string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func wantOmission(t *testing.T, what string, err error) {
	t.Helper()
	var oe *audit.OmissionError
	if !errors.As(err, &oe) || !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("%s = %v, want an *audit.OmissionError", what, err)
	}
}

// testReceipts: every acknowledged entry's receipt proves its inclusion;
// once an acknowledged entry is deleted — from the end, from the middle
// with the rest re-chained, or leaving a gap — its receipt proves the
// omission, even after a restarted server signed checkpoints of the
// shorter log and the log grew past the receipt's sequence again (the
// 10-second window between an answer and the next checkpoint).
//
// With batches, the receipts are batch receipts (v2) of that many
// entries each, and prove the same.
func testReceipts(t *testing.T, h Harness, batches ...int) {
	ctx := context.Background()
	setup := func(t *testing.T) (Store, []audit.Receipt) {
		s := open(t, h)
		var stored []audit.Entry
		for i := range 6 {
			stored = append(stored, mustAppend(t, s, Entry(i)))
		}
		rs := receiptsOf(t, stored, batches)
		for _, r := range rs {
			if _, err := audit.CheckReceiptIn(ctx, s, r); err != nil {
				t.Fatalf("receipt of logged entry %d: %v", r.Sequence, err)
			}
		}
		return s, rs
	}
	t.Run("last entry deleted, log signed again", func(t *testing.T) {
		s, rs := setup(t)
		h.Tamper(t, s, `DELETE FROM audit_log WHERE seq = 6`)
		// The restarted server's tree sees a consistent, shorter log and
		// signs it: no checkpoint held the deleted entry.
		cp, err := audit.NewLog(s).Checkpoint(ctx, Origin)
		if err != nil || cp.Size != 5 {
			t.Fatalf("checkpoint of the shorter log = %d, %v; want 5 and no error", cp.Size, err)
		}
		_, err = audit.CheckReceiptIn(ctx, s, rs[5])
		wantOmission(t, "receipt of the deleted entry", err)
		// It grows again past sequence 6: the receipt still proves it.
		mustAppend(t, s, Entry(40))
		mustAppend(t, s, Entry(41))
		_, err = audit.CheckReceiptIn(ctx, s, rs[5])
		wantOmission(t, "receipt of the deleted entry after new appends", err)
		for _, r := range rs[:5] {
			if _, err := audit.CheckReceiptIn(ctx, s, r); err != nil {
				t.Errorf("receipt of kept entry %d: %v", r.Sequence, err)
			}
		}
	})
	t.Run("middle entry deleted and the rest re-chained", func(t *testing.T) {
		s, rs := setup(t)
		all := ReadAll(t, s, 1)
		moved := append([]audit.Entry(nil), all[3:]...)
		for i := range moved {
			moved[i].Sequence--
		}
		h.Tamper(t, s, append([]string{`DELETE FROM audit_log WHERE seq >= 3`},
			insertStatements(all[1].EntryHash, moved)...)...)
		if _, err := audit.VerifyLog(ctx, s, audit.VerifyOptions{Key: Signer().Verifier()}); err != nil {
			t.Fatalf("the re-chained log should verify on its own (that is the attack): %v", err)
		}
		for _, r := range rs[2:] {
			_, err := audit.CheckReceiptIn(ctx, s, r)
			wantOmission(t, "receipt of a re-chained or deleted entry", err)
		}
		for _, r := range rs[:2] {
			if _, err := audit.CheckReceiptIn(ctx, s, r); err != nil {
				t.Errorf("receipt of entry %d before the deletion: %v", r.Sequence, err)
			}
		}
	})
	t.Run("middle entry deleted leaving a gap", func(t *testing.T) {
		s, rs := setup(t)
		h.Tamper(t, s, `DELETE FROM audit_log WHERE seq = 3`)
		_, err := audit.CheckReceiptIn(ctx, s, rs[2])
		wantOmission(t, "receipt of the deleted entry", err)
		// The others are in place, but the log is broken: not an
		// omission of theirs, still an error.
		if _, err := audit.CheckReceiptIn(ctx, s, rs[4]); err == nil || !errors.Is(err, audit.ErrChainBroken) {
			t.Errorf("receipt of entry 5 in a log with a gap = %v, want the log reported broken", err)
		}
	})
}

// insertStatements re-chains entries from prev and returns the INSERTs
// that store them (payloads cleared): the attacker's rewrite after a
// deletion.
func insertStatements(prev string, entries []audit.Entry) []string {
	var stmts []string
	for _, e := range entries {
		e.Request, e.Response = nil, nil
		e.PrevHash = prev
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		stmts = append(stmts, `INSERT INTO audit_log (seq, id, time, principal_subject, principal_issuer, principal_name, principal_email,
endpoint, request_id, knowledge_version, request_digest, response_digest, prev_hash, entry_hash) VALUES (`+
			strconv.FormatInt(e.Sequence, 10)+`, `+quote(e.ID)+`, `+quote(e.Time.UTC().Format(audit.TimeFormat))+`, `+quote(e.Principal.Subject)+`, `+
			quote(e.Principal.Issuer)+`, '', '', `+quote(e.Endpoint)+`, `+quote(e.RequestID)+`, `+quote(e.KnowledgeVersion)+`, `+
			quote(e.RequestDigest)+`, `+quote(e.ResponseDigest)+`, `+quote(e.PrevHash)+`, `+quote(e.EntryHash)+`)`)
	}
	return stmts
}

// testCommitGroups: entries appended concurrently with a GroupSlot in
// their context are told their commit group, whose receipts
// (SignCommitted) are batch receipts under one signed note; every receipt,
// batch or not, opens to its entry and proves its inclusion. Which
// appends share a commit depends on timing: rounds of concurrent appends
// are made until one commit held more than one of them.
func testCommitGroups(t *testing.T, h Harness) {
	ctx := context.Background()
	s := open(t, h)
	rs := audit.NewReceiptSigner(Signer())
	type appended struct {
		e    audit.Entry
		slot *audit.GroupSlot
	}
	batched := 0
	for round := 0; round < 20 && batched == 0; round++ {
		got := make([]appended, 16)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				slot := new(audit.GroupSlot)
				e, err := s.Append(audit.WithGroupSlot(ctx, slot), Entry(100*round+i))
				if err != nil {
					t.Errorf("Append: %v", err)
				}
				got[i] = appended{e, slot}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		notes := map[string][]int64{}
		for _, a := range got {
			enc, err := rs.SignCommitted(a.e, a.slot)
			if err != nil {
				t.Fatalf("SignCommitted: %v", err)
			}
			r := openReceipt(t, enc)
			if r.ID != a.e.ID || r.Sequence != a.e.Sequence || r.EntryHash != a.e.EntryHash || !r.Time.Equal(a.e.Time) {
				t.Errorf("receipt %+v of entry %+v", r, a.e)
			}
			if _, err := audit.CheckReceiptIn(ctx, s, r); err != nil {
				t.Errorf("receipt of entry %d: %v", r.Sequence, err)
			}
			if text := decoded(t, enc); strings.HasPrefix(text, "pgxsafety audit receipt v2\n") {
				batched++
				note := text[strings.Index(text, "\n\n")+2:]
				notes[note] = append(notes[note], r.Sequence)
			}
		}
		// A note covers first..last; the appends it receipted are
		// among them.
		for note, seqs := range notes {
			text, err := Signer().Verifier().Open([]byte(note))
			if err != nil {
				t.Fatal(err)
			}
			b, err := audit.ParseReceiptBatch(text)
			if err != nil {
				t.Fatal(err)
			}
			if len(seqs) < 2 || uint64(len(seqs)) > b.Size() {
				t.Errorf("a note of %d-%d receipts %d appends: %v", b.First, b.Last, len(seqs), seqs)
			}
			for _, q := range seqs {
				if q < b.First || q > b.Last {
					t.Errorf("entry %d under the note of %d-%d", q, b.First, b.Last)
				}
			}
		}
	}
	t.Logf("%d appends got batch receipts", batched)
	if batched == 0 {
		t.Error("20 rounds of 16 concurrent appends and no commit held two of them (or the store does not fill GroupSlot)")
	}
}
