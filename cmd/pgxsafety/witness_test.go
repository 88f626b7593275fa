package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// newTestWitness runs "witness init" for the log of logKey and returns the
// key and state files and the witness's cosignature verifier key.
func newTestWitness(t *testing.T, logVKey string) (keyFile, stateFile, vkey string) {
	t.Helper()
	dir := t.TempDir()
	keyFile, stateFile = filepath.Join(dir, "witness.key"), filepath.Join(dir, "witness.state")
	out, _, err := runArgs(t, "witness", "init", "--name", "witness.test/w1", "--log", logVKey, "--key", keyFile, "--state", stateFile)
	if err != nil {
		t.Fatalf("witness init: %v", err)
	}
	return keyFile, stateFile, strings.TrimSpace(out)
}

func addCheckpoint(t *testing.T, h http.Handler, old uint64, proof []tlog.Hash, msg []byte) *httptest.ResponseRecorder {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("old " + itoa(int64(old)) + "\n")
	for _, p := range proof {
		b.WriteString(b64Hash(p) + "\n")
	}
	b.WriteString("\n")
	b.Write(msg)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/add-checkpoint", &b))
	return rec
}

func b64Hash(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

// TestWitnessProtocol: the witness answers add-checkpoint as
// c2sp.org/tlog-witness says, persists what it cosigned, and refuses to
// start without its state.
func TestWitnessProtocol(t *testing.T) {
	skey, vkey, err := tlog.GenerateKey(rand.Reader, "log.test/audit")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := tlog.NewSigner(skey)
	otherSkey, _, _ := tlog.GenerateKey(rand.Reader, "log.test/audit")
	other, _ := tlog.NewSigner(otherSkey)
	keyFile, stateFile, wkey := newTestWitness(t, vkey)
	w, err := loadWitness(keyFile, stateFile)
	if err != nil {
		t.Fatal(err)
	}
	wv, err := tlog.NewCosignatureVerifier(wkey)
	if err != nil {
		t.Fatal(err)
	}
	var tree tlog.Tree
	sign := func(s *tlog.Signer, n int) ([]byte, tlog.Checkpoint) {
		for tree.Size() < uint64(n) {
			tree.Append(tlog.HashLeaf([]byte{byte(tree.Size())}))
		}
		root, _ := tree.Root(uint64(n))
		cp := tlog.Checkpoint{Origin: "log.test/audit", Size: uint64(n), Root: root}
		msg, err := s.SignCheckpoint(cp)
		if err != nil {
			t.Fatal(err)
		}
		return msg, cp
	}
	msg3, _ := sign(signer, 3)
	rec := addCheckpoint(t, w, 0, nil, msg3)
	if rec.Code != http.StatusOK {
		t.Fatalf("first checkpoint: %d %s", rec.Code, rec.Body)
	}
	if _, err := tlog.OpenCosigned(append(msg3, rec.Body.Bytes()...), signer.Verifier(), wv); err != nil {
		t.Errorf("cosignature: %v", err)
	}
	msg5, _ := sign(signer, 5)
	proof, _ := tree.ConsistencyProof(3, 5)
	badProof := append([]tlog.Hash(nil), proof...)
	badProof[0][0] ^= 1
	foreign, _, _ := tlog.GenerateKey(rand.Reader, "other.test/log")
	fs, _ := tlog.NewSigner(foreign)
	fmsg, _ := fs.SignCheckpoint(tlog.Checkpoint{Origin: "other.test/log", Size: 1, Root: tlog.HashLeaf(nil)})
	msg5other, _ := sign(other, 5)
	for _, tc := range []struct {
		name  string
		old   uint64
		proof []tlog.Hash
		msg   []byte
		code  int
		body  string
	}{
		{"unknown log", 0, nil, fmsg, 404, ""},
		{"signed by another key", 3, proof, msg5other, 403, ""},
		{"old larger than the checkpoint", 6, nil, msg5, 400, ""},
		{"old is not what it cosigned", 0, nil, msg5, 409, "3\n"},
		{"bad proof", 3, badProof, msg5, 422, ""},
		{"shorter log", 3, nil, mustFirst(sign(signer, 2)), 400, ""},
		{"good", 3, proof, msg5, 200, ""},
		{"a replay of the older one", 3, nil, msg3, 409, "5\n"},
	} {
		rec := addCheckpoint(t, w, tc.old, tc.proof, tc.msg)
		if rec.Code != tc.code || (tc.body != "" && rec.Body.String() != tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rec.Code, rec.Body, tc.code, tc.body)
		}
		if tc.code == 409 && rec.Header().Get("Content-Type") != "text/x.tlog.size" {
			t.Errorf("%s: Content-Type %q", tc.name, rec.Header().Get("Content-Type"))
		}
	}
	// The state survives a restart.
	w2, err := loadWitness(keyFile, stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if rec := addCheckpoint(t, w2, 0, nil, msg5); rec.Code != 409 || rec.Body.String() != "5\n" {
		t.Errorf("after a restart: %d %q, want 409 5", rec.Code, rec.Body)
	}
	// An empty or missing state is refused.
	if err := os.WriteFile(stateFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWitness(keyFile, stateFile); err == nil {
		t.Error("an empty witness state was accepted")
	}
	if _, err := loadWitness(keyFile, stateFile+".missing"); err == nil {
		t.Error("a missing witness state was accepted")
	}
}

func mustFirst(b []byte, _ tlog.Checkpoint) []byte { return b }

// TestServeWithHTTPWitness: serve hands its checkpoints to a tlog-witness
// over HTTP and serves them cosigned; after entries are cut, the witness
// refuses the shorter log and /readyz fails.
func TestServeWithHTTPWitness(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	// The log key first (serve would create it), to initialise the witness.
	if _, err := loadOrCreateLogKey(filepath.Join(dataDir, logKeyFileName), "log.test/audit"); err != nil {
		t.Fatal(err)
	}
	keyFile, stateFile, wkey := newTestWitness(t, filepath.Join(dataDir, logKeyFileName)+".pub")
	w, err := loadWitness(keyFile, stateFile)
	if err != nil {
		t.Fatal(err)
	}
	ws := httptest.NewServer(w)
	defer ws.Close()
	t.Setenv("PGXSAFETY_AUDIT_WITNESS_URL", ws.URL)
	t.Setenv("PGXSAFETY_AUDIT_WITNESS_KEY", wkey)
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	for range 4 {
		if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
	}
	if err := s.checkpoints.publish(context.Background()); err != nil {
		t.Fatalf("publish: %v", err)
	}
	rec := request(t, s.handler, http.MethodGet, "/pgx/audit/checkpoint", tok, "")
	wv, _ := tlog.NewCosignatureVerifier(wkey)
	key := dataDirKey(t, dataDir)
	cp, err := tlog.OpenCosigned(rec.Body.Bytes(), key, wv)
	if err != nil || cp.Size != 4 {
		t.Fatalf("served checkpoint %+v, %v:\n%s", cp, err, rec.Body)
	}
	if _, err := os.Stat(filepath.Join(dataDir, witnessFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a witness file was written beside the log: %v", err)
	}
	s.close()

	db, err := sql.Open("sqlite", filepath.Join(dataDir, sqlstore.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE seq >= 3`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s2 := inProcess(t, dataDir, serverOptions{})
	if err := s2.checkpoints.Tampering(); !errors.Is(err, audit.ErrChainBroken) {
		t.Errorf("restarted on a cut log: %v, want the witness's refusal as tampering", err)
	}
	if rec := request(t, s2.handler, http.MethodGet, "/readyz", "", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz: %d %s", rec.Code, rec.Body)
	}
}

// TestWitnessRollbackWhileRunning: a witness file replaced by an older
// copy while the server runs is seen at the next checkpoint and treated
// as tampering (the server remembers what the witness accepted).
func TestWitnessRollbackWhileRunning(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	witness := filepath.Join(t.TempDir(), "witness")
	t.Setenv("PGXSAFETY_AUDIT_WITNESS_FILE", witness)
	s := inProcess(t, dataDir, serverOptions{})
	tok := devToken(t, dataDir, "alice", time.Now())
	ctx := context.Background()
	post := func() {
		if rec := request(t, s.handler, http.MethodPost, "/pgx/check", tok, checkBody); rec.Code != http.StatusOK {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
	}
	post()
	if err := s.checkpoints.publish(ctx); err != nil {
		t.Fatal(err)
	}
	old := mustRead(t, witness)
	post()
	if err := s.checkpoints.publish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(witness, old, 0o644); err != nil {
		t.Fatal(err)
	}
	post()
	if err := s.checkpoints.publish(ctx); !errors.Is(err, audit.ErrChainBroken) || !strings.Contains(err.Error(), "rolled back") {
		t.Errorf("publish after the witness was rolled back: %v, want tampering naming the rollback", err)
	}
	if s.checkpoints.Tampering() == nil {
		t.Error("Tampering() = nil after a witness rollback")
	}
}

// TestEmptyWitnessFileRefused: an empty witness file stops the server at
// start, naming the setting, instead of stopping checkpointing silently.
func TestEmptyWitnessFileRefused(t *testing.T) {
	clearEnv(t)
	dataDir := t.TempDir()
	witness := filepath.Join(t.TempDir(), "witness")
	if err := os.WriteFile(witness, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGXSAFETY_AUDIT_WITNESS_FILE", witness)
	cfg, err := loadServeConfig([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newServer(context.Background(), cfg, zap.NewNop(), io.Discard, serverOptions{})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "PGXSAFETY_AUDIT_WITNESS_FILE") || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty witness file: %v, want a usage error naming PGXSAFETY_AUDIT_WITNESS_FILE", err)
	}
	// "audit verify" fails on it too (the store was created before the
	// witness was read).
	if _, _, err := runArgs(t, "audit", "verify", "--data-dir", dataDir); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("audit verify with an empty witness file: %v", err)
	}
}

// FuzzWitnessRequest: the add-checkpoint body parser never panics and
// never accepts more than 63 proof lines or a non-canonical old size.
func FuzzWitnessRequest(f *testing.F) {
	f.Add([]byte("old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"))
	f.Add([]byte("old 0\n\nlog\n1\nAAAA\n"))
	f.Add([]byte("old 01\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseWitnessRequest(body)
		if err != nil {
			return
		}
		if len(req.proof) > 63 || !strings.HasPrefix(string(body), "old "+strconv.FormatUint(req.old, 10)+"\n") {
			t.Fatalf("accepted %q as old %d with %d proof lines", body, req.old, len(req.proof))
		}
	})
}
