package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tdlog "github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// ProofBundle is what "audit prove" writes and "audit verify-proof" checks:
// everything an auditor needs offline besides the log's public key.
type ProofBundle struct {
	// Kind is "inclusion" or "consistency".
	Kind string `json:"kind"`
	// Log is the log's origin (its key name).
	Log string `json:"log"`
	// Entry is the entry proved (inclusion), payloads included, so its
	// entry_hash can be recomputed.
	Entry *audit.Entry `json:"entry,omitempty"`
	// LeafIndex is Entry.Sequence-1 (inclusion).
	LeafIndex uint64 `json:"leaf_index,omitempty"`
	// OldCheckpoint is the earlier signed checkpoint (consistency).
	OldCheckpoint string `json:"old_checkpoint,omitempty"`
	// Checkpoint is the signed checkpoint the proof leads to.
	Checkpoint string `json:"checkpoint"`
	// Hashes is the proof, base64, in RFC 6962 order.
	Hashes []string `json:"hashes"`
}

// runAuditCheckpoint prints a signed checkpoint of the log as it is now.
func runAuditCheckpoint(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit checkpoint", stderr, "audit checkpoint [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	signer, err := loadLogKey(env.logKeyPath(*dataDir))
	if err != nil {
		return err
	}
	store, err := env.openExistingLog(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	cp, err := audit.NewLog(store).Checkpoint(ctx, signer.Name())
	if err != nil {
		return fmt.Errorf("audit checkpoint: %w", err)
	}
	msg, err := signer.SignCheckpoint(cp)
	if err != nil {
		return err
	}
	_, err = stdout.Write(msg)
	return err
}

// runAuditProve writes an inclusion proof of one entry or a consistency
// proof from an older checkpoint.
func runAuditProve(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit prove", stderr, "audit prove (--id AUDIT_LOG_ID | --from-checkpoint FILE) [--checkpoint FILE] [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	id := fs.String("id", "", "the audit_log_id of the entry to prove")
	from := fs.String("from-checkpoint", "", "prove that the log extends this older signed checkpoint")
	against := fs.String("checkpoint", "", "prove against this signed checkpoint (default: one signed now with the log key)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*id == "") == (*from == "") {
		return usageError("audit prove: give exactly one of --id and --from-checkpoint")
	}
	readCheckpoint := func(path string, key *tlog.Verifier) ([]byte, tlog.Checkpoint, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, tlog.Checkpoint{}, fmt.Errorf("audit prove: %w", err)
		}
		cp, err := key.OpenCheckpoint(b)
		if err != nil {
			return nil, tlog.Checkpoint{}, fmt.Errorf("audit prove: %s: %w", path, err)
		}
		return b, cp, nil
	}
	store, err := env.openExistingLog(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	log := audit.NewLog(store)

	// The checkpoint the proof leads to: given, or signed now.
	var target []byte
	var tcp tlog.Checkpoint
	var key *tlog.Verifier
	if *against != "" {
		if key, err = env.verifierFor("", *dataDir); err != nil {
			return err
		}
		if target, tcp, err = readCheckpoint(*against, key); err != nil {
			return err
		}
		root, err := log.Root(ctx, tcp.Size)
		if err != nil {
			return fmt.Errorf("audit prove: FAILED: the log cannot reproduce the checkpoint of %d entries: %w", tcp.Size, err)
		}
		if root != tcp.Root {
			return fmt.Errorf("audit prove: FAILED: %w", &audit.TreeError{Size: tcp.Size, Reason: "the log's root differs from the checkpoint's"})
		}
	} else {
		signer, err := loadLogKey(env.logKeyPath(*dataDir))
		if err != nil {
			return err
		}
		key = signer.Verifier()
		if tcp, err = log.Checkpoint(ctx, signer.Name()); err != nil {
			return fmt.Errorf("audit prove: %w", err)
		}
		if target, err = signer.SignCheckpoint(tcp); err != nil {
			return err
		}
	}
	b := ProofBundle{Log: key.Name(), Checkpoint: string(target)}
	var hashes []tlog.Hash
	if *id != "" {
		e, err := store.Entry(ctx, *id)
		if err != nil {
			return fmt.Errorf("audit prove: %w", err)
		}
		if hashes, err = log.InclusionProof(ctx, e.Sequence, tcp.Size); err != nil {
			return fmt.Errorf("audit prove: %w", err)
		}
		b.Kind, b.Entry, b.LeafIndex = "inclusion", &e, uint64(e.Sequence-1)
	} else {
		old, ocp, err := readCheckpoint(*from, key)
		if err != nil {
			return err
		}
		if ocp.Size > tcp.Size {
			return fmt.Errorf("audit prove: FAILED: %w", &audit.TreeError{Size: ocp.Size, Reason: fmt.Sprintf(
				"the log holds %d entries but the older checkpoint commits to %d: entries were removed from its end", tcp.Size, ocp.Size)})
		}
		if hashes, err = log.ConsistencyProof(ctx, ocp.Size, tcp.Size); err != nil {
			return fmt.Errorf("audit prove: %w", err)
		}
		if err := tlog.VerifyConsistency(ocp.Size, tcp.Size, hashes, ocp.Root, tcp.Root); err != nil {
			return fmt.Errorf("audit prove: FAILED: the log does not extend the older checkpoint (entries changed, removed or reordered): %w", err)
		}
		b.Kind, b.OldCheckpoint = "consistency", string(old)
	}
	for _, h := range hashes {
		b.Hashes = append(b.Hashes, base64.StdEncoding.EncodeToString(h[:]))
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(b)
}

// runAuditVerifyProof checks a proof bundle offline with the
// transparency-dev verifier and golang.org/x/mod/sumdb/note: no database,
// only the bundle, the log's public key and optionally a checkpoint the
// auditor kept.
func runAuditVerifyProof(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit verify-proof", stderr, "audit verify-proof --key VKEY|FILE --proof FILE [--checkpoint FILE]")
	keyFlag := fs.String("key", "", "the log's verifier key (NAME+HASH+KEY) or a file holding it (required)")
	proofFile := fs.String("proof", "", "the proof written by \"audit prove\" (required)")
	kept := fs.String("checkpoint", "", "a signed checkpoint you kept: the proof must lead to it (inclusion) or start from it (consistency)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *keyFlag == "" || *proofFile == "" {
		return usageError("audit verify-proof: --key and --proof are required")
	}
	key, err := loadVerifierKey(*keyFlag)
	if err != nil {
		return err
	}
	nv, err := note.NewVerifier(key.String())
	if err != nil {
		return fmt.Errorf("audit verify-proof: %w", err)
	}
	raw, err := os.ReadFile(*proofFile)
	if err != nil {
		return fmt.Errorf("audit verify-proof: %w", err)
	}
	var b ProofBundle
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return fmt.Errorf("audit verify-proof: %s is not a proof bundle: %w", *proofFile, err)
	}
	failed := func(format string, a ...any) error {
		return fmt.Errorf("audit verify-proof: FAILED: %s", fmt.Sprintf(format, a...))
	}
	cp, _, _, err := tdlog.ParseCheckpoint([]byte(b.Checkpoint), key.Name(), nv)
	if err != nil {
		return failed("checkpoint: %v", err)
	}
	hashes := make([][]byte, len(b.Hashes))
	for i, h := range b.Hashes {
		if hashes[i], err = base64.StdEncoding.DecodeString(h); err != nil {
			return failed("proof hash %d is not base64", i)
		}
	}
	var keptCP *tdlog.Checkpoint
	if *kept != "" {
		kb, err := os.ReadFile(*kept)
		if err != nil {
			return fmt.Errorf("audit verify-proof: %w", err)
		}
		if keptCP, _, _, err = tdlog.ParseCheckpoint(kb, key.Name(), nv); err != nil {
			return failed("your checkpoint %s: %v", *kept, err)
		}
	}
	hasher := rfc6962.DefaultHasher
	switch b.Kind {
	case "inclusion":
		e := b.Entry
		if e == nil {
			return failed("the bundle holds no entry")
		}
		if got := audit.Hash(e.PrevHash, *e); got != e.EntryHash {
			return failed("entry %s: its content does not hash to its entry_hash", e.ID)
		}
		leaf, err := audit.LeafHash(e.EntryHash)
		if err != nil {
			return failed("%v", err)
		}
		if b.LeafIndex != uint64(e.Sequence-1) {
			return failed("leaf index %d is not the entry's position (sequence %d)", b.LeafIndex, e.Sequence)
		}
		if err := proof.VerifyInclusion(hasher, b.LeafIndex, cp.Size, leaf[:], hashes, cp.Hash); err != nil {
			return failed("entry %s is not in the checkpoint of %d entries: %v", e.ID, cp.Size, err)
		}
		if keptCP != nil && (keptCP.Size != cp.Size || !bytes.Equal(keptCP.Hash, cp.Hash)) {
			return failed("the proof leads to a checkpoint of %d entries, not to yours (%d entries); ask for a proof against yours (\"audit prove --checkpoint\")", cp.Size, keptCP.Size)
		}
		fmt.Fprintf(stdout, "OK: entry %s (sequence %d, %s at %s) is in log %s at tree size %d\n",
			e.ID, e.Sequence, e.Endpoint, e.Time.Format("2006-01-02T15:04:05Z07:00"), key.Name(), cp.Size)
	case "consistency":
		old, _, _, err := tdlog.ParseCheckpoint([]byte(b.OldCheckpoint), key.Name(), nv)
		if err != nil {
			return failed("old checkpoint: %v", err)
		}
		if keptCP != nil && (keptCP.Size != old.Size || !bytes.Equal(keptCP.Hash, old.Hash)) {
			return failed("the proof starts from a checkpoint of %d entries, not from yours (%d entries)", old.Size, keptCP.Size)
		}
		if old.Size > cp.Size {
			return failed("the log shrank from %d to %d entries", old.Size, cp.Size)
		}
		if err := proof.VerifyConsistency(hasher, old.Size, cp.Size, hashes, old.Hash, cp.Hash); err != nil {
			return failed("the log of %d entries does not extend the checkpoint of %d: %v", cp.Size, old.Size, err)
		}
		fmt.Fprintf(stdout, "OK: log %s at %d entries extends the checkpoint of %d entries\n", key.Name(), cp.Size, old.Size)
	default:
		return failed("unknown proof kind %q", b.Kind)
	}
	return nil
}

// flagTakesValue reports whether arg is a flag of "audit verify-receipt"
// given without "=" (so the next argument is its value).
func flagTakesValue(arg string) bool {
	name := strings.TrimLeft(arg, "-")
	return !strings.Contains(name, "=") && (name == "key" || name == "data-dir")
}

// runAuditVerifyReceipt checks an entry receipt (the Pgxsafety-Receipt
// header or the audit_receipt field of an answer) against the log as it
// is now: it proves that the log holds the receipted entry at its
// position, or proves the omission — a receipt signed with the log's key
// for an entry the log no longer holds, or holds changed.
func runAuditVerifyReceipt(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit verify-receipt", stderr, "audit verify-receipt [--key VKEY|FILE] [--data-dir DIR] RECEIPT|FILE")
	dataDir := env.dataDirFlag(fs)
	keyFlag := fs.String("key", "", "the log's verifier key, or a file holding it (default: the key file of the data directory)")
	// The receipt may come first or after the flags (a base64 receipt
	// never starts with '-').
	var receipt string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		receipt, args = args[0], args[1:]
	} else if n := len(args); n > 0 && !strings.HasPrefix(args[n-1], "-") && (n < 2 || !flagTakesValue(args[n-2])) {
		receipt, args = args[n-1], args[:n-1]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if receipt == "" {
		fs.Usage()
		return usageError("audit verify-receipt: give one receipt (the Pgxsafety-Receipt header's value) or a file holding it")
	}
	text := receipt
	if b, err := os.ReadFile(text); err == nil {
		text = string(b)
	}
	key, err := env.verifierFor(*keyFlag, *dataDir)
	if err != nil {
		return err
	}
	rc, err := audit.OpenReceipt(key, text)
	if err != nil {
		return fmt.Errorf("audit verify-receipt: not a receipt of log %s: %w", key.Name(), err)
	}
	store, err := env.openExistingLog(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	tree, err := audit.CheckReceiptIn(ctx, store, rc)
	var oe *audit.OmissionError
	switch {
	case errors.As(err, &oe):
		return fmt.Errorf("audit verify-receipt: FAILED: omission proved: %w; the receipt is signed with the log's key (%s): keep it as the evidence", err, key.String())
	case errors.Is(err, audit.ErrChainBroken):
		return fmt.Errorf("audit verify-receipt: FAILED: the receipted entry is in place but the log is broken: %w", err)
	case err != nil:
		return fmt.Errorf("audit verify-receipt: %w", err)
	}
	fmt.Fprintf(stdout, "OK: entry %s (sequence %d, %s) is in log %s: leaf %d of the %d it holds has the receipted hash %s\n",
		rc.ID, rc.Sequence, rc.Time.Format(time.RFC3339), key.Name(), rc.Sequence-1, tree.Size(), rc.EntryHash)
	return nil
}
