// Command pgxsafety is the pharmacogenomic drug-safety service: it serves
// the REST API, answers one check offline, and validates the embedded
// knowledge. Run "pgxsafety help" for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "pgxsafety:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "pgxsafety:", err)
		os.Exit(1)
	}
}

// errUsage is the kind of every command-line error (exit status 2).
var errUsage = errors.New("usage error")

// usageError returns an error of kind errUsage with the given message.
func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

const usage = `pgxsafety: pharmacogenomic drug-safety service

Usage:
  pgxsafety serve [--addr ADDR] [--data-dir DIR]
        Serve the REST API (/pgx/*, /healthz, /readyz, /metrics). Every
        answer is written to the audit log before it is sent. /pgx/* needs
        a bearer ID token (except GET /pgx/version and /pgx/status).
  pgxsafety token [--subject NAME] [--ttl 1h] [--data-dir DIR]
        Print a local development ID token that "serve" accepts when no
        PGXSAFETY_OIDC_ISSUER is configured (key kept in the data dir).
  pgxsafety audit verify [--checkpoint FILE]... [--key VKEY|FILE] [--data-dir DIR]
        Recompute the audit hash chain and Merkle tree, check the signed
        retention checkpoint and every checkpoint given (kept outside the
        database); exit status 1 naming what does not match.
  pgxsafety audit purge [--retention-days 365] [--data-dir DIR]
        Remove entries older than the retention period, leaving a signed
        checkpoint so that verify still checks what remains.
  pgxsafety audit checkpoint [--data-dir DIR]
        Print a signed checkpoint of the audit log now.
  pgxsafety audit prove (--id AUDIT_LOG_ID | --from-checkpoint FILE) [--checkpoint FILE]
        Write an inclusion proof of one entry (with the entry) or a
        consistency proof from an older checkpoint, as JSON.
  pgxsafety audit verify-proof --key VKEY|FILE --proof FILE [--checkpoint FILE]
        Check a proof offline, with nothing but the proof, the log's
        public key and (optionally) a checkpoint kept earlier.
  pgxsafety audit verify-receipt RECEIPT|FILE [--key VKEY|FILE] [--data-dir DIR]
        Check an answer's receipt (its Pgxsafety-Receipt header) against
        the log: the entry is in it, or FAILED proving its omission.
  pgxsafety audit export [--since TIME] [--until TIME] [--output FILE]
        Write audit entries as JSON lines.
  pgxsafety witness init --name NAME --log VKEY --key FILE --state FILE
  pgxsafety witness serve --key FILE --state FILE [--addr ADDR]
        A minimal C2SP tlog-witness for the audit log (POST /add-checkpoint):
        run it where the database owner cannot write; serve sends it every
        checkpoint when PGXSAFETY_AUDIT_WITNESS_URL and _KEY are set.
  pgxsafety migrate [--data-dir DIR]
        Apply pending audit-store migrations.
  pgxsafety check --drug DRUG [genotype and context flags] [--json]
        Evaluate one drug-safety check offline against the embedded
        knowledge and print the result. Nothing is audited: the answer
        stays on this machine. "pgxsafety check -h" lists the flags.
  pgxsafety classify --gene GENE (--protein-change CHANGE | --variant RSID) [--json]
        Classify one missense substitution of a substrate protein offline
        (tier and the four methods, as POST /classifier_v2/classify);
        --demo CASE runs a demonstration case. Nothing is audited.
  pgxsafety batch FILE.csv [--out FILE] [--format json|ndjson]
        Evaluate every row of a lab CSV offline (as POST /pgx/batch_csv)
        with a progress display on stderr and a summary at the end.
  pgxsafety call FILE.vcf[.gz] [--sample S]... [--drug D]... [--out FILE] [--format json|ndjson]
        Call the pharmacogenes of every sample of a GRCh38 VCF offline (as
        POST /pgx/vcf) with a progress display on stderr.
  pgxsafety knowledge validate [--dir DIR]
        Validate the embedded knowledge (or the knowledge files in DIR) and
        print every problem; exit status 1 when there is any.
  pgxsafety knowledge stats [--json]
        Print the size of the embedded knowledge and the rows citing each
        source.
  pgxsafety bench [--conns 1,8,32,128] [--duration 2s] [--csv-rows 100000] [--vcf FILE]
        Start the real server on loopback with a temporary data directory
        and measure it against a bare net/http handler: /pgx/check (SQLite
        and, with a postgres:// PGXSAFETY_DATABASE_URL, PostgreSQL), CDS
        order-sign, /pgx/vcf, /pgx/batch_csv (docs/performance.md).
  pgxsafety healthcheck [--url URL]
        Probe a running server's /readyz (default: at PGXSAFETY_ADDR, an
        unspecified host probed on loopback); exit status 0 when it
        answers 200 (the container image's HEALTHCHECK).
  pgxsafety version
        Print the engine, API, knowledge and Go versions.
  pgxsafety help
        Print this text.

Environment (flags override; see README.md for the full list):
  PGXSAFETY_ADDR                  listen address (default 127.0.0.1:8080)
  PGXSAFETY_DATA_DIR              data directory (default ./pgxsafety-data)
  PGXSAFETY_DATABASE_URL          audit database (default: SQLite audit.db in the
                                  data directory; "sqlite:PATH"; "postgres://...")
  PGXSAFETY_OIDC_ISSUER           OpenID Connect issuer (unset: local development mode)
  PGXSAFETY_OIDC_AUDIENCE         client id the ID tokens must be issued to
  PGXSAFETY_REDIS_URL             share rate limits and SMART sessions between replicas
  PGXSAFETY_RATE_LIMIT_PER_MINUTE per-user limit (default 60)
  PGXSAFETY_CORS_ORIGINS          allowed browser origins (default: CORS off)
  PGXSAFETY_BATCH_CSV_MAX_BYTES   largest POST /pgx/batch_csv file (default 52428800)
  PGXSAFETY_BATCH_CSV_MAX_ROWS    most data rows per CSV batch (default 100000)
  PGXSAFETY_VCF_MAX_BYTES         largest POST /pgx/vcf file (default 209715200)
  PGXSAFETY_VCF_MIN_GQ            VCF genotype quality below which a position is a
                                  no-call (default 20; 0: no threshold)
  PGXSAFETY_VCF_MIN_DP            VCF read depth (a gVCF block's MIN_DP) below which
                                  a position is a no-call (default 10; 0: no threshold)
  PGXSAFETY_LOG_LEVEL             debug, info, warn or error (default info)
`

// run executes the command line args (without the program name), writing
// output to stdout and diagnostics to stderr. It returns when the command
// is done or, for serve, when ctx is cancelled and the server has shut
// down.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError("no subcommand given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, stderr)
	case "token":
		return runToken(rest, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "witness":
		return runWitness(ctx, rest, stdout, stderr)
	case "check":
		return runCheck(rest, stdout, stderr)
	case "classify":
		return runClassify(rest, stdout, stderr)
	case "batch":
		return runBatch(ctx, rest, stdout, stderr)
	case "call":
		return runCall(ctx, rest, stdout, stderr)
	case "knowledge":
		return runKnowledge(rest, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, rest, stdout, stderr)
	case "version":
		return runVersion(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return usageError("unknown subcommand %q", cmd)
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting
// and prints its usage to stderr.
func newFlagSet(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: pgxsafety %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs and rejects positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
