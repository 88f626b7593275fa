package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
	"github.com/pgxsafety/pgxsafety/pgxapi"
)

// The audit log's signing key and witness (docs/operations.md
// "Transparency log").
const (
	// logKeyFileName is the key file in the data directory.
	logKeyFileName = "audit-log.key"
	// witnessFileName is the default witness file in the data directory.
	witnessFileName = "audit-checkpoint.witness"
)

// loadOrCreateLogKey reads the log's private key; a missing key file is
// created (mode 0600, in a directory of mode 0700) with a new key named
// origin (PGXSAFETY_AUDIT_LOG_ORIGIN; empty: "pgxsafety/audit/" and 8
// random hex digits), and its verifier key is written beside it as
// FILE.pub.
func loadOrCreateLogKey(path, origin string) (*tlog.Signer, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return createLogKey(path, origin)
	}
	return loadLogKey(path)
}

// loadLogKey reads the log's private key. A key file readable by group or
// others is refused.
func loadLogKey(path string) (*tlog.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit log key: %w (it signs checkpoints; see docs/operations.md)", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("audit log key %s has mode %o: it must be readable by its owner only (chmod 600)", path, fi.Mode().Perm())
	}
	s, err := tlog.NewSigner(string(b))
	if err != nil {
		return nil, fmt.Errorf("audit log key %s: %w", path, err)
	}
	return s, nil
}

func createLogKey(path, origin string) (*tlog.Signer, error) {
	if origin == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		origin = "pgxsafety/audit/" + hex.EncodeToString(b[:])
	}
	skey, vkey, err := tlog.GenerateKey(rand.Reader, origin)
	if err != nil {
		return nil, usageError("PGXSAFETY_AUDIT_LOG_ORIGIN: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	if _, err := f.WriteString(skey + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	if err := os.WriteFile(path+".pub", []byte(vkey+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("audit log key: %w", err)
	}
	return tlog.NewSigner(skey)
}

// loadVerifierKey reads a verifier key given as "NAME+HASH+BASE64" or as
// the path of a file holding one (or holding the private key, whose
// verifier is used).
func loadVerifierKey(v string) (*tlog.Verifier, error) {
	if vk, err := tlog.NewVerifier(v); err == nil {
		return vk, nil
	}
	b, err := os.ReadFile(v)
	if err != nil {
		return nil, usageError("--key %q is neither a verifier key (NAME+HASH+KEY) nor a readable file", v)
	}
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, "PRIVATE+KEY+") {
		s, err := tlog.NewSigner(text)
		if err != nil {
			return nil, err
		}
		return s.Verifier(), nil
	}
	return tlog.NewVerifier(text)
}

// fileWitness keeps the latest checkpoint in a file outside the database
// and refuses to replace it by one the log cannot prove consistent with it:
// a checkpoint of a smaller log, or of a log whose first entries differ.
// Point it at storage the database owner cannot rewrite (another host, a
// write-once bucket mounted as a file system, a ticketing system's drop
// folder).
type fileWitness struct {
	path string
	key  *tlog.Verifier
}

// errEmptyWitness is the error of a witness file that exists but is empty.
var errEmptyWitness = errors.New("the witness file is empty")

// Latest returns the witnessed checkpoint, or nil when there is none (no
// file: the witness is new). An empty file is an error: it is not a new
// witness (that has no file) but one whose checkpoint was lost or cut, and
// reading it as new would accept any log.
func (w *fileWitness) Latest() ([]byte, *tlog.Checkpoint, error) {
	b, err := os.ReadFile(w.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("witness: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil, fmt.Errorf("witness %s: %w", w.path, errEmptyWitness)
	}
	cp, err := w.key.OpenCheckpoint(b)
	if err != nil {
		return nil, nil, fmt.Errorf("witness %s: %w", w.path, err)
	}
	return b, &cp, nil
}

// checkpointWitness is a witness of the log's checkpoints: the file
// witness or a C2SP tlog-witness over HTTP.
type checkpointWitness interface {
	// Check runs at start (before the first checkpoint).
	Check(ctx context.Context, c *checkpointer) error
	// Update hands the witness the signed checkpoint msg, with proof
	// giving consistency proofs from what it holds; seen is the size of
	// the last checkpoint this process had it accept. It returns the
	// witness's cosignature lines to add to msg (none for a file). An
	// error wrapping audit.ErrChainBroken means the log is inconsistent
	// with what the witness holds.
	Update(ctx context.Context, msg []byte, seen uint64, proof func(from, to uint64) ([]tlog.Hash, error)) ([]byte, error)
}

// Update implements checkpointWitness: it replaces the witnessed
// checkpoint by msg after checking, with proof (from the witnessed size to
// msg's), that the log still extends it. A witness holding less than seen
// was rolled back.
func (w *fileWitness) Update(_ context.Context, msg []byte, seen uint64, proof func(from, to uint64) ([]tlog.Hash, error)) ([]byte, error) {
	return nil, w.update(msg, seen, proof)
}

func (w *fileWitness) update(msg []byte, seen uint64, proof func(from, to uint64) ([]tlog.Hash, error)) error {
	cp, err := w.key.OpenCheckpoint(msg)
	if err != nil {
		return err
	}
	unlock, err := lockWitness(w.path)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	defer unlock()
	_, old, err := w.Latest()
	if err != nil {
		return err
	}
	if seen > 0 && (old == nil || old.Size < seen) {
		held := uint64(0)
		if old != nil {
			held = old.Size
		}
		return fmt.Errorf("%w: the witness holds a checkpoint of %d entries, but it accepted one of %d from this server: the witness was rolled back or replaced",
			audit.ErrChainBroken, held, seen)
	}
	if old != nil {
		if old.Size > cp.Size {
			// Another replica writing to the same log may have witnessed
			// a later checkpoint since msg was signed. That is no removal
			// when the log still holds the witnessed tree and msg's tree
			// is a prefix of it; otherwise entries were removed.
			if p, err := proof(cp.Size, old.Size); err == nil &&
				tlog.VerifyConsistency(cp.Size, old.Size, p, cp.Root, old.Root) == nil {
				return errWitnessAhead
			}
			return fmt.Errorf("%w: the witness holds a checkpoint of %d entries, the log now has %d: entries were removed",
				audit.ErrChainBroken, old.Size, cp.Size)
		}
		p, err := proof(old.Size, cp.Size)
		if err != nil {
			return err
		}
		if err := tlog.VerifyConsistency(old.Size, cp.Size, p, old.Root, cp.Root); err != nil {
			return fmt.Errorf("%w: the log is not consistent with the witnessed checkpoint of %d entries: %v",
				audit.ErrChainBroken, old.Size, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(w.path), filepath.Base(w.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	_, werr := tmp.Write(msg)
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("witness: %w", err)
	}
	if err := os.Rename(tmp.Name(), w.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("witness: %w", err)
	}
	return nil
}

// errWitnessAhead: the witness already holds a later checkpoint of the
// same log (signed by another replica sharing the key and the witness).
var errWitnessAhead = errors.New("witness holds a later checkpoint of this log")

// checkpointer signs checkpoints of the audit log, hands them to the
// witness and serves them and their proofs (pgxapi.TransparencyLog).
type checkpointer struct {
	store   *sqlstore.Store
	log     *audit.Log
	signer  *tlog.Signer
	witness checkpointWitness
	zlog    *zap.Logger

	// pub serialises publish: the ticker, shutdown and on-demand
	// checkpoints would otherwise hand the witness two checkpoints at once.
	pub sync.Mutex

	mu     sync.Mutex
	latest []byte
	cp     tlog.Checkpoint
	err    error

	// demand serialises checkpoints signed on demand (Covering);
	// lastDemand is when the last one was signed.
	demand     sync.Mutex
	lastDemand time.Time
}

// onDemandInterval is the least time between two checkpoints signed on
// demand (GET /pgx/audit/checkpoint?covering=N): callers arriving sooner
// wait for the next one, and callers waiting together share it.
const onDemandInterval = time.Second

var _ pgxapi.TransparencyLog = (*checkpointer)(nil)

func newCheckpointer(store *sqlstore.Store, signer *tlog.Signer, w checkpointWitness, log *zap.Logger) *checkpointer {
	return &checkpointer{
		store:   store,
		log:     audit.NewLog(store),
		signer:  signer,
		witness: w,
		zlog:    log,
	}
}

// newWitness is the configured witness: a C2SP tlog-witness when
// PGXSAFETY_AUDIT_WITNESS_URL is set (its cosignature key
// PGXSAFETY_AUDIT_WITNESS_KEY), else the witness file.
func newWitness(cfg serveConfig, signer *tlog.Signer) (checkpointWitness, error) {
	if cfg.witnessURL == "" {
		return &fileWitness{path: cfg.witnessFile, key: signer.Verifier()}, nil
	}
	if cfg.witnessKey == "" {
		return nil, usageError("PGXSAFETY_AUDIT_WITNESS_URL needs PGXSAFETY_AUDIT_WITNESS_KEY, the witness's cosignature verifier key")
	}
	k, err := tlog.NewCosignatureVerifier(cfg.witnessKey)
	if err != nil {
		return nil, usageError("PGXSAFETY_AUDIT_WITNESS_KEY: %v", err)
	}
	return &httpWitness{url: cfg.witnessURL, key: k, logKey: signer.Verifier(), client: &http.Client{Timeout: 10 * time.Second}}, nil
}

// checkWitness is run at start (checkpointWitness.Check).
func (c *checkpointer) checkWitness(ctx context.Context) error { return c.witness.Check(ctx, c) }

// Check implements checkpointWitness: a witness file that is empty or not
// a checkpoint of this log stops the server (naming the setting), since it
// would otherwise stop checkpointing or accept any log; no witness file at
// all, while the log holds entries, is logged as a warning (witnessing
// starts with the next checkpoint: if a file existed, it was removed).
func (w *fileWitness) Check(ctx context.Context, c *checkpointer) error {
	_, old, err := w.Latest()
	if err != nil {
		return usageError("PGXSAFETY_AUDIT_WITNESS_FILE: %v; it must hold the last checkpoint the witness accepted. If the witness "+
			"is new, remove the empty file (no file means a new witness); if it was lost, restore it from a copy before "+
			"starting — see docs/operations.md \"Witness\"", err)
	}
	if old == nil {
		if n, err := c.log.Sync(ctx); err == nil && n > 0 {
			c.zlog.Warn("the audit witness holds no checkpoint although the log has entries: witnessing starts with the next checkpoint (if a witness file existed, it was removed)",
				zap.Uint64("entries", n), zap.String("witness", w.path))
		}
	}
	return nil
}

// publish signs a checkpoint of the current tree (when it grew) and has
// the witness accept it. A log found inconsistent with the tree or the
// witness stops being checkpointed: the error is kept, logged and
// reported by /readyz and /pgx/status.
func (c *checkpointer) publish(ctx context.Context) error {
	c.pub.Lock()
	defer c.pub.Unlock()
	cp, err := c.log.Checkpoint(ctx, c.signer.Name())
	if err != nil {
		return c.fail(err)
	}
	c.mu.Lock()
	same := c.latest != nil && c.cp.Size == cp.Size
	c.mu.Unlock()
	if same {
		return nil
	}
	msg, err := c.signer.SignCheckpoint(cp)
	if err != nil {
		return c.fail(err)
	}
	c.mu.Lock()
	seen := uint64(0)
	if c.latest != nil {
		seen = c.cp.Size
	}
	c.mu.Unlock()
	cosigs, err := c.witness.Update(ctx, msg, seen, func(from, to uint64) ([]tlog.Hash, error) {
		return c.log.ConsistencyProof(ctx, from, to)
	})
	if errors.Is(err, errWitnessAhead) {
		// A sibling replica's later checkpoint in the shared witness file,
		// shown consistent with this log: serve that one.
		err = errors.New("witness: the later checkpoint cannot be read back")
		if w, ok := c.witness.(interface {
			Latest() ([]byte, *tlog.Checkpoint, error)
		}); ok {
			var wcp *tlog.Checkpoint
			if msg, wcp, err = w.Latest(); err == nil && wcp != nil {
				cp = *wcp
			} else if err == nil {
				err = errors.New("witness: the later checkpoint disappeared")
			}
		}
	}
	if err != nil {
		return c.fail(err)
	}
	msg = append(msg, cosigs...)
	c.mu.Lock()
	c.latest, c.cp, c.err = msg, cp, nil
	c.mu.Unlock()
	return nil
}

func (c *checkpointer) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, audit.ErrChainBroken) {
		// Tampering: never sign again in this process.
		if c.err == nil || !errors.Is(c.err, audit.ErrChainBroken) {
			c.zlog.Error("audit log is inconsistent with its checkpoints: no further checkpoint will be signed; run \"pgxsafety audit verify\"", zap.Error(err))
		}
		c.err = err
		c.latest = nil
		return err
	}
	if c.err == nil {
		c.zlog.Warn("audit checkpoint failed; will retry", zap.Error(err))
	}
	c.err = err
	return err
}

// run publishes every interval until ctx ends.
func (c *checkpointer) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.Err() != nil && errors.Is(c.Err(), audit.ErrChainBroken) {
			continue
		}
		_ = c.publish(ctx)
	}
}

// Err is the last checkpointing error (nil when the last attempt worked).
func (c *checkpointer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Tampering is the error that stopped checkpointing when the log was found
// inconsistent with its tree or its witness (it wraps
// audit.ErrChainBroken), nil otherwise: a failure to reach the database
// or the witness is not tampering.
func (c *checkpointer) Tampering() error {
	if err := c.Err(); errors.Is(err, audit.ErrChainBroken) {
		return err
	}
	return nil
}

// Latest implements pgxapi.TransparencyLog.
func (c *checkpointer) Latest() ([]byte, tlog.Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latest == nil {
		err := c.err
		if err == nil {
			err = errors.New("none signed yet")
		}
		return nil, tlog.Checkpoint{}, fmt.Errorf("%w: %w", pgxapi.ErrNoCheckpoint, err)
	}
	return c.latest, c.cp, nil
}

// Covering implements pgxapi.TransparencyLog: the latest checkpoint when
// it holds size entries, else one signed (and witnessed) now, at most one
// every onDemandInterval.
func (c *checkpointer) Covering(ctx context.Context, size uint64) ([]byte, tlog.Checkpoint, error) {
	if msg, cp, err := c.Latest(); err == nil && cp.Size >= size {
		return msg, cp, nil
	}
	c.demand.Lock()
	defer c.demand.Unlock()
	if msg, cp, err := c.Latest(); err == nil && cp.Size >= size {
		return msg, cp, nil // signed while this caller waited
	}
	if wait := time.Until(c.lastDemand.Add(onDemandInterval)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, tlog.Checkpoint{}, ctx.Err()
		}
	}
	c.lastDemand = time.Now()
	if err := c.publish(ctx); err != nil {
		return nil, tlog.Checkpoint{}, fmt.Errorf("%w: %w", pgxapi.ErrNoCheckpoint, err)
	}
	msg, cp, err := c.Latest()
	if err != nil {
		return nil, tlog.Checkpoint{}, err
	}
	if cp.Size < size {
		return nil, tlog.Checkpoint{}, fmt.Errorf("%w: %d entries, %d asked for", pgxapi.ErrNotLogged, cp.Size, size)
	}
	return msg, cp, nil
}

// Locate implements pgxapi.TransparencyLog.
func (c *checkpointer) Locate(ctx context.Context, id string) (int64, string, error) {
	e, err := c.store.Entry(ctx, id)
	if errors.Is(err, sqlstore.ErrNotFound) {
		return 0, "", fmt.Errorf("%w: %w", pgxapi.ErrUnknownEntry, err)
	}
	if err != nil {
		return 0, "", err
	}
	return e.Sequence, e.EntryHash, nil
}

// InclusionProof implements pgxapi.TransparencyLog.
func (c *checkpointer) InclusionProof(ctx context.Context, seq int64, size uint64) ([]tlog.Hash, error) {
	return c.log.InclusionProof(ctx, seq, size)
}

// ConsistencyProof implements pgxapi.TransparencyLog.
func (c *checkpointer) ConsistencyProof(ctx context.Context, size1, size2 uint64) ([]tlog.Hash, error) {
	return c.log.ConsistencyProof(ctx, size1, size2)
}
