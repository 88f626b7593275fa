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
        Serve the REST API (/pgx/*, /healthz, /readyz). Every answer of
        POST /pgx/check is written to the audit log before it is sent.
  pgxsafety check --drug DRUG [genotype and context flags] [--json]
        Evaluate one drug-safety check offline against the embedded
        knowledge and print the result. Nothing is audited: the answer
        stays on this machine. "pgxsafety check -h" lists the flags.
  pgxsafety knowledge validate [--dir DIR]
        Validate the embedded knowledge (or the knowledge files in DIR) and
        print every problem; exit status 1 when there is any.
  pgxsafety knowledge stats [--json]
        Print the size of the embedded knowledge and the rows citing each
        source.
  pgxsafety version
        Print the engine, API, knowledge and Go versions.
  pgxsafety help
        Print this text.

Environment (flags override):
  PGXSAFETY_ADDR                  listen address (default 127.0.0.1:8080)
  PGXSAFETY_DATA_DIR              data directory (default ./pgxsafety-data)
  PGXSAFETY_DATABASE_URL          audit database (default: SQLite audit.db in the
                                  data directory; "sqlite:PATH" for another file)
  PGXSAFETY_RATE_LIMIT_PER_MINUTE per-user limit reported by /pgx/version (default 60)
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
	case "check":
		return runCheck(rest, stdout, stderr)
	case "knowledge":
		return runKnowledge(rest, stdout, stderr)
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
