package audit_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// receiptFields is what a receipt of e says.
func receiptFields(origin string, e audit.Entry) audit.Receipt {
	return audit.Receipt{Origin: origin, ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time.UTC()}
}

// decode is the text of an encoded receipt.
func decode(t testing.TB, enc string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestBatchReceiptRoundTrip: every receipt of a batch, of any size and
// starting anywhere in the log, opens to its entry's fields under one
// signed note, fits a header, and proves inclusion in the log.
func TestBatchReceiptRoundTrip(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	log := storedEntries(20)
	for _, tc := range []struct{ from, n int }{{0, 1}, {0, 2}, {3, 3}, {4, 4}, {1, 5}, {7, 7}, {2, 8}, {0, 9}, {3, 16}, {0, 20}} {
		t.Run(fmt.Sprintf("%d from %d", tc.n, tc.from+1), func(t *testing.T) {
			batch := log[tc.from : tc.from+tc.n]
			encs, err := audit.NewReceiptSigner(key).SignBatch(batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(encs) != len(batch) {
				t.Fatalf("%d receipts for %d entries", len(encs), len(batch))
			}
			var note string
			for i, enc := range encs {
				if strings.ContainsAny(enc, "\n\r ") {
					t.Fatalf("encoded receipt %q does not fit a header", enc)
				}
				got, err := audit.OpenReceipt(key.Verifier(), enc)
				if err != nil {
					t.Fatalf("receipt %d: %v\n%s", i, err, decode(t, enc))
				}
				if d := cmp.Diff(receiptFields("example.org/log", batch[i]), got); d != "" {
					t.Errorf("receipt %d (-want +got):\n%s", i, d)
				}
				// The text form is accepted too.
				if got, err := audit.OpenReceipt(key.Verifier(), decode(t, enc)); err != nil || got.ID != batch[i].ID {
					t.Errorf("OpenReceipt(text) = %+v, %v", got, err)
				}
				if err := audit.CheckReceipt(treeOf(t, log), got); err != nil {
					t.Errorf("receipt %d against the log: %v", i, err)
				}
				text := decode(t, enc)
				n := text[strings.Index(text, "\n\n")+2:]
				if i > 0 && n != note {
					t.Errorf("receipt %d carries another note:\n%s\nthan receipt 0:\n%s", i, n, note)
				}
				note = n
			}
			wantNote := fmt.Sprintf("pgxsafety audit batch receipt v1\norigin example.org/log\nfirst %d\nlast %d\nroot ", tc.from+1, tc.from+tc.n)
			if !strings.HasPrefix(note, wantNote) {
				t.Errorf("batch note:\n%s", note)
			}
		})
	}
}

// TestBatchReceiptFormat pins the text of a batch receipt.
func TestBatchReceiptFormat(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	batch := storedEntries(3)
	encs, err := audit.NewReceiptSigner(key).SignBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	text := decode(t, encs[2])
	want := "pgxsafety audit receipt v2\nid " + batch[2].ID + "\nsequence 3\nentry_hash " + batch[2].EntryHash +
		"\ntime 2026-11-28T10:00:02.0000005Z\npath "
	if !strings.HasPrefix(text, want) || strings.Count(text, "\npath ") != 1 ||
		!strings.Contains(text, "\n\npgxsafety audit batch receipt v1\norigin example.org/log\nfirst 1\nlast 3\nroot ") ||
		!strings.Contains(text, "\n\n— example.org/log ") {
		t.Errorf("receipt text:\n%s", text)
	}
	// The leaf is the SHA-256 of 0x00 and the entry's four lines; the
	// third leaf of three pairs with the root of the first two.
	leaf := func(e audit.Entry) tlog.Hash {
		return tlog.HashLeaf([]byte("id " + e.ID + fmt.Sprintf("\nsequence %d\nentry_hash ", e.Sequence) + e.EntryHash +
			"\ntime " + e.Time.UTC().Format(audit.TimeFormat) + "\n"))
	}
	l0, l1, l2 := leaf(batch[0]), leaf(batch[1]), leaf(batch[2])
	n01 := tlog.HashChildren(l0, l1)
	root := tlog.HashChildren(n01, l2)
	if !strings.Contains(text, "\npath "+base64.StdEncoding.EncodeToString(n01[:])+"\n\n") ||
		!strings.Contains(text, "\nroot "+base64.StdEncoding.EncodeToString(root[:])+"\n") {
		t.Errorf("path or root is not RFC 6962 over the entries' leaves:\n%s", text)
	}
}

// TestBatchReceiptTampered: changing any field of the entry, its path or
// the signed note, or moving an entry's proof under another batch's note,
// is refused.
func TestBatchReceiptTampered(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	log := storedEntries(12)
	rs := audit.NewReceiptSigner(key)
	encs, err := rs.SignBatch(log[2:7]) // sequences 3..7
	if err != nil {
		t.Fatal(err)
	}
	other, err := rs.SignBatch(log[7:12]) // sequences 8..12
	if err != nil {
		t.Fatal(err)
	}
	text := decode(t, encs[2]) // sequence 5
	cut := strings.Index(text, "\n\n")
	proof, note := text[:cut+1], text[cut+2:]
	otherText := decode(t, other[2])
	otherProof, otherNote := otherText[:strings.Index(otherText, "\n\n")+1], otherText[strings.Index(otherText, "\n\n")+2:]
	lines := strings.Split(strings.TrimSuffix(proof, "\n"), "\n")
	path := lines[5:]
	if len(path) != 3 {
		t.Fatalf("a leaf of a batch of five has a path of %d hashes, want 3", len(path))
	}
	setLine := func(s string, i int, v string) string {
		ls := strings.Split(s, "\n")
		ls[i] = v
		return strings.Join(ls, "\n")
	}
	e := log[4]
	flip := func(s string) string { // another valid value of the same form
		b := []byte(s)
		if b[len(b)-2] == 'A' {
			b[len(b)-2] = 'B'
		} else {
			b[len(b)-2] = 'A'
		}
		return string(b)
	}
	for name, tc := range map[string]struct {
		text string
		kind error
	}{
		"id":                      {setLine(proof, 1, "id "+log[5].ID) + "\n" + note, tlog.ErrSignature},
		"sequence in the batch":   {setLine(proof, 2, "sequence 6") + "\n" + note, tlog.ErrSignature},
		"sequence outside":        {setLine(proof, 2, "sequence 8") + "\n" + note, tlog.ErrSignature},
		"sequence before":         {setLine(proof, 2, "sequence 2") + "\n" + note, tlog.ErrSignature},
		"entry_hash":              {setLine(proof, 3, "entry_hash "+log[5].EntryHash) + "\n" + note, tlog.ErrSignature},
		"time":                    {strings.Replace(proof, "10:00:04.0000005Z", "10:00:04.0000006Z", 1) + "\n" + note, tlog.ErrSignature},
		"a path hash":             {setLine(proof, 6, "path "+flip(strings.TrimPrefix(path[1], "path "))) + "\n" + note, tlog.ErrSignature},
		"path dropped":            {strings.Join(lines[:7], "\n") + "\n\n" + note, tlog.ErrSignature},
		"path extended":           {proof + path[0] + "\n\n" + note, tlog.ErrSignature},
		"path reversed":           {strings.Join(append(lines[:5:5], path[2], path[1], path[0]), "\n") + "\n\n" + note, tlog.ErrSignature},
		"no path":                 {strings.Join(lines[:5], "\n") + "\n\n" + note, tlog.ErrSignature},
		"note: first":             {proof + "\n" + strings.Replace(note, "first 3", "first 4", 1), tlog.ErrSignature},
		"note: last":              {proof + "\n" + strings.Replace(note, "last 7", "last 8", 1), tlog.ErrSignature},
		"note: root":              {proof + "\n" + setLine(note, 4, "root "+flip(strings.TrimPrefix(strings.Split(note, "\n")[4], "root "))), tlog.ErrSignature},
		"note: origin":            {proof + "\n" + strings.Replace(note, "origin example.org/log", "origin example.org/lg", 1), tlog.ErrSignature},
		"another batch's note":    {proof + "\n" + otherNote, tlog.ErrSignature},
		"under another batch":     {otherProof + "\n" + note, tlog.ErrSignature},
		"no note":                 {proof, tlog.ErrFormat},
		"unsigned note":           {proof + "\n" + note[:strings.Index(note, "\n\n")+2], tlog.ErrFormat},
		"v1 header":               {strings.Replace(text, "receipt v2", "receipt v1", 1), tlog.ErrSignature},
		"note is a v1 receipt":    {proof + "\n" + decodeV1(t, rs, e), tlog.ErrFormat},
		"blank line in the proof": {strings.Replace(text, "\npath ", "\n\npath ", 1), tlog.ErrSignature},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.text == text {
				t.Fatal("the case changes nothing")
			}
			r, err := audit.OpenReceipt(key.Verifier(), base64.StdEncoding.EncodeToString([]byte(tc.text)))
			if !errors.Is(err, tc.kind) {
				t.Errorf("OpenReceipt = %+v, %v; want %v", r, err, tc.kind)
			}
		})
	}
	if _, err := audit.OpenReceipt(receiptKey(t, "example.org/log").Verifier(), encs[2]); !errors.Is(err, tlog.ErrSignature) {
		t.Errorf("a batch receipt opened with another key: %v", err)
	}
	if _, err := audit.OpenReceipt(receiptKey(t, "example.org/other").Verifier(), encs[2]); err == nil {
		t.Error("a batch receipt opened as a receipt of another log")
	}
	// A batch note is never read as a checkpoint, nor as a v1 receipt.
	if _, err := key.Verifier().OpenCheckpoint([]byte(note)); err == nil {
		t.Error("a batch note opened as a checkpoint")
	}
	if _, err := audit.OpenReceipt(key.Verifier(), base64.StdEncoding.EncodeToString([]byte(note))); err == nil {
		t.Error("a batch note opened as a receipt")
	}
}

func decodeV1(t *testing.T, rs *audit.ReceiptSigner, e audit.Entry) string {
	t.Helper()
	enc, err := rs.Sign(e)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, enc)
}

// TestForgedBatchPath: a receipt for an entry the batch does not hold
// cannot be made from the batch's receipts: not by claiming the next
// sequence with the last entry's path, nor by presenting an interior
// node's children as an entry.
func TestForgedBatchPath(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	log := storedEntries(5)
	encs, err := audit.NewReceiptSigner(key).SignBatch(log[:4])
	if err != nil {
		t.Fatal(err)
	}
	text := decode(t, encs[3])
	cut := strings.Index(text, "\n\n")
	proof, note := text[:cut+1], text[cut+2:]
	p, err := audit.ParseEntryProof([]byte(proof))
	if err != nil {
		t.Fatal(err)
	}
	e := log[4]
	forged := audit.EntryProof{ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time, Path: p.Path}
	for name, fp := range map[string]audit.EntryProof{
		"next entry, last entry's path":   forged,
		"next entry, no path":             {ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time},
		"next entry, path one longer":     {ID: e.ID, Sequence: e.Sequence, EntryHash: e.EntryHash, Time: e.Time, Path: append(p.Path, p.Path[0])},
		"entry 4 with entry 5's hash":     {ID: p.ID, Sequence: p.Sequence, EntryHash: e.EntryHash, Time: p.Time, Path: p.Path},
		"entry 4 at sequence 5, its path": {ID: p.ID, Sequence: 5, EntryHash: p.EntryHash, Time: p.Time, Path: p.Path},
	} {
		msg := append(append(fp.Marshal(), '\n'), note...)
		if r, err := audit.OpenReceipt(key.Verifier(), string(msg)); err == nil {
			t.Errorf("%s: a forged receipt opened: %+v", name, r)
		}
	}
}

func TestParseReceiptBatchStrict(t *testing.T) {
	good := audit.ReceiptBatch{Origin: "o", First: 7, Last: 9, Root: tlog.HashLeaf([]byte("x"))}
	text := string(good.Marshal())
	if got, err := audit.ParseReceiptBatch([]byte(text)); err != nil || got != good {
		t.Fatalf("ParseReceiptBatch(Marshal) = %+v, %v", got, err)
	}
	root := base64.StdEncoding.EncodeToString(good.Root[:])
	for name, bad := range map[string]string{
		"no final newline":  strings.TrimSuffix(text, "\n"),
		"extra line":        text + "x y\n",
		"first 07":          strings.Replace(text, "first 7", "first 07", 1),
		"first 0":           strings.Replace(text, "first 7", "first 0", 1),
		"last before first": strings.Replace(text, "last 9", "last 6", 1),
		"short root":        strings.Replace(text, root, root[:20], 1),
		"root unpadded":     strings.Replace(text, root, strings.TrimSuffix(root, "="), 1),
		"root in hex":       strings.Replace(text, root, strings.Repeat("ab", 32), 1),
		"swapped lines":     strings.Replace(strings.Replace(text, "first 7\n", "", 1), "last 9\n", "last 9\nfirst 7\n", 1),
		"other header":      strings.Replace(text, "batch receipt v1", "batch receipt v2", 1),
		"empty origin":      strings.Replace(text, "origin o", "origin ", 1),
	} {
		if _, err := audit.ParseReceiptBatch([]byte(bad)); !errors.Is(err, tlog.ErrFormat) {
			t.Errorf("%s: ParseReceiptBatch = %v, want ErrFormat", name, err)
		}
	}
}

func TestParseEntryProofStrict(t *testing.T) {
	h := tlog.HashLeaf([]byte("x"))
	good := audit.EntryProof{ID: "aud_1", Sequence: 7, EntryHash: strings.Repeat("ab", 32), Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Path: []tlog.Hash{h, h}}
	text := string(good.Marshal())
	got, err := audit.ParseEntryProof([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(good, got); d != "" {
		t.Fatalf("ParseEntryProof(Marshal) (-want +got):\n%s", d)
	}
	b64 := base64.StdEncoding.EncodeToString(h[:])
	for name, bad := range map[string]string{
		"no final newline": strings.TrimSuffix(text, "\n"),
		"extra line":       text + "x y\n",
		"sequence 07":      strings.Replace(text, "sequence 7", "sequence 07", 1),
		"sequence 0":       strings.Replace(text, "sequence 7", "sequence 0", 1),
		"upper-case hash":  strings.Replace(text, good.EntryHash, strings.ToUpper(good.EntryHash), 1),
		"local time":       strings.Replace(text, "2026-01-02T03:04:05Z", "2026-01-02T04:04:05+01:00", 1),
		"short path hash":  strings.Replace(text, b64, b64[:20], 1),
		"path with a CR":   strings.Replace(text, b64, b64[:20]+"\r"+b64[20:], 1),
		"path in hex":      strings.Replace(text, b64, strings.Repeat("ab", 32), 1),
		"swapped lines":    strings.Replace(strings.Replace(text, "id aud_1\n", "", 1), "sequence 7\n", "sequence 7\nid aud_1\n", 1),
		"v1 header":        strings.Replace(text, "receipt v2", "receipt v1", 1),
		"65 path hashes":   text + strings.Repeat("path "+b64+"\n", 63),
	} {
		if _, err := audit.ParseEntryProof([]byte(bad)); !errors.Is(err, tlog.ErrFormat) {
			t.Errorf("%s: ParseEntryProof = %v, want ErrFormat", name, err)
		}
	}
}

func TestSignBatchRefused(t *testing.T) {
	rs := audit.NewReceiptSigner(receiptKey(t, "example.org/log"))
	log := storedEntries(4)
	for name, batch := range map[string][]audit.Entry{
		"empty":           nil,
		"a gap":           {log[0], log[2]},
		"out of order":    {log[1], log[0]},
		"an entry twice":  {log[1], log[1]},
		"not stored":      {log[0], {ID: "aud_x", Sequence: 2}},
		"no id (stored?)": {log[0], {Sequence: 2, EntryHash: log[1].EntryHash}},
	} {
		if _, err := rs.SignBatch(batch); err == nil {
			t.Errorf("%s: SignBatch signed", name)
		}
	}
}

// TestSignCommitted: the callers of one commit group get batch receipts
// under one signed note; without a group, or for an entry the group does
// not hold, or when another signer signed the group, a v1 receipt.
func TestSignCommitted(t *testing.T) {
	key := receiptKey(t, "example.org/log")
	keyOf := key
	rs := audit.NewReceiptSigner(key)
	log := storedEntries(6)
	if audit.NewCommitGroup(log[:1]) != nil || audit.NewCommitGroup([]audit.Entry{log[0], log[2]}) != nil {
		t.Error("a group of one entry, or of entries with a gap")
	}
	g := audit.NewCommitGroup(log[1:6])
	encs := make([]string, 5)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			var slot audit.GroupSlot
			slot.Set(g, i)
			enc, err := rs.SignCommitted(log[1+i], &slot)
			if err != nil {
				t.Error(err)
			}
			encs[i] = enc
		})
	}
	wg.Wait()
	var note string
	for i, enc := range encs {
		text := decode(t, enc)
		if !strings.HasPrefix(text, "pgxsafety audit receipt v2\n") {
			t.Fatalf("receipt %d of a group is not a batch receipt:\n%s", i, text)
		}
		n := text[strings.Index(text, "\n\n")+2:]
		if i > 0 && n != note {
			t.Errorf("receipts of one group under two notes:\n%s\n%s", note, n)
		}
		note = n
		got, err := audit.OpenReceipt(key.Verifier(), enc)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(receiptFields("example.org/log", log[1+i]), got); d != "" {
			t.Errorf("receipt %d (-want +got):\n%s", i, d)
		}
	}
	v1 := func(name string, e audit.Entry, slot *audit.GroupSlot, key *tlog.Signer) {
		t.Helper()
		by := rs
		if key != nil {
			by = audit.NewReceiptSigner(key)
		} else {
			key = keyOf
		}
		enc, err := by.SignCommitted(e, slot)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(decode(t, enc), "pgxsafety audit receipt v1\n") {
			t.Errorf("%s: not a v1 receipt:\n%s", name, decode(t, enc))
		}
		if got, err := audit.OpenReceipt(key.Verifier(), enc); err != nil || got != receiptFields(got.Origin, e) {
			t.Errorf("%s: receipt %+v, %v", name, got, err)
		}
	}
	v1("no slot", log[0], nil, nil)
	v1("an empty slot", log[0], new(audit.GroupSlot), nil)
	at := func(i int) *audit.GroupSlot {
		var s audit.GroupSlot
		s.Set(g, i)
		return &s
	}
	v1("another entry than the group's", log[0], at(0), nil)
	v1("an index outside the group", log[1], at(7), nil)
	changed := log[2]
	changed.Time = changed.Time.Add(time.Nanosecond)
	v1("a changed entry", changed, at(1), nil)
	v1("another signer", log[2], at(1), receiptKey(t, "example.org/log"))
}

// BenchmarkReceiptSignBatch is the cost of the receipts of one commit
// group, per entry (ns/entry): one signature shared by the group, the
// tree and each entry's path and base64 form.
func BenchmarkReceiptSignBatch(b *testing.B) {
	rs := audit.NewReceiptSigner(receiptKey(b, "example.org/log"))
	log := storedEntries(16)
	for _, n := range []int{2, 4, 8, 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rs.SignBatch(log[:n]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}

// FuzzParseReceiptBatch: a parsed batch note always marshals back to the
// text it was read from, and nothing panics.
func FuzzParseReceiptBatch(f *testing.F) {
	f.Add(audit.ReceiptBatch{Origin: "example.org/log", First: 3, Last: 9, Root: tlog.HashLeaf(nil)}.Marshal())
	f.Add([]byte("pgxsafety audit batch receipt v1\norigin o\nfirst 1\nlast 1\nroot " + strings.Repeat("A", 43) + "=\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		b, err := audit.ParseReceiptBatch(text)
		if err != nil {
			return
		}
		if got := b.Marshal(); !bytes.Equal(got, text) {
			t.Fatalf("ParseReceiptBatch(%q) marshals back to %q", text, got)
		}
	})
}

// FuzzParseEntryProof: a parsed entry proof always marshals back to the
// text it was read from, and nothing panics.
func FuzzParseEntryProof(f *testing.F) {
	e := storedEntries(2)[1]
	h := tlog.HashLeaf(nil)
	f.Add(audit.EntryProof{ID: e.ID, Sequence: 2, EntryHash: e.EntryHash, Time: e.Time}.Marshal())
	f.Add(audit.EntryProof{ID: e.ID, Sequence: 2, EntryHash: e.EntryHash, Time: e.Time, Path: []tlog.Hash{h, h}}.Marshal())
	f.Fuzz(func(t *testing.T, text []byte) {
		p, err := audit.ParseEntryProof(text)
		if err != nil {
			return
		}
		if got := p.Marshal(); !bytes.Equal(got, text) {
			t.Fatalf("ParseEntryProof(%q) marshals back to %q", text, got)
		}
	})
}

// FuzzOpenReceipt: whatever OpenReceipt accepts says what the log signed
// for one of its entries (a receipt cannot be altered into another that
// opens), and nothing panics.
func FuzzOpenReceipt(f *testing.F) {
	s := receiptKey(f, "example.org/log")
	rs := audit.NewReceiptSigner(s)
	log := storedEntries(5)
	signed := map[audit.Receipt]bool{}
	for _, e := range log {
		signed[receiptFields("example.org/log", e)] = true
	}
	encs, err := rs.SignBatch(log)
	if err != nil {
		f.Fatal(err)
	}
	v1, err := rs.Sign(log[1])
	if err != nil {
		f.Fatal(err)
	}
	for _, enc := range append(encs, v1) {
		raw, _ := base64.StdEncoding.DecodeString(enc)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, in := range []string{string(msg), base64.StdEncoding.EncodeToString(msg)} {
			r, err := audit.OpenReceipt(s.Verifier(), in)
			if err == nil && !signed[r] {
				t.Fatalf("OpenReceipt(%q) = %+v, which the log never signed", msg, r)
			}
		}
	})
}
