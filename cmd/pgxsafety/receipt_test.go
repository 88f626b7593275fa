package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/pgxapi/httpx"
)

// answerReceipt reads the receipt of a /pgx answer: the header and the
// envelope's audit_receipt must agree, and name the answer's audit id.
func answerReceipt(t *testing.T, key *tlog.Verifier, header http.Header, body []byte) (string, audit.Receipt) {
	t.Helper()
	var env struct {
		AuditLogID   string `json:"audit_log_id"`
		AuditReceipt string `json:"audit_receipt"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("answer: %v", err)
	}
	if h := header.Get(httpx.ReceiptHeader); h == "" || h != env.AuditReceipt {
		t.Fatalf("receipt header %q, envelope %q: want the same receipt in both", h, env.AuditReceipt)
	}
	r, err := audit.OpenReceipt(key, env.AuditReceipt)
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if r.ID != env.AuditLogID {
		t.Fatalf("receipt of %s on the answer of %s", r.ID, env.AuditLogID)
	}
	return env.AuditReceipt, r
}

func dataDirKey(t *testing.T, dataDir string) *tlog.Verifier {
	t.Helper()
	k, err := loadVerifierKey(filepath.Join(dataDir, logKeyFileName) + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestReceiptsInProcess: answers carry their receipt in the header and
// the envelope; a checkpoint covering a receipt is signed on demand; the
// CLI proves inclusion, and after the entry is deleted, its omission.
func TestReceiptsInProcess(t *testing.T) {
	clearEnv(t)
	t.Setenv("PGXSAFETY_CDS_DEV_UNAUTHENTICATED", "true")
	dataDir := t.TempDir()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	key := dataDirKey(t, dataDir)
	// A CDS hook answer carries its receipt as a header (the CDS Hooks
	// response has no field for it).
	hook, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cds", "requests", "order-select-clopidogrel-cyp2c19-pm.json"))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/cds-services/pgx-order-select", strings.NewReader(string(hook)))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:40000" // the development switch serves loopback clients only
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("hook: %d %s", rec.Code, rec.Body)
	}
	if r, err := audit.OpenReceipt(key, rec.Header().Get(httpx.ReceiptHeader)); err != nil || r.ID != rec.Header().Get("X-Audit-Log-ID") {
		t.Errorf("hook receipt %+v, %v; want the receipt of %s", r, err, rec.Header().Get("X-Audit-Log-ID"))
	}
	var encoded []string
	var receipts []audit.Receipt
	for range 3 {
		rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody)
		if rec.Code != http.StatusOK {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
		enc, r := answerReceipt(t, key, rec.Header(), rec.Body.Bytes())
		encoded, receipts = append(encoded, enc), append(receipts, r)
	}
	batch := request(t, s.handler, http.MethodPost, "/pgx/batch", tok, `{"drugs":["clopidogrel","warfarin"]}`)
	if batch.Code != http.StatusOK {
		t.Fatalf("batch: %d %s", batch.Code, batch.Body)
	}
	answerReceipt(t, key, batch.Header(), batch.Body.Bytes())

	// No checkpoint covers them yet (the last was signed at start): one
	// is signed on demand.
	last := receipts[2].Sequence
	rec = request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint?covering="+itoa(last), tok, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("checkpoint covering %d: %d %s", last, rec.Code, rec.Body)
	}
	cp, err := key.OpenCheckpoint(rec.Body.Bytes())
	if err != nil || cp.Size < uint64(last) {
		t.Fatalf("checkpoint covering %d: %+v, %v", last, cp, err)
	}
	if rec := request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint?covering=999", tok, ""); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("checkpoint covering an entry not logged: %d, want 422", rec.Code)
	}
	if rec := request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint?covering=x", tok, ""); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("covering=x: %d, want 422", rec.Code)
	}
	s.close()

	// The three checks' batch receipts (v2), as the server issues when
	// their entries commit together, signed here with the log key.
	signer, err := loadLogKey(filepath.Join(dataDir, logKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	var entries []audit.Entry
	for _, r := range receipts {
		entries = append(entries, audit.Entry{ID: r.ID, Sequence: r.Sequence, EntryHash: r.EntryHash, Time: r.Time})
	}
	batchReceipts, err := audit.NewReceiptSigner(signer).SignBatch(entries)
	if err != nil {
		t.Fatalf("the three checks' entries as one batch: %v", err)
	}
	for i, enc := range append(encoded, batchReceipts...) {
		out, _, err := runArgs(t, "audit", "verify-receipt", "--data-dir", dataDir, enc)
		if err != nil || !strings.HasPrefix(out, "OK: entry "+receipts[i%3].ID) {
			t.Fatalf("verify-receipt of a logged entry: %v\n%s", err, out)
		}
	}
	receiptFile := filepath.Join(t.TempDir(), "receipt.txt")
	if err := os.WriteFile(receiptFile, []byte(encoded[2]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runArgs(t, "audit", "verify-receipt", receiptFile, "--data-dir", dataDir); err != nil {
		t.Errorf("verify-receipt FILE: %v", err)
	}
	if _, _, err := runArgs(t, "audit", "verify-receipt", "--data-dir", dataDir, "bm90IGEgcmVjZWlwdA=="); err == nil {
		t.Error("verify-receipt accepted a string that is not a receipt")
	}

	// The database owner deletes the second answer and re-chains the
	// rest; the witness file is rolled back to the checkpoint before it.
	raw, err := sql.Open("sqlite", filepath.Join(dataDir, sqlstore.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE seq >= ` + itoa(receipts[1].Sequence)} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	if err := os.Remove(filepath.Join(dataDir, witnessFileName)); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{encoded[1], batchReceipts[1], batchReceipts[2]} {
		_, _, err = runArgs(t, "audit", "verify-receipt", "--data-dir", dataDir, enc)
		var oe *audit.OmissionError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), "FAILED: omission proved") {
			t.Errorf("verify-receipt of a deleted entry: %v, want FAILED with the omission", err)
		}
	}
	for _, enc := range []string{encoded[0], batchReceipts[0]} {
		if out, _, err := runArgs(t, "audit", "verify-receipt", "--data-dir", dataDir, enc); err != nil {
			t.Errorf("verify-receipt of the entry before: %v\n%s", err, out)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// bySequence sorts receipts, opened and encoded alike, by sequence.
type bySequence struct {
	rs  []audit.Receipt
	enc []string
}

func (b bySequence) Len() int           { return len(b.rs) }
func (b bySequence) Less(i, j int) bool { return b.rs[i].Sequence < b.rs[j].Sequence }
func (b bySequence) Swap(i, j int) {
	b.rs[i], b.rs[j] = b.rs[j], b.rs[i]
	b.enc[i], b.enc[j] = b.enc[j], b.enc[i]
}

// postReceipt posts one check and returns its receipt (empty when the
// answer was not a 200).
func postReceipt(ctx context.Context, base, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/pgx/check", strings.NewReader(checkBody))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	return resp.Header.Get(httpx.ReceiptHeader), nil
}

// TestReceiptProvesOmissionAfterRestart is the 10-second window of issue
// 25 with a real "serve" on SQLite and PostgreSQL: answers are
// acknowledged, the process stops (SIGKILL before any checkpoint covers
// them, or SIGTERM after which the attacker rolls the witness back too),
// the database owner deletes acknowledged entries, and the restarted
// server signs checkpoints of the shorter log, which its witness accepts.
// Only the receipts tell: each deleted entry's receipt proves its
// omission, the others still prove inclusion.
func TestReceiptProvesOmissionAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t)
	type backend struct {
		env    func(t *testing.T) (serve []string, owner string)
		delete func(t *testing.T, owner, dataDir string, from int64)
	}
	backends := map[string]backend{
		"sqlite": {
			env: func(t *testing.T) ([]string, string) { return nil, "" },
			delete: func(t *testing.T, _, dataDir string, from int64) {
				db, err := sql.Open("sqlite", filepath.Join(dataDir, sqlstore.DBFileName))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				for _, stmt := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE seq >= ` + itoa(from)} {
					if _, err := db.Exec(stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
			},
		},
		"postgres": {
			env: func(t *testing.T) ([]string, string) {
				owner := pgSchemaURL(t)
				migrate := exec.Command(bin, "migrate")
				migrate.Env = childEnv("PGXSAFETY_DATABASE_URL=" + owner)
				if out, err := migrate.CombinedOutput(); err != nil {
					t.Fatalf("migrate as the owner: %v\n%s", err, out)
				}
				return []string{"PGXSAFETY_DATABASE_URL=" + pgGrantService(t, owner), "PGXSAFETY_DATABASE_MIGRATE=false"}, owner
			},
			delete: func(t *testing.T, owner, _ string, from int64) {
				db, err := sql.Open("pgx", owner)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				for _, stmt := range []string{`ALTER TABLE audit_log DISABLE TRIGGER USER`, `DELETE FROM audit_log WHERE seq >= ` + itoa(from)} {
					if _, err := db.Exec(stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
			},
		},
	}
	for name, b := range backends {
		for _, stop := range []string{"SIGKILL", "SIGTERM and witness rollback"} {
			t.Run(name+"/"+stop, func(t *testing.T) {
				serveEnv, owner := b.env(t)
				witness := filepath.Join(t.TempDir(), "witness")
				env := childEnv(append(serveEnv, "PGXSAFETY_RATE_LIMIT_PER_MINUTE=100000",
					"PGXSAFETY_AUDIT_CHECKPOINT_INTERVAL=1h", "PGXSAFETY_AUDIT_WITNESS_FILE="+witness)...)
				dataDir := t.TempDir()
				tokCmd := exec.Command(bin, "token", "--data-dir", dataDir, "--subject", "receipt-test")
				tokCmd.Env = env
				out, err := tokCmd.Output()
				if err != nil {
					t.Fatalf("token: %v", err)
				}
				token := strings.TrimSpace(string(out))
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()

				p := startBinary(t, bin, dataDir, env)
				var receipts []string
				post := func(n int) {
					for range n {
						r, err := postReceipt(ctx, p.base, token)
						if err != nil || r == "" {
							t.Fatalf("check: %q %v\n%s", r, err, p.logs)
						}
						receipts = append(receipts, r)
					}
				}
				post(3)
				var rolledBack []byte
				if stop != "SIGKILL" {
					// The witness gets a checkpoint of the first three
					// entries; the attacker keeps a copy of it.
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/pgx/audit/checkpoint?covering=3", nil)
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					if err != nil || resp.StatusCode != http.StatusOK {
						t.Fatalf("checkpoint covering: %v %v", resp, err)
					}
					resp.Body.Close()
					if rolledBack, err = os.ReadFile(witness); err != nil {
						t.Fatal(err)
					}
				}
				// The next three at once: their entries may commit
				// together and carry batch receipts (v2).
				var wg sync.WaitGroup
				var mu sync.Mutex
				for range 3 {
					wg.Go(func() {
						r, err := postReceipt(ctx, p.base, token)
						if err != nil || r == "" {
							t.Errorf("check: %q %v", r, err)
						}
						mu.Lock()
						receipts = append(receipts, r)
						mu.Unlock()
					})
				}
				wg.Wait()
				if t.Failed() {
					t.Fatalf("logs:\n%s", p.logs)
				}
				key := dataDirKey(t, dataDir)
				rs := make([]audit.Receipt, len(receipts))
				for i, enc := range receipts {
					if rs[i], err = audit.OpenReceipt(key, enc); err != nil {
						t.Fatal(err)
					}
				}
				sort.Sort(bySequence{rs, receipts})
				batched := 0
				for _, enc := range receipts {
					if raw, _ := base64.StdEncoding.DecodeString(enc); strings.HasPrefix(string(raw), "pgxsafety audit receipt v2\n") {
						batched++
					}
				}
				t.Logf("%d of the 6 receipts are batch receipts", batched)
				if stop == "SIGKILL" {
					if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					<-p.exited
				} else {
					// The shutdown checkpoint (six entries) reaches the
					// witness.
					if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
						t.Fatal(err)
					}
					if err := <-p.exited; err != nil {
						t.Fatalf("graceful stop: %v", err)
					}
					if w, _ := key.OpenCheckpoint(mustRead(t, witness)); w.Size != 6 {
						t.Fatalf("witness after shutdown holds %d entries, want 6", w.Size)
					}
				}
				// The last three acknowledged entries are deleted.
				b.delete(t, owner, dataDir, rs[3].Sequence)
				if rolledBack != nil {
					if err := os.WriteFile(witness, rolledBack, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				// The restarted server signs the shorter log and its
				// witness accepts it; it grows past the deleted entries.
				p2 := startBinary(t, bin, dataDir, env)
				for range 4 {
					if _, err := postReceipt(ctx, p2.base, token); err != nil {
						t.Fatalf("check after restart: %v\n%s", err, p2.logs)
					}
				}
				if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				if err := <-p2.exited; err != nil {
					t.Fatalf("graceful stop: %v\n%s", err, p2.logs)
				}
				run := func(args ...string) (string, error) {
					cmd := exec.Command(bin, args...)
					cmd.Env = env
					out, err := cmd.CombinedOutput()
					return string(out), err
				}
				if out, err := run("audit", "verify", "--data-dir", dataDir); err != nil {
					t.Fatalf("audit verify with the witness passes after the attack (that is the window): %v\n%s\n%s", err, out, p2.logs)
				}
				for i, enc := range receipts {
					out, err := run("audit", "verify-receipt", "--data-dir", dataDir, enc)
					if i < 3 {
						if err != nil || !strings.HasPrefix(out, "OK: entry "+rs[i].ID) {
							t.Errorf("receipt %d (kept): %v\n%s", i, err, out)
						}
						continue
					}
					if err == nil || !strings.Contains(out, "FAILED: omission proved") || !strings.Contains(out, rs[i].ID) {
						t.Errorf("receipt %d (deleted): %v\n%s", i, err, out)
					}
				}
			})
		}
	}
}
