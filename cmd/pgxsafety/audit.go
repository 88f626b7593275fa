package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// runAudit dispatches "audit verify|purge|export|checkpoint|prove|verify-proof".
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError("audit: want verify, purge, export, checkpoint, prove, verify-proof or verify-receipt")
	}
	env, err := readEnvironment()
	if err != nil {
		return err
	}
	switch args[0] {
	case "checkpoint":
		return runAuditCheckpoint(ctx, env, args[1:], stdout, stderr)
	case "prove":
		return runAuditProve(ctx, env, args[1:], stdout, stderr)
	case "verify-proof":
		return runAuditVerifyProof(args[1:], stdout, stderr)
	case "verify-receipt":
		return runAuditVerifyReceipt(ctx, env, args[1:], stdout, stderr)
	case "verify":
		return runAuditVerify(ctx, env, args[1:], stdout, stderr)
	case "purge":
		return runAuditPurge(ctx, env, args[1:], stdout, stderr)
	case "export":
		return runAuditExport(ctx, env, args[1:], stdout, stderr)
	default:
		fmt.Fprint(stderr, usage)
		return usageError("audit: unknown command %q (want verify, purge, export, checkpoint, prove, verify-proof or verify-receipt)", args[0])
	}
}

// openExistingLog opens the audit log named by PGXSAFETY_DATABASE_URL or
// the data directory, without creating or migrating it.
func (e environment) openExistingLog(ctx context.Context, dataDir string) (*sqlstore.Store, error) {
	return sqlstore.OpenWith(ctx, e.DatabaseURL, dataDir,
		sqlstore.Options{NoMigrate: true, MustExist: true})
}

// verifierFor returns the verifier key given by --key, or else the one of
// the log's key file (PGXSAFETY_AUDIT_KEY_FILE or the data directory): the
// public key file beside it, or the private key.
func (e environment) verifierFor(keyFlag, dataDir string) (*tlog.Verifier, error) {
	if keyFlag != "" {
		return loadVerifierKey(keyFlag)
	}
	path := e.logKeyPath(dataDir)
	if v, err := loadVerifierKey(path + ".pub"); err == nil {
		return v, nil
	}
	s, err := loadLogKey(path)
	if err != nil {
		return nil, err
	}
	return s.Verifier(), nil
}

// runAuditVerify recomputes the whole chain (from the retention checkpoint,
// if any) and the Merkle tree, checks the retention checkpoint's signature
// and every kept checkpoint, and exits non-zero naming what is wrong.
func runAuditVerify(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit verify", stderr, "audit verify [--checkpoint FILE]... [--no-witness] [--key VKEY|FILE] [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	var kept listFlag
	fs.Var(&kept, "checkpoint", "a signed checkpoint kept outside the database (repeatable); the log must extend it")
	keyFlag := fs.String("key", "", "the log's verifier key, or a file holding it (default: the key file of the data directory)")
	noWitness := fs.Bool("no-witness", false, "do not check the log against the configured witness (PGXSAFETY_AUDIT_WITNESS_FILE)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var msgs [][]byte
	for _, f := range kept {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("audit verify: %w", err)
		}
		msgs = append(msgs, b)
	}
	// The configured witness's checkpoint is checked like a kept one.
	witness := ""
	if !*noWitness {
		witness = env.witnessPath(*dataDir)
		b, err := os.ReadFile(witness)
		switch {
		case errors.Is(err, os.ErrNotExist):
			witness = ""
			fmt.Fprintf(stdout, "no witness checkpoint at %s (PGXSAFETY_AUDIT_WITNESS_FILE): the log is checked against the checkpoints given only\n", env.witnessPath(*dataDir))
		case err != nil:
			return fmt.Errorf("audit verify: witness: %w", err)
		case len(strings.TrimSpace(string(b))) == 0:
			return fmt.Errorf("audit verify: FAILED: the witness file %s (PGXSAFETY_AUDIT_WITNESS_FILE) is empty: its checkpoint was lost or cut (pass --no-witness to check without it)", witness)
		default:
			msgs = append(msgs, b)
		}
	}
	store, err := env.openExistingLog(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer store.Close()
	key, err := env.verifierFor(*keyFlag, *dataDir)
	if err != nil {
		return err
	}
	sum, err := audit.VerifyLog(ctx, store, audit.VerifyOptions{Key: key, Kept: msgs})
	if err != nil {
		if errors.Is(err, audit.ErrChainBroken) || errors.Is(err, tlog.ErrSignature) || errors.Is(err, tlog.ErrFormat) {
			return fmt.Errorf("audit verify: FAILED: %w", err)
		}
		return fmt.Errorf("audit verify: %w", err)
	}
	if cp := sum.Checkpoint; cp != nil {
		fmt.Fprintf(stdout, "retention checkpoint (signed): entries through sequence %d purged at %s (last purged entry %s, hash %s)\n",
			cp.ThroughSequence, cp.PurgedAt.Format(time.RFC3339), cp.ThroughTime.Format(time.RFC3339), cp.EntryHash)
	}
	if sum.Entries == 0 {
		fmt.Fprintf(stdout, "audit log verified: no entries; head hash %s\n", sum.HeadHash)
	} else {
		fmt.Fprintf(stdout, "audit log verified: %d entries, sequences %d to %d; head hash %s\n",
			sum.Entries, sum.FirstSequence, sum.LastSequence, sum.HeadHash)
	}
	fmt.Fprintf(stdout, "merkle tree: %d leaves, root %s (log %s)\n", sum.Size, base64.StdEncoding.EncodeToString(sum.Root[:]), key.Name())
	if witness != "" {
		fmt.Fprintf(stdout, "the log extends the witness's checkpoint (%s)\n", witness)
	}
	if len(kept) > 0 {
		fmt.Fprintf(stdout, "the log extends each of the %d checkpoints given\n", len(kept))
	} else if witness == "" {
		fmt.Fprintln(stdout, "keep signed checkpoints outside the database (GET /pgx/audit/checkpoint, the witness file, \"audit checkpoint\") and pass them with --checkpoint: a log that removed or rewrote entries does not extend them")
	}
	return nil
}

// runAuditPurge removes entries older than the retention period and
// records the checkpoint (what the serve background job does daily).
func runAuditPurge(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit purge", stderr, "audit purge [--retention-days N] [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	days := fs.Int("retention-days", env.AuditRetentionDays, "keep entries this many days (at least 365; env PGXSAFETY_AUDIT_RETENTION_DAYS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *days < defaultRetentionDays {
		return usageError("audit purge: --retention-days must be at least %d, got %d", defaultRetentionDays, *days)
	}
	signer, err := loadLogKey(env.logKeyPath(*dataDir))
	if err != nil {
		return err
	}
	store, err := sqlstore.OpenWith(ctx, env.DatabaseURL, *dataDir,
		sqlstore.Options{NoMigrate: true, MustExist: true, Signer: signer})
	if err != nil {
		return err
	}
	defer store.Close()
	cutoff := time.Now().Add(-time.Duration(*days) * 24 * time.Hour)
	res, err := store.Purge(ctx, cutoff)
	if err != nil {
		return err
	}
	if res.Removed == 0 {
		fmt.Fprintf(stdout, "nothing to purge: no entry before %s\n", cutoff.UTC().Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(stdout, "purged %d entries through sequence %d (older than %s); checkpoint recorded with hash %s\n",
		res.Removed, res.Checkpoint.ThroughSequence, cutoff.UTC().Format(time.RFC3339), res.Checkpoint.EntryHash)
	return nil
}

// parseTimeFlag accepts RFC 3339 or a date (midnight UTC).
func parseTimeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, usageError("%s %q is neither RFC 3339 (2025-06-01T08:30:00Z) nor a date (2025-06-01)", name, v)
}

// runAuditExport writes the entries with since <= time < until as JSON
// lines (audit.Entry; payloads base64), in sequence order.
func runAuditExport(ctx context.Context, env environment, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit export", stderr, "audit export [--since TIME] [--until TIME] [--output FILE] [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	sinceFlag := fs.String("since", "", "first time to export, inclusive (RFC 3339 or YYYY-MM-DD)")
	untilFlag := fs.String("until", "", "time to stop at, exclusive (RFC 3339 or YYYY-MM-DD)")
	output := fs.String("output", "", "write to this new file (mode 0600) instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	since, err := parseTimeFlag("--since", *sinceFlag)
	if err != nil {
		return err
	}
	until, err := parseTimeFlag("--until", *untilFlag)
	if err != nil {
		return err
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return usageError("audit export: --since must be before --until")
	}
	store, err := env.openExistingLog(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer store.Close()

	out := stdout
	var file *os.File
	if *output != "" {
		// The export holds clinical payloads: a new file, owner-only.
		file, err = os.OpenFile(*output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("audit export: %w", err)
		}
		defer file.Close()
		out = file
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	if err := store.EntriesBetween(ctx, since, until, func(e audit.Entry) error {
		n++
		return enc.Encode(e)
	}); err != nil {
		return fmt.Errorf("audit export: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("audit export: %w", err)
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return fmt.Errorf("audit export: %w", err)
		}
	}
	fmt.Fprintf(stderr, "exported %d entries\n", n)
	return nil
}
