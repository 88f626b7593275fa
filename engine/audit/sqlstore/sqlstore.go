// Package sqlstore stores the audit log (package audit) in a SQL database
// through sqlx, with one implementation for two dialects: SQLite
// (modernc.org/sqlite, WAL mode, synchronous FULL) in the data directory is
// the embedded default; PostgreSQL (jackc/pgx/v5 through its database/sql
// driver "pgx") is used when the database URL is a postgres URL.
//
// The schema is created by migrations embedded per dialect
// (migrations/<dialect>/NNNN_name.sql), recorded in schema_migrations and
// applied in order; applying them again is a no-op. Triggers reject every
// UPDATE of audit_log and every DELETE except the retention purge: a row may
// be deleted only when a retention checkpoint covers it, and the database
// accepts a checkpoint only for entries older than 365 days whose hash it
// names correctly (see Purge and docs/operations.md).
//
// Appends use group commit: one writer goroutine takes every entry queued
// while the previous transaction was committing and writes them in one
// transaction; each caller gets its entry back only after that transaction
// has committed.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/pgxsafety/pgxsafety/engine/audit"
	"github.com/pgxsafety/pgxsafety/engine/audit/tlog"
)

// ErrConfig is the kind of every error caused by the database
// configuration (the URL or the data directory) rather than by the
// database itself.
var ErrConfig = errors.New("invalid audit store configuration")

// ErrNotFound is returned by Entry when no entry has the id.
var ErrNotFound = errors.New("audit entry not found")

// ErrClosed is returned (wrapped with audit.ErrUnavailable) by Append after
// Close.
var ErrClosed = errors.New("audit store closed")

// ErrNoLog is returned when Options.MustExist is set and the SQLite file
// does not exist.
var ErrNoLog = errors.New("no audit log")

// ErrSchema is returned when the database schema is not the one this build
// expects (migrations pending, or the database is newer than the build).
var ErrSchema = errors.New("audit store schema is not current")

// DBFileName is the name of the SQLite file in the data directory.
const DBFileName = "audit.db"

// acceptedForms names the database URLs Open accepts, for error messages.
const acceptedForms = `accepted forms are "" (SQLite file ` + DBFileName + ` in the data directory), ` +
	`"sqlite:PATH" or "sqlite:///ABSOLUTE/PATH" (SQLite file at PATH) and ` +
	`"postgres://USER@HOST:PORT/DATABASE?sslmode=..." (PostgreSQL; "postgresql://" also accepted)`

// Defaults of Options.
const (
	DefaultMaxBatch      = 256
	DefaultQueueSize     = 4096
	DefaultCommitTimeout = 5 * time.Second
	DefaultBusyTimeout   = 5 * time.Second
)

// MinRetention is the shortest retention the store accepts: the spec keeps
// every entry 365 days, and the database triggers enforce the same floor.
const MinRetention = audit.MinRetention

// CommitStats describes one group-commit transaction, for metrics.
type CommitStats struct {
	// Entries is the number of entries in the transaction.
	Entries int
	// Duration is the time from BEGIN to the end of COMMIT (or failure).
	Duration time.Duration
	// Err is nil when the transaction committed.
	Err error
}

// Options tunes a Store. The zero value is the production default:
// payloads stored, migrations applied on open.
type Options struct {
	// OmitPayloads stores only the request and response digests, not the
	// payloads. By default the payloads are stored, since the log must
	// prove what advice was given (see docs/operations.md for the PHI
	// implications).
	OmitPayloads bool
	// NoMigrate makes Open refuse a database whose schema is not current
	// instead of migrating it (run "pgxsafety migrate" first).
	NoMigrate bool
	// MustExist makes Open fail with ErrNoLog instead of creating a
	// SQLite file that does not exist (for commands that only read or
	// purge the log).
	MustExist bool
	// MaxBatch caps the entries of one transaction (DefaultMaxBatch).
	MaxBatch int
	// CommitWindow, when positive, lets a busy writer wait up to this long
	// for more entries before it commits a batch: only when the batch
	// found more than one entry already queued, so a lone append (an idle
	// service) never waits. Every entry is still committed before its
	// Append returns. Zero commits at once (batches then grow only while
	// a commit is in flight).
	CommitWindow time.Duration
	// QueueSize is the number of entries that may wait for the writer
	// (DefaultQueueSize); Append blocks (until its context ends) when the
	// queue is full.
	QueueSize int
	// CommitTimeout bounds one group-commit transaction
	// (DefaultCommitTimeout). When it expires the batch fails: its
	// callers get errors and must not release their answers.
	CommitTimeout time.Duration
	// BusyTimeout is how long SQLite waits for a lock held by another
	// connection (DefaultBusyTimeout). Ignored for PostgreSQL.
	BusyTimeout time.Duration
	// OnCommit, when set, is called by the writer after every
	// transaction (for metrics). It must not block.
	OnCommit func(CommitStats)
	// Now is the clock recorded in schema_migrations and checkpoints
	// (time.Now when nil). Entry times come from the entries themselves.
	Now func() time.Time
	// Signer is the log's key: Purge signs its retention checkpoint with
	// it, and refuses to run without it. It is kept outside the database
	// (docs/operations.md).
	Signer *tlog.Signer
}

// dialect is everything that differs between SQL backends.
type dialect struct {
	// name is the backend name reported by Backend.
	name string
	// driver is the database/sql driver name.
	driver string
	// bindType is the sqlx bind variable style; queries are written with
	// "?" and rebound.
	bindType int
	// migrations is the directory of the dialect's migrations in
	// migrationsFS.
	migrations string
	// lockForWrite is executed first in every append, purge and migration
	// transaction to serialise writers across processes; empty when
	// beginning the transaction already does (SQLite with
	// _txlock=immediate).
	lockForWrite string
	// lockForMigrate is executed first in every migration transaction.
	lockForMigrate string
	// committedAt is the SQL expression an append inserts into
	// audit_log.committed_at (the database clock); empty when a trigger
	// sets it (PostgreSQL).
	committedAt string
	// dbNow is a query returning the database clock as RFC 3339 text in
	// UTC.
	dbNow string
}

var sqliteDialect = dialect{
	name:        "sqlite",
	driver:      "sqlite",
	bindType:    sqlx.QUESTION,
	migrations:  "migrations/sqlite",
	committedAt: `strftime('%Y-%m-%dT%H:%M:%SZ', 'now')`,
	dbNow:       `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
}

var postgresDialect = dialect{
	name:       "postgres",
	driver:     "pgx",
	bindType:   sqlx.DOLLAR,
	migrations: "migrations/postgres",
	// A transaction-scoped advisory lock serialises appenders and purges
	// of every replica; readers (verify, export) do not take it. Unlike
	// LOCK TABLE ... EXCLUSIVE it needs no UPDATE or DELETE privilege, so
	// the service role keeps INSERT and SELECT only. The key is fixed per
	// schema (an arbitrary constant mixed with the schema's name): the
	// writers of one log share it, and logs in other schemas of the same
	// database (the tests' fresh schemas, several deployments) do not wait
	// for each other.
	lockForWrite: `SELECT pg_advisory_xact_lock(7262731205140330 # hashtext(coalesce(current_schema(), ''))::bigint)`,
	// A transaction-scoped advisory lock serialises the migrations of
	// replicas starting at the same time, per schema as above.
	lockForMigrate: `SELECT pg_advisory_xact_lock(7262731205140329 # hashtext(coalesce(current_schema(), ''))::bigint)`,
	dbNow:          `SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
}

// Store is an audit log in a SQL database. It implements audit.Appender,
// audit.Reader and audit.CheckpointReader and is safe for concurrent use.
type Store struct {
	db       *sqlx.DB
	d        dialect
	location string
	opts     Options

	queue   chan *pending
	stopped chan struct{} // closed when the writer has drained the queue
	// inserts are the prepared INSERTs of n entries, by n (at most
	// MaxBatch of them). Only the writer goroutine uses them.
	inserts map[int]*sql.Stmt
	// pgInserts are the texts of the PostgreSQL INSERTs of n entries, by n
	// (appendPgx). Only the writer goroutine uses them.
	pgInserts map[int]string
	// headStmt reads the chain head (head); prepared by the writer.
	headStmt *sqlx.Stmt
	// wconn is the SQLite writer's own connection, with temp_store MEMORY:
	// an append's statement journal (SQLite keeps one for a multi-row
	// INSERT that fires triggers) stays in memory instead of spilling to
	// a temporary file past 64 KiB, which a batch of a dozen check
	// entries does. It is bounded by one batch; the other connections
	// (reads, and the purge, whose DELETE can journal most of the log)
	// keep the default. Only the writer goroutine uses it; a connection
	// that fails to begin a transaction is replaced.
	wconn *sqlx.Conn

	// closeMu guards closed and the sends on queue: Close takes it for
	// writing, so no Append sends on a closed channel.
	closeMu   sync.RWMutex
	closed    bool
	closeOnce sync.Once
	closeErr  error

	health health
}

var (
	_ audit.Appender         = (*Store)(nil)
	_ audit.Reader           = (*Store)(nil)
	_ audit.CheckpointReader = (*Store)(nil)
	_ audit.LeafReader       = (*Store)(nil)
)

// Open opens (creating and migrating when needed) the audit store with the
// default Options. See OpenWith.
func Open(ctx context.Context, databaseURL, dataDir string) (*Store, error) {
	return OpenWith(ctx, databaseURL, dataDir, Options{})
}

// OpenWith opens the audit store and starts its writer.
//
// databaseURL selects the backend: empty means the SQLite file audit.db in
// dataDir (created with mode 0700 when missing); "sqlite:PATH" names
// another SQLite file; "postgres://..." or "postgresql://..." is a
// PostgreSQL connection URL (any pgx connection parameter, such as
// sslmode or search_path, may be given in its query). Anything else is
// rejected with an error wrapping ErrConfig that names the accepted forms;
// the URL itself is never echoed, since it may hold a password.
func OpenWith(ctx context.Context, databaseURL, dataDir string, opts Options) (*Store, error) {
	s, err := openDB(ctx, databaseURL, dataDir, opts)
	if err != nil {
		return nil, err
	}
	if s.opts.NoMigrate {
		err = s.checkSchema(ctx)
	} else {
		_, err = s.Migrate(ctx)
	}
	if err == nil {
		err = s.restrictFile()
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	s.queue = make(chan *pending, s.opts.QueueSize)
	s.stopped = make(chan struct{})
	go s.writer()
	return s, nil
}

// MigrateDatabase applies the pending migrations of the database named by
// databaseURL and dataDir (as for Open) and reports the schema version; it
// starts no writer. It is what "pgxsafety migrate" runs.
func MigrateDatabase(ctx context.Context, databaseURL, dataDir string, opts Options) (MigrationStatus, error) {
	s, err := openDB(ctx, databaseURL, dataDir, opts)
	if err != nil {
		return MigrationStatus{}, err
	}
	defer s.db.Close()
	st, err := s.Migrate(ctx)
	if err != nil {
		return st, err
	}
	return st, s.restrictFile()
}

// openDB resolves the configuration, opens the database and checks that
// it answers. The returned Store has no writer.
func openDB(ctx context.Context, databaseURL, dataDir string, opts Options) (*Store, error) {
	d, target, err := resolve(databaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	s := &Store{d: d, opts: withDefaults(opts)}
	switch d.name {
	case "sqlite":
		if s.opts.MustExist {
			if _, err := os.Stat(target); err != nil {
				return nil, fmt.Errorf("%w at %s", ErrNoLog, target)
			}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return nil, fmt.Errorf("audit store: create directory: %w", err)
		}
		// Create the file owner-only before SQLite opens it: SQLite gives
		// its -wal and -shm files the database file's permissions.
		if f, err := os.OpenFile(target, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("audit store: create %s: %w", target, err)
		}
		s.location = target
		s.db, err = sqlx.Open(d.driver, target+"?"+sqlitePragmas(s.opts.BusyTimeout))
	case "postgres":
		s.location = "postgres"
		s.db, err = sqlx.Open(d.driver, target)
		if err == nil {
			s.db.SetMaxOpenConns(8)
			s.db.SetMaxIdleConns(4)
			s.db.SetConnMaxIdleTime(5 * time.Minute)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("audit store: open %s: %w", s.location, redactErr(err))
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("audit store: open %s: %w", s.location, redactErr(err))
	}
	return s, nil
}

// restrictFile makes the SQLite file and its -wal and -shm companions
// readable by the service's user only: the log holds clinical requests.
func (s *Store) restrictFile() error {
	if s.d.name != "sqlite" {
		return nil
	}
	if err := os.Chmod(s.location, 0o600); err != nil {
		return fmt.Errorf("audit store: %w", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(s.location+suffix, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("audit store: %w", err)
		}
	}
	return nil
}

func withDefaults(o Options) Options {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = DefaultCommitTimeout
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// sqlitePragmas are applied to every SQLite connection. busy_timeout makes
// concurrent writers wait instead of failing; WAL lets readers run beside
// the writer; synchronous FULL makes a committed entry durable; immediate
// transactions take the write lock at BEGIN so the read of the chain head
// and the insert cannot interleave with another process.
func sqlitePragmas(busy time.Duration) string {
	return "_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"
}

// resolve maps the configuration to a dialect and a SQLite file path or a
// PostgreSQL connection string.
func resolve(databaseURL, dataDir string) (dialect, string, error) {
	u := strings.TrimSpace(databaseURL)
	var file string
	switch {
	case u == "":
		if strings.TrimSpace(dataDir) == "" {
			return dialect{}, "", fmt.Errorf("%w: no database URL and no data directory", ErrConfig)
		}
		file = filepath.Join(dataDir, DBFileName)
	case strings.HasPrefix(u, "sqlite:"):
		file = strings.TrimPrefix(u, "sqlite:")
		file = strings.TrimPrefix(file, "//")
		if file == "" {
			return dialect{}, "", fmt.Errorf("%w: sqlite URL without a path; %s", ErrConfig, acceptedForms)
		}
	case strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://"):
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" && pu.Query().Get("host") == "" {
			// url.Parse errors quote the URL: never pass them on.
			return dialect{}, "", fmt.Errorf("%w: the PostgreSQL URL does not parse or names no host; %s", ErrConfig, acceptedForms)
		}
		return postgresDialect, u, nil
	default:
		scheme := "unrecognised"
		if i := strings.Index(u, ":"); i > 0 && !strings.ContainsAny(u[:i], "/@?#") {
			scheme = strconv.Quote(u[:i])
		}
		return dialect{}, "", fmt.Errorf("%w: database URL scheme %s is not supported; %s",
			ErrConfig, scheme, acceptedForms)
	}
	if strings.ContainsAny(file, "?#") {
		return dialect{}, "", fmt.Errorf("%w: SQLite path must not contain '?' or '#'", ErrConfig)
	}
	return sqliteDialect, file, nil
}

// redactErr hides connection strings that a driver error might quote.
// pgx's connect errors name host, user and database but never the
// password; parse errors of a connection string may quote it, so they are
// replaced.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "postgres://") || strings.Contains(msg, "postgresql://") || strings.Contains(msg, "password=") {
		return errors.New("cannot connect (the driver's message quotes the connection string and is withheld)")
	}
	return err
}

// Backend names the backend: "sqlite" or "postgres".
func (s *Store) Backend() string { return s.d.name }

// Location is where the log is kept: the SQLite file path, or "postgres"
// (the connection URL is never reported).
func (s *Store) Location() string { return s.location }

// Ping reports whether the database answers and its schema is current.
func (s *Store) Ping(ctx context.Context) (err error) {
	if err := s.faulted(); err != nil {
		return err
	}
	defer s.guard(&err)()
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("audit store: %w", redactErr(err))
	}
	return s.checkSchema(ctx)
}

// Close stops accepting entries, waits until every queued entry is
// committed (or has failed), and closes the database. Appends after Close
// fail with an error wrapping ErrClosed. Close is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeMu.Lock()
		s.closed = true
		close(s.queue)
		s.closeMu.Unlock()
		<-s.stopped
		if s.faulted() != nil {
			// The connections may be inside a broken mapping: leave them
			// to the process's exit.
			return
		}
		func() {
			defer s.guard(&s.closeErr)()
			s.closeErr = s.db.Close()
		}()
	})
	return s.closeErr
}

func (s *Store) q(query string) string { return sqlx.Rebind(s.d.bindType, query) }

// storedTimeFormat is the layout of the time column: fixed width, so that
// text order is time order (range queries and the retention trigger
// compare the text). It parses back with audit.TimeFormat.
const storedTimeFormat = "2006-01-02T15:04:05.000000000Z"

func formatStoredTime(t time.Time) string { return t.UTC().Format(storedTimeFormat) }
