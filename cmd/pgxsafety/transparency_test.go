package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tdlog "github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// backdateCommitted sets the database commit time of the entries up to
// through to at, lifting the UPDATE guard for the statement: it stands for
// entries committed long ago (the purge keeps entries younger than 365
// days by their commit time too).
func backdateCommitted(t *testing.T, store *sqlstore.Store, through int64, at time.Time) {
	t.Helper()
	var db *sql.DB
	var err error
	if store.Backend() == "sqlite" {
		db, err = sql.Open("sqlite", store.Location())
	} else {
		db, err = sql.Open("pgx", os.Getenv("PGXSAFETY_DATABASE_URL"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	update := `UPDATE audit_log SET committed_at = '` + at.UTC().Format("2006-01-02T15:04:05Z") + `' WHERE seq <= ` + strconv.FormatInt(through, 10)
	stmts := []string{`ALTER TABLE audit_log DISABLE TRIGGER USER`, update, `ALTER TABLE audit_log ENABLE TRIGGER USER`}
	if store.Backend() == "sqlite" {
		var ddl string
		if err := tx.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'audit_log_no_update'`).Scan(&ddl); err != nil {
			t.Fatal(err)
		}
		stmts = []string{`DROP TRIGGER audit_log_no_update`, update, ddl}
	}
	for _, stmt := range stmts {
		if _, err := tx.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestTransparencyEndToEnd drives the transparency log as its users do:
// clients get audited answers, fetch the signed checkpoint and inclusion
// and consistency proofs from the API (checked with the transparency-dev
// verifier); an auditor proves one entry offline with the CLI; then the
// database owner cuts the log's tail, and the checkpoint kept from before
// exposes it — in "audit verify", in "audit prove", and in the server's
// witness when it restarts.
func TestTransparencyEndToEnd(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	now := time.Now()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", now)
	var ids []string
	for range 5 {
		rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody)
		if rec.Code != http.StatusOK {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
		var env struct {
			AuditLogID string `json:"audit_log_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.AuditLogID == "" {
			t.Fatalf("check answer without audit_log_id: %s", rec.Body)
		}
		ids = append(ids, env.AuditLogID)
	}
	ctx := context.Background()
	if err := s.checkpoints.publish(ctx); err != nil {
		t.Fatal(err)
	}

	vkeyBytes, err := os.ReadFile(filepath.Join(dataDir, logKeyFileName) + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	vkey := strings.TrimSpace(string(vkeyBytes))
	nv, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dataDir, logKeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v; want 0600", err, fi.Mode())
	}

	// The API: checkpoint, inclusion and consistency proofs.
	if rec := request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint", "", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("checkpoint without a token: %d", rec.Code)
	}
	rec := request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint", tok, "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("checkpoint: %d %s", rec.Code, rec.Header())
	}
	kept := rec.Body.Bytes()
	origin := strings.SplitN(vkey, "+", 2)[0]
	cp, _, _, err := tdlog.ParseCheckpoint(kept, origin, nv)
	if err != nil || cp.Size != 5 {
		t.Fatalf("transparency-dev reads the checkpoint as %+v, %v", cp, err)
	}
	witnessed, err := os.ReadFile(filepath.Join(dataDir, witnessFileName))
	if err != nil || string(witnessed) != string(kept) {
		t.Errorf("witness file holds %q, %v; want the published checkpoint", witnessed, err)
	}
	keptFile := filepath.Join(t.TempDir(), "checkpoint-5.txt")
	if err := os.WriteFile(keptFile, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		rec := request(t, s.handler, http.MethodGet, "/pgx/audit/proof/inclusion?audit_log_id="+id, tok, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("inclusion proof: %d %s", rec.Code, rec.Body)
		}
		var p pgxapi.InclusionProofResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		leaf, err := audit.LeafHash(p.EntryHash)
		if err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.LeafIndex, cp.Size, leaf[:], decodeAll(t, p.Hashes), cp.Hash); err != nil {
			t.Errorf("transparency-dev rejects the inclusion proof of %s: %v", id, err)
		}
	}
	if rec := request(t, s.handler, http.MethodGet, "/pgx/audit/proof/inclusion?audit_log_id=aud_NOPE", tok, ""); rec.Code != http.StatusNotFound {
		t.Errorf("inclusion proof of an unknown id: %d", rec.Code)
	}
	if rec := request(t, s.handler, http.MethodGet, "/pgx/audit/proof/consistency?from=9", tok, ""); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("consistency from a size beyond the log: %d", rec.Code)
	}
	for range 2 {
		request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody)
	}
	if err := s.checkpoints.publish(ctx); err != nil {
		t.Fatal(err)
	}
	rec = request(t, s.handler, http.MethodGet, "/pgx/audit/proof/consistency?from=5", tok, "")
	var cons pgxapi.ConsistencyProofResponse
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &cons) != nil {
		t.Fatalf("consistency proof: %d %s", rec.Code, rec.Body)
	}
	cur, _, _, err := tdlog.ParseCheckpoint([]byte(cons.Checkpoint), origin, nv)
	if err != nil || cur.Size != 7 {
		t.Fatalf("latest checkpoint %+v, %v", cur, err)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, 5, 7, decodeAll(t, cons.Hashes), cp.Hash, cur.Hash); err != nil {
		t.Errorf("transparency-dev rejects the consistency proof 5→7: %v", err)
	}
	s.close()

	// Offline, with the CLI: prove entry 2 against the kept checkpoint
	// and check the proof with nothing but the public key.
	proofFile := filepath.Join(t.TempDir(), "proof.json")
	out, stderr, err := runArgs(t, "audit", "prove", "--data-dir", dataDir, "--id", ids[1], "--checkpoint", keptFile)
	if err != nil {
		t.Fatalf("audit prove: %v %s", err, stderr)
	}
	if err := os.WriteFile(proofFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runArgs(t, "audit", "verify-proof", "--key", vkey, "--proof", proofFile, "--checkpoint", keptFile)
	if err != nil || !strings.HasPrefix(out, "OK: entry "+ids[1]) {
		t.Fatalf("verify-proof: %v\n%s", err, out)
	}
	// An altered entry in the bundle fails.
	altered := strings.Replace(string(mustRead(t, proofFile)), `"endpoint": "POST /pgx/check"`, `"endpoint": "POST /pgx/elsewhere"`, 1)
	if err := os.WriteFile(proofFile, []byte(altered), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runArgs(t, "audit", "verify-proof", "--key", vkey, "--proof", proofFile); err == nil {
		t.Error("verify-proof accepted an altered entry")
	}
	if out, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir, "--checkpoint", keptFile); err != nil {
		t.Fatalf("verify against the kept checkpoint: %v\n%s", err, out)
	}

	// The database owner cuts the last three entries.
	raw, err := sql.Open("sqlite", filepath.Join(dataDir, sqlstore.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE seq >= 5`} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	if out, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir, "--no-witness"); err != nil {
		t.Fatalf("the cut chain still chains (that is the attack): %v\n%s", err, out)
	}
	// Plain "audit verify" checks the log against the configured witness.
	if _, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir); err == nil || !strings.Contains(err.Error(), "FAILED") {
		t.Errorf("audit verify (with the witness) after the cut: %v, want FAILED", err)
	}
	_, _, err = runArgs(t, "audit", "verify", "--data-dir", dataDir, "--checkpoint", keptFile)
	if err == nil || !strings.Contains(err.Error(), "FAILED") || !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("verify against the checkpoint from before the cut: %v, want FAILED", err)
	}
	if _, _, err := runArgs(t, "audit", "prove", "--data-dir", dataDir, "--from-checkpoint", keptFile); err == nil || !strings.Contains(err.Error(), "FAILED") {
		t.Errorf("prove --from-checkpoint after the cut: %v, want FAILED", err)
	}
	// The server's witness holds the checkpoint of 7 entries: a restarted
	// server refuses to sign checkpoints of the shorter log.
	s2 := inProcess(t, dataDir, serverOptions{})
	if err := s2.checkpoints.Err(); !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("restarted server: checkpointer error %v, want the log reported inconsistent with its witness", err)
	}
	if rec := request(t, s2.handler, http.MethodGet, "/pgx/audit/checkpoint", devToken(t, dataDir, "alice", time.Now()), ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("checkpoint of a cut log: %d, want 503", rec.Code)
	}
	// Detected tampering fails /readyz and is named by /pgx/status,
	// without the details.
	rec = request(t, s2.handler, http.MethodGet, "/readyz", "", "")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"audit_integrity":"inconsistent`) {
		t.Errorf("/readyz of a cut log: %d %s, want 503 naming audit_integrity", rec.Code, rec.Body)
	}
	rec = request(t, s2.handler, http.MethodGet, "/pgx/status", "", "")
	var st struct {
		Status   string `json:"status"`
		AuditLog struct {
			Integrity string `json:"integrity"`
		} `json:"audit_log"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Status != "degraded" || !strings.HasPrefix(st.AuditLog.Integrity, "inconsistent") {
		t.Errorf("/pgx/status of a cut log: %s", rec.Body)
	}
	if strings.Contains(rec.Body.String(), dataDir) || strings.Contains(rec.Body.String(), "entries were removed from its end") {
		t.Errorf("/pgx/status leaks the error: %s", rec.Body)
	}
	// A healthy server says so.
	rec = request(t, s.handler, http.MethodGet, "/readyz", "", "")
	if !strings.Contains(rec.Body.String(), `"audit_integrity":"ok"`) {
		t.Errorf("/readyz of the healthy server: %s", rec.Body)
	}
}

func decodeAll(t *testing.T, hs []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(hs))
	for i, h := range hs {
		b, err := base64.StdEncoding.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWitnessSharedByReplicas: replicas sharing one key and one witness
// file sign checkpoints of the same log at their own pace, so a replica
// may hand the witness a checkpoint older than the one a sibling already
// put there. That is no removal: the witness keeps the later checkpoint
// and the replica serves it, instead of declaring the log tampered with
// and signing nothing more. (TestTransparencyEndToEnd shows a log cut
// below the witnessed size is still refused.)
func TestWitnessSharedByReplicas(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	check := func(n int) {
		for range n {
			if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
				t.Fatalf("check: %d %s", rec.Code, rec.Body)
			}
		}
	}
	ctx := context.Background()
	check(3)
	cp3, err := s.checkpoints.log.Checkpoint(ctx, s.checkpoints.signer.Name())
	if err != nil {
		t.Fatal(err)
	}
	stale, err := s.checkpoints.signer.SignCheckpoint(cp3)
	if err != nil {
		t.Fatal(err)
	}
	check(2)
	// The sibling: another checkpointer of the same log, key and witness.
	sibling := newCheckpointer(s.store, s.checkpoints.signer,
		&fileWitness{path: filepath.Join(dataDir, witnessFileName), key: s.checkpoints.signer.Verifier()}, zap.NewNop())
	if err := sibling.publish(ctx); err != nil {
		t.Fatal(err)
	}
	witnessed := mustRead(t, filepath.Join(dataDir, witnessFileName))
	_, err = s.checkpoints.witness.Update(ctx, stale, 0, func(from, to uint64) ([]tlog.Hash, error) {
		return s.checkpoints.log.ConsistencyProof(ctx, from, to)
	})
	if !errors.Is(err, errWitnessAhead) {
		t.Fatalf("a replica's older checkpoint: %v, want errWitnessAhead", err)
	}
	if got := mustRead(t, filepath.Join(dataDir, witnessFileName)); string(got) != string(witnessed) {
		t.Errorf("the witness went back from the sibling's checkpoint:\n%s\nto\n%s", witnessed, got)
	}
	// publish of the first replica adopts the sibling's checkpoint.
	if err := s.checkpoints.publish(ctx); err != nil {
		t.Fatalf("publish after the sibling: %v", err)
	}
	msg, cp, err := s.checkpoints.Latest()
	if err != nil || cp.Size != 5 || string(msg) != string(witnessed) {
		t.Errorf("latest after the sibling: size %d, %v", cp.Size, err)
	}
	// A checkpoint of another log (another key's origin cannot open; a
	// forged root of the same size) is still refused as tampering.
	forged := cp3
	forged.Root[0] ^= 1
	bad, err := s.checkpoints.signer.SignCheckpoint(forged)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.checkpoints.witness.Update(ctx, bad, 0, func(from, to uint64) ([]tlog.Hash, error) {
		return s.checkpoints.log.ConsistencyProof(ctx, from, to)
	})
	if !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("a checkpoint whose tree is not a prefix of the witnessed one: %v, want ErrChainBroken", err)
	}
}
