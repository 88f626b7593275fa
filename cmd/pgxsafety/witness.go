package main

// A minimal witness of the C2SP tlog-witness protocol (c2sp.org/tlog-witness,
// cosignatures c2sp.org/tlog-cosignature), for one log: "pgxsafety witness
// init" creates its key and state, "pgxsafety witness serve" answers
// POST /add-checkpoint. Run it on another host, under another account than
// the database's owner: its state is what the log cannot roll back. No
// well-kept Go implementation could be used: filippo.io/torchwood keeps its
// witness internal (litewitness), and its module needs sigsum.org/sigsum-go,
// which the module proxy refuses; github.com/transparency-dev/witness is not
// served (docs/operations.md "Witness").

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// witnessState is the witness's state file: the log it witnesses and the
// latest checkpoint body it cosigned ("" before the first).
type witnessState struct {
	Log        string `json:"log"`
	Checkpoint string `json:"checkpoint"`
}

// witnessMaxBody bounds an add-checkpoint request: 63 proof lines and a
// checkpoint with a few signatures fit many times over.
const witnessMaxBody = 64 << 10

// witnessServer answers add-checkpoint for one log.
type witnessServer struct {
	cosigner *tlog.Cosigner
	log      *tlog.Verifier
	path     string

	mu    sync.Mutex // held from reading the state to persisting it
	state witnessState
}

// loadWitness reads the witness's key and state. A missing or empty state
// file is refused: a witness starts from "witness init", never from
// nothing, so a lost state cannot silently accept a shorter log.
func loadWitness(keyFile, stateFile string) (*witnessServer, error) {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("witness key: %w", err)
	}
	cs, err := tlog.NewCosigner(string(b))
	if err != nil {
		return nil, fmt.Errorf("witness key %s: %w", keyFile, err)
	}
	sb, err := os.ReadFile(stateFile)
	if err != nil {
		return nil, fmt.Errorf("witness state: %w (create it with \"pgxsafety witness init\"; if it was lost, retire this witness and its key)", err)
	}
	var st witnessState
	if err := json.Unmarshal(sb, &st); err != nil || st.Log == "" {
		return nil, fmt.Errorf("witness state %s is empty or not a witness state: retire this witness and its key, do not start it from nothing", stateFile)
	}
	lv, err := tlog.NewVerifier(st.Log)
	if err != nil {
		return nil, fmt.Errorf("witness state %s: %w", stateFile, err)
	}
	if st.Checkpoint != "" {
		if _, err := tlog.ParseCheckpoint([]byte(st.Checkpoint)); err != nil {
			return nil, fmt.Errorf("witness state %s: %w", stateFile, err)
		}
	}
	return &witnessServer{cosigner: cs, log: lv, path: stateFile, state: st}, nil
}

// persist writes the state durably (temporary file, fsync, rename).
func (w *witnessServer) persist(st witnessState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := w.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, w.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(w.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// witnessRequest is a parsed add-checkpoint body.
type witnessRequest struct {
	old   uint64
	proof []tlog.Hash
	note  []byte
}

// parseWitnessRequest reads "old N", up to 63 base64 hashes, an empty line
// and the signed checkpoint.
func parseWitnessRequest(body []byte) (witnessRequest, error) {
	var req witnessRequest
	line, rest, ok := bytes.Cut(body, []byte("\n"))
	if !ok {
		return req, errors.New("no old size line")
	}
	n, found := strings.CutPrefix(string(line), "old ")
	v, err := strconv.ParseUint(n, 10, 64)
	if !found || err != nil || strconv.FormatUint(v, 10) != n {
		return req, errors.New("the first line is not \"old\" and a decimal size")
	}
	req.old = v
	for {
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			return req, errors.New("no empty line before the checkpoint")
		}
		if len(line) == 0 {
			break
		}
		if len(req.proof) == 63 {
			return req, errors.New("more than 63 proof lines")
		}
		h, err := base64.StdEncoding.DecodeString(string(line))
		if err != nil || len(h) != tlog.HashSize {
			return req, errors.New("a proof line is not a base64 SHA-256 hash")
		}
		req.proof = append(req.proof, tlog.Hash(h))
	}
	req.note = rest
	return req, nil
}

// ServeHTTP answers POST /add-checkpoint (c2sp.org/tlog-witness).
func (w *witnessServer) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/add-checkpoint" {
		http.NotFound(rw, r)
		return
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, witnessMaxBody))
	if err != nil {
		http.Error(rw, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	status, out, contentType := w.addCheckpoint(body)
	rw.Header().Set("Content-Type", contentType)
	rw.WriteHeader(status)
	_, _ = rw.Write(out)
}

// addCheckpoint runs the checks of c2sp.org/tlog-witness in its order and
// returns the status and body to answer.
func (w *witnessServer) addCheckpoint(body []byte) (int, []byte, string) {
	const text = "text/plain; charset=utf-8"
	req, err := parseWitnessRequest(body)
	if err != nil {
		return http.StatusBadRequest, []byte(err.Error() + "\n"), text
	}
	origin, _, _ := strings.Cut(string(req.note), "\n")
	if origin != w.log.Name() {
		return http.StatusNotFound, []byte("unknown log\n"), text
	}
	cp, err := w.log.OpenCheckpoint(req.note)
	switch {
	case errors.Is(err, tlog.ErrSignature):
		return http.StatusForbidden, []byte("the checkpoint is not signed by the log's key\n"), text
	case err != nil:
		return http.StatusBadRequest, []byte("not a checkpoint of the log\n"), text
	}
	if len(cp.Extensions) > 0 {
		return http.StatusBadRequest, []byte("checkpoint extension lines are not cosigned by this witness\n"), text
	}
	if req.old > cp.Size {
		return http.StatusBadRequest, []byte("old size larger than the checkpoint's\n"), text
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var held tlog.Checkpoint
	if w.state.Checkpoint != "" {
		held, _ = tlog.ParseCheckpoint([]byte(w.state.Checkpoint))
	}
	if req.old != held.Size {
		return http.StatusConflict, []byte(strconv.FormatUint(held.Size, 10) + "\n"), "text/x.tlog.size"
	}
	switch {
	case req.old == 0 && len(req.proof) > 0:
		return http.StatusBadRequest, []byte("the proof must be empty from size 0\n"), text
	case req.old == cp.Size && cp.Root != held.Root && held.Size > 0:
		return http.StatusConflict, []byte(strconv.FormatUint(held.Size, 10) + "\n"), "text/x.tlog.size"
	case req.old > 0 && req.old < cp.Size:
		if err := tlog.VerifyConsistency(held.Size, cp.Size, req.proof, held.Root, cp.Root); err != nil {
			return http.StatusUnprocessableEntity, []byte("the consistency proof does not verify\n"), text
		}
	}
	checkpoint := cp.Marshal()
	sig, err := w.cosigner.Cosign(checkpoint)
	if err != nil {
		return http.StatusInternalServerError, []byte("cannot cosign\n"), text
	}
	if err := w.persist(witnessState{Log: w.state.Log, Checkpoint: string(checkpoint)}); err != nil {
		return http.StatusServiceUnavailable, []byte("cannot persist the state\n"), text
	}
	w.state.Checkpoint = string(checkpoint)
	return http.StatusOK, sig, text
}

// runWitness dispatches "witness init|serve".
func runWitness(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("witness: want init or serve")
	}
	switch args[0] {
	case "init":
		fs := newFlagSet("witness init", stderr, "witness init --name NAME --log VKEY --key FILE --state FILE")
		name := fs.String("name", "", "the witness's name (a schema-less URL, e.g. witness.example.org/pgxsafety)")
		logKey := fs.String("log", "", "the verifier key of the log to witness (audit-log.key.pub)")
		keyFile := fs.String("key", "", "new file for the witness's private key (mode 0600)")
		stateFile := fs.String("state", "", "new file for the witness's state")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if *name == "" || *logKey == "" || *keyFile == "" || *stateFile == "" {
			return usageError("witness init: --name, --log, --key and --state are required")
		}
		lv, err := loadVerifierKey(*logKey)
		if err != nil {
			return err
		}
		skey, _, err := tlog.GenerateKey(rand.Reader, *name)
		if err != nil {
			return usageError("witness init: %v", err)
		}
		cs, err := tlog.NewCosigner(skey)
		if err != nil {
			return err
		}
		for _, f := range []struct {
			path, data string
		}{{*keyFile, skey + "\n"}, {*stateFile, ""}} {
			data := f.data
			if f.path == *stateFile {
				b, _ := json.Marshal(witnessState{Log: lv.String()})
				data = string(b)
			}
			file, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("witness init: %w", err)
			}
			if _, err := file.WriteString(data); err != nil {
				file.Close()
				return fmt.Errorf("witness init: %w", err)
			}
			if err := file.Close(); err != nil {
				return fmt.Errorf("witness init: %w", err)
			}
		}
		fmt.Fprintf(stdout, "%s\n", cs.VerifierKey())
		return nil
	case "serve":
		fs := newFlagSet("witness serve", stderr, "witness serve --key FILE --state FILE [--addr ADDR]")
		keyFile := fs.String("key", "", "the witness's private key")
		stateFile := fs.String("state", "", "the witness's state (from \"witness init\")")
		addr := fs.String("addr", "127.0.0.1:8081", "listen address")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		w, err := loadWitness(*keyFile, *stateFile)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		fmt.Fprintf(stdout, "witness %s (%s) for log %s listening on %s\n", w.cosigner.Name(), w.cosigner.VerifierKey(), w.log.Name(), ln.Addr())
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	default:
		return usageError("witness: unknown command %q (want init or serve)", args[0])
	}
}

// httpWitness hands checkpoints to a tlog-witness over HTTP and returns
// its cosignatures.
type httpWitness struct {
	url    string // submission prefix
	key    *tlog.CosignatureVerifier
	logKey *tlog.Verifier
	client *http.Client

	mu   sync.Mutex
	size uint64 // the size the witness last cosigned, as far as known
}

// errWitnessConflict wraps the witness's 409 answers.
var errWitnessConflict = errors.New("witness conflict")

// add posts one add-checkpoint request; on 409 it returns the witness's
// size wrapped in errWitnessConflict.
func (w *httpWitness) add(ctx context.Context, old uint64, proof []tlog.Hash, msg []byte) ([]byte, uint64, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(w.url, "/")+"/add-checkpoint", &b)
	if err != nil {
		return nil, 0, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("witness: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, witnessMaxBody))
	if err != nil {
		return nil, 0, fmt.Errorf("witness: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, 0, nil
	case http.StatusConflict:
		n, err := strconv.ParseUint(strings.TrimSuffix(string(body), "\n"), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("witness: 409 without a size")
		}
		return nil, n, errWitnessConflict
	case http.StatusUnprocessableEntity:
		return nil, 0, errWitnessInconsistent
	default:
		first, _, _ := strings.Cut(string(body), "\n")
		return nil, 0, fmt.Errorf("witness: %s: %.200s", resp.Status, first)
	}
}

// errWitnessInconsistent is the witness's 422: the consistency proof from
// what it cosigned does not verify.
var errWitnessInconsistent = errors.New("the witness found the log inconsistent with the checkpoint it cosigned")

// Check implements checkpointWitness: nothing to check before the first
// request (the witness keeps its own state, which the log cannot reach).
func (w *httpWitness) Check(context.Context, *checkpointer) error { return nil }

// Update implements checkpointWitness: it submits msg with a proof from
// the size the witness last cosigned (learnt from a 409 when unknown) and
// returns the witness's cosignature line, checked with its key.
func (w *httpWitness) Update(ctx context.Context, msg []byte, _ uint64, proof func(from, to uint64) ([]tlog.Hash, error)) ([]byte, error) {
	text, _, err := tlog.SplitNote(msg)
	if err != nil {
		return nil, err
	}
	cp, err := tlog.ParseCheckpoint(text)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.size
	for range 3 {
		if old > cp.Size {
			return nil, fmt.Errorf("%w: the witness cosigned a checkpoint of %d entries, the log now has %d: entries were removed",
				audit.ErrChainBroken, old, cp.Size)
		}
		var p []tlog.Hash
		if old > 0 && old < cp.Size {
			if p, err = proof(old, cp.Size); err != nil {
				return nil, err
			}
		}
		sigs, held, err := w.add(ctx, old, p, msg)
		switch {
		case err == nil:
			if _, err := tlog.OpenCosigned(append(append([]byte(nil), msg...), sigs...), w.logKey, w.key); err != nil {
				return nil, fmt.Errorf("witness: %w", err)
			}
			w.size = cp.Size
			return sigs, nil
		case errors.Is(err, errWitnessConflict) && held == old:
			return nil, fmt.Errorf("%w: the witness cosigned another tree of %d entries", audit.ErrChainBroken, held)
		case errors.Is(err, errWitnessConflict):
			old = held
		case errors.Is(err, errWitnessInconsistent):
			return nil, fmt.Errorf("%w: %w (%d entries)", audit.ErrChainBroken, err, old)
		default:
			return nil, err
		}
	}
	return nil, errors.New("witness: the size it holds keeps changing")
}
