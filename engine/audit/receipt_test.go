package audit_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

func receiptKey(t testing.TB, name string) *tlog.Signer {
	t.Helper()
	skey, _, err := tlog.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storedEntries is a chain of n entries as a store would return them.
func storedEntries(n int) []audit.Entry {
	var out []audit.Entry
	prev := audit.GenesisHash
	for i := range n {
		e := audit.Entry{
			ID: "aud_" + strings.Repeat(string(rune('A'+i)), 26), Sequence: int64(i + 1),
			Time:     time.Date(2026, 11, 28, 10, 0, i, 500, time.UTC),
			Endpoint: "POST /pgx/check", RequestID: "req", RequestDigest: "sha256:a", ResponseDigest: "sha256:b",
			PrevHash: prev,
		}
		e.EntryHash = audit.Hash(prev, e)
		prev = e.EntryHash
		out = append(out, e)
	}
	return out
}

func treeOf(t *testing.T, entries []audit.Entry) *tlog.Tree {
	t.Helper()
	var tree tlog.Tree
	for _, e := range entries {
		h, err := audit.LeafHash(e.EntryHash)
		if err != nil {
			t.Fatal(err)
		}
		tree.Append(h)
	}
	return &tree
}

func TestReceiptRoundTrip(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	e := storedEntries(3)[2]
	enc, err := audit.NewReceiptSigner(key).Sign(e)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(enc, "\n\r ") {
		t.Fatalf("encoded receipt %q does not fit a header", enc)
	}
	want := audit.Receipt{Origin: "example.org/log", ID: e.ID, Sequence: 3, EntryHash: e.EntryHash, Time: e.Time}
	got, err := audit.OpenReceipt(key.Verifier(), enc)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("opened receipt (-want +got):\n%s", d)
	}
	// The signed note itself is accepted too.
	raw, _ := base64.StdEncoding.DecodeString(enc)
	if got, err := audit.OpenReceipt(key.Verifier(), string(raw)); err != nil || got.ID != e.ID {
		t.Errorf("OpenReceipt(note) = %+v, %v", got, err)
	}
	if !strings.HasPrefix(string(raw), "pgxsafety audit receipt v1\norigin example.org/log\nid "+e.ID+"\nsequence 3\nentry_hash "+e.EntryHash+"\ntime 2026-11-28T10:00:02.0000005Z\n\n— example.org/log ") {
		t.Errorf("receipt note:\n%s", raw)
	}
}

func TestReceiptRefused(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	other := receiptKey(t, "example.org/log")
	e := storedEntries(1)[0]
	enc, err := audit.NewReceiptSigner(key).Sign(e)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(enc)
	forged := strings.Replace(string(raw), "sequence 1", "sequence 2", 1)
	cp, err := key.SignCheckpoint(tlog.Checkpoint{Origin: "example.org/log", Size: 1, Root: tlog.HashLeaf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		receipt string
		kind    error
	}{
		"another key":         {enc, tlog.ErrSignature},
		"changed sequence":    {base64.StdEncoding.EncodeToString([]byte(forged)), tlog.ErrSignature},
		"not base64":          {"%%%", tlog.ErrFormat},
		"a checkpoint":        {base64.StdEncoding.EncodeToString(cp), tlog.ErrFormat},
		"empty":               {"", tlog.ErrFormat},
		"truncated signature": {enc[:len(enc)-8], tlog.ErrFormat},
	} {
		t.Run(name, func(t *testing.T) {
			v := key.Verifier()
			if name == "another key" {
				v = other.Verifier()
			}
			if _, err := audit.OpenReceipt(v, tc.receipt); !errors.Is(err, tc.kind) {
				t.Errorf("OpenReceipt = %v, want %v", err, tc.kind)
			}
		})
	}
	// A receipt is never read as a checkpoint.
	if _, err := key.Verifier().OpenCheckpoint(raw); err == nil {
		t.Error("a receipt opened as a checkpoint")
	}
	if _, err := audit.NewReceiptSigner(key).Sign(audit.Entry{ID: "aud_x"}); err == nil {
		t.Error("signed a receipt for an entry that was not stored")
	}
}

func TestParseReceiptStrict(t *testing.T) {
	good := audit.Receipt{Origin: "o", ID: "aud_1", Sequence: 7, EntryHash: strings.Repeat("ab", 32), Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	text := string(good.Marshal())
	if got, err := audit.ParseReceipt([]byte(text)); err != nil || got != good {
		t.Fatalf("ParseReceipt(Marshal) = %+v, %v", got, err)
	}
	for name, bad := range map[string]string{
		"no final newline": strings.TrimSuffix(text, "\n"),
		"extra line":       text + "x y\n",
		"sequence 07":      strings.Replace(text, "sequence 7", "sequence 07", 1),
		"sequence 0":       strings.Replace(text, "sequence 7", "sequence 0", 1),
		"upper-case hash":  strings.Replace(text, good.EntryHash, strings.ToUpper(good.EntryHash), 1),
		"short hash":       strings.Replace(text, good.EntryHash, "abcd", 1),
		"local time":       strings.Replace(text, "2026-01-02T03:04:05Z", "2026-01-02T04:04:05+01:00", 1),
		"swapped lines":    strings.Replace(strings.Replace(text, "id aud_1\n", "", 1), "sequence 7\n", "sequence 7\nid aud_1\n", 1),
		"other header":     strings.Replace(text, "receipt v1", "receipt v2", 1),
	} {
		if _, err := audit.ParseReceipt([]byte(bad)); !errors.Is(err, tlog.ErrFormat) {
			t.Errorf("%s: ParseReceipt = %v, want ErrFormat", name, err)
		}
	}
}

// TestCheckReceipt: a receipt proves inclusion in the log that holds its
// entry, and proves the omission when the entry, or an entry before it,
// was removed or rewritten, even after the log was re-chained and grew
// past the receipt's sequence again.
func TestCheckReceipt(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	entries := storedEntries(6)
	rcpt := func(e audit.Entry) audit.Receipt {
		enc, err := audit.NewReceiptSigner(key).Sign(e)
		if err != nil {
			t.Fatal(err)
		}
		r, err := audit.OpenReceipt(key.Verifier(), enc)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r4 := rcpt(entries[3])
	if err := audit.CheckReceipt(treeOf(t, entries), r4); err != nil {
		t.Errorf("receipt of a logged entry: %v", err)
	}
	// Removed from the end (the log signs the shorter tree).
	var oe *audit.OmissionError
	if err := audit.CheckReceipt(treeOf(t, entries[:3]), r4); !errors.As(err, &oe) || !errors.Is(err, audit.ErrChainBroken) || oe.Size != 3 {
		t.Errorf("receipt against a truncated log = %v, want an *OmissionError of size 3", err)
	}
	// Entry 2 removed and the rest re-chained: the log is as long again,
	// but entry 4's position holds another hash.
	rechained := storedEntries(7)
	rechained = append(rechained[:1], rechained[2:]...)
	prev := rechained[0].EntryHash
	for i := 1; i < len(rechained); i++ {
		rechained[i].Sequence, rechained[i].PrevHash = int64(i+1), prev
		rechained[i].EntryHash = audit.Hash(prev, rechained[i])
		prev = rechained[i].EntryHash
	}
	if err := audit.CheckReceipt(treeOf(t, rechained), r4); !errors.As(err, &oe) {
		t.Errorf("receipt against a re-chained log = %v, want an *OmissionError", err)
	} else if !strings.Contains(err.Error(), "another hash") {
		t.Errorf("omission message %q", err)
	}
}

// BenchmarkReceiptSign is the cost a receipt adds to an audited answer:
// one Ed25519 signature of the note and its base64 form.
func BenchmarkReceiptSign(b *testing.B) {
	rs := audit.NewReceiptSigner(receiptKey(b, "example.org/log"))
	e := storedEntries(1)[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rs.Sign(e); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseReceipt: a parsed receipt always marshals back to the text it
// was read from (the form is strict), and nothing panics.
func FuzzParseReceipt(f *testing.F) {
	e := storedEntries(2)[1]
	f.Add(audit.ReceiptOf("example.org/log", e).Marshal())
	f.Add([]byte("pgxsafety audit receipt v1\norigin o\nid aud_1\nsequence 1\nentry_hash " + strings.Repeat("0", 64) + "\ntime 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("example.org/log\n3\n" + strings.Repeat("A", 43) + "=\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		r, err := audit.ParseReceipt(text)
		if err != nil {
			return
		}
		if got := r.Marshal(); string(got) != string(text) {
			t.Fatalf("ParseReceipt(%q) marshals back to %q", text, got)
		}
	})
}
