// Package sqlstore stores the audit log (package audit) in a SQL database
// through sqlx. SQLite (modernc.org/sqlite, WAL mode) in the data directory
// is the embedded default. The code is organised around a dialect so that a
// PostgreSQL backend is a new dialect value plus its migrations; until it
// exists, Open rejects every URL that is not SQLite with ErrConfig.
//
// The schema is created by migrations embedded per dialect
// (migrations/<dialect>/NNNN_name.sql), recorded in schema_migrations and
// applied in order; applying them again is a no-op. Triggers reject every
// UPDATE and DELETE of audit_log.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

//go:embed migrations
var migrationsFS embed.FS

// ErrConfig is the kind of every error caused by the database
// configuration (the URL or the data directory) rather than by the
// database itself.
var ErrConfig = errors.New("invalid audit store configuration")

// ErrNotFound is returned by Entry when no entry has the id.
var ErrNotFound = errors.New("audit entry not found")

// DBFileName is the name of the SQLite file in the data directory.
const DBFileName = "audit.db"

// acceptedForms names the database URLs Open accepts, for error messages.
const acceptedForms = `accepted forms are "" (SQLite file ` + DBFileName + ` in the data directory) ` +
	`and "sqlite:PATH" or "sqlite:///ABSOLUTE/PATH" (SQLite file at PATH)`

// dialect is everything that differs between SQL backends.
type dialect struct {
	// name is the backend name reported by Backend ("sqlite").
	name string
	// driver is the database/sql driver name.
	driver string
	// bindType is the sqlx bind variable style; queries are written with
	// "?" and rebound.
	bindType int
	// migrations is the directory of the dialect's migrations in
	// migrationsFS.
	migrations string
	// lockForAppend is executed first in every append transaction to
	// serialise writers across processes; empty when beginning the
	// transaction already does (SQLite with _txlock=immediate).
	lockForAppend string
}

var sqliteDialect = dialect{
	name:       "sqlite",
	driver:     "sqlite",
	bindType:   sqlx.QUESTION,
	migrations: "migrations/sqlite",
}

// sqlitePragmas are applied to every SQLite connection. busy_timeout makes
// concurrent writers wait instead of failing; WAL lets readers run beside
// the writer; synchronous FULL makes a committed entry durable; immediate
// transactions take the write lock at BEGIN so the read of the chain head
// and the insert cannot interleave with another process.
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)" +
	"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_txlock=immediate"

// Store is an audit log in a SQL database. It implements audit.Appender
// and audit.Reader and is safe for concurrent use.
type Store struct {
	db       *sqlx.DB
	d        dialect
	location string

	// mu serialises appends within the process: each append reads the
	// chain head and inserts the next entry in one transaction.
	mu sync.Mutex
}

var (
	_ audit.Appender = (*Store)(nil)
	_ audit.Reader   = (*Store)(nil)
)

// Open opens (creating and migrating when needed) the audit store.
//
// databaseURL selects the backend: empty means the SQLite file audit.db in
// dataDir (created with mode 0700 when missing); "sqlite:PATH" names
// another SQLite file. Any other URL is rejected with an error wrapping
// ErrConfig that names the accepted forms; the URL itself is never echoed,
// since it may hold a password.
func Open(ctx context.Context, databaseURL, dataDir string) (*Store, error) {
	d, file, err := resolve(databaseURL, dataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("audit store: create directory: %w", err)
	}
	db, err := sqlx.Open(d.driver, file+"?"+sqlitePragmas)
	if err != nil {
		return nil, fmt.Errorf("audit store: open %s: %w", file, err)
	}
	s := &Store{db: db, d: d, location: file}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("audit store: open %s: %w", s.location, err)
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	// The log holds clinical requests: only the service's user may read it.
	if err := os.Chmod(s.location, 0o600); err != nil {
		return fmt.Errorf("audit store: %w", err)
	}
	return nil
}

// resolve maps the configuration to a dialect and a SQLite file path.
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
	default:
		scheme := "unrecognised"
		if i := strings.Index(u, ":"); i > 0 && !strings.ContainsAny(u[:i], "/@?#") {
			scheme = strconv.Quote(u[:i])
		}
		return dialect{}, "", fmt.Errorf("%w: database URL scheme %s is not supported by this build; %s",
			ErrConfig, scheme, acceptedForms)
	}
	if strings.ContainsAny(file, "?#") {
		return dialect{}, "", fmt.Errorf("%w: SQLite path must not contain '?' or '#'", ErrConfig)
	}
	return sqliteDialect, file, nil
}

// Backend names the backend ("sqlite").
func (s *Store) Backend() string { return s.d.name }

// Location is where the log is kept: the SQLite file path.
func (s *Store) Location() string { return s.location }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("audit store: %w", err)
	}
	return nil
}

// Close closes the database. Appends after Close fail.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) q(query string) string { return sqlx.Rebind(s.d.bindType, query) }

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(dir string) ([]migration, error) {
	ents, err := fs.ReadDir(migrationsFS, dir)
	if err != nil {
		return nil, fmt.Errorf("audit store: migrations: %w", err)
	}
	var ms []migration
	for _, ent := range ents {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("audit store: migration %s: name must be NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(migrationsFS, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("audit store: migration %s: %w", name, err)
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(name, ".sql"), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("audit store: migrations %s and %s share version %d", ms[i-1].name, ms[i].name, ms[i].version)
		}
	}
	return ms, nil
}

// migrate applies every embedded migration not yet recorded in
// schema_migrations, in version order, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations(s.d.migrations)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)`); err != nil {
		return fmt.Errorf("audit store: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		if err := s.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit store: migration %s: %w", m.name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version); err != nil {
		return fmt.Errorf("audit store: migration %s: %w", m.name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("audit store: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
		m.version, m.name, time.Now().UTC().Format(audit.TimeFormat)); err != nil {
		return fmt.Errorf("audit store: migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit store: migration %s: %w", m.name, err)
	}
	return nil
}

// row is one audit_log row.
type row struct {
	Seq              int64  `db:"seq"`
	ID               string `db:"id"`
	Time             string `db:"time"`
	PrincipalSubject string `db:"principal_subject"`
	PrincipalIssuer  string `db:"principal_issuer"`
	PrincipalName    string `db:"principal_name"`
	PrincipalEmail   string `db:"principal_email"`
	Endpoint         string `db:"endpoint"`
	RequestID        string `db:"request_id"`
	KnowledgeVersion string `db:"knowledge_version"`
	RequestDigest    string `db:"request_digest"`
	ResponseDigest   string `db:"response_digest"`
	Request          []byte `db:"request"`
	Response         []byte `db:"response"`
	PrevHash         string `db:"prev_hash"`
	EntryHash        string `db:"entry_hash"`
}

const columns = `seq, id, time, principal_subject, principal_issuer, principal_name, principal_email,
    endpoint, request_id, knowledge_version, request_digest, response_digest, request, response,
    prev_hash, entry_hash`

func (r row) entry() (audit.Entry, error) {
	t, err := time.Parse(audit.TimeFormat, r.Time)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: entry %d: bad time %q: %w", r.Seq, r.Time, err)
	}
	return audit.Entry{
		ID:       r.ID,
		Sequence: r.Seq,
		Time:     t.UTC(),
		Principal: audit.Principal{
			Subject: r.PrincipalSubject,
			Issuer:  r.PrincipalIssuer,
			Name:    r.PrincipalName,
			Email:   r.PrincipalEmail,
		},
		Endpoint:         r.Endpoint,
		RequestID:        r.RequestID,
		KnowledgeVersion: r.KnowledgeVersion,
		RequestDigest:    r.RequestDigest,
		ResponseDigest:   r.ResponseDigest,
		Request:          nilIfEmpty(r.Request),
		Response:         nilIfEmpty(r.Response),
		PrevHash:         r.PrevHash,
		EntryHash:        r.EntryHash,
	}, nil
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Append assigns e its ID, Sequence, PrevHash and EntryHash, stores it and
// returns it once the transaction has committed (durable: SQLite runs with
// synchronous FULL). e.Time must be set: the log records the service's
// clock, not the store's. Appends are serialised; each is one transaction.
func (s *Store) Append(ctx context.Context, e audit.Entry) (audit.Entry, error) {
	if e.Time.IsZero() {
		return audit.Entry{}, errors.New("audit store: entry has no time")
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: append: %w", err)
	}
	defer tx.Rollback()
	if s.d.lockForAppend != "" {
		if _, err := tx.ExecContext(ctx, s.d.lockForAppend); err != nil {
			return audit.Entry{}, fmt.Errorf("audit store: append: lock: %w", err)
		}
	}

	var head struct {
		Seq  int64  `db:"seq"`
		Hash string `db:"entry_hash"`
	}
	err = tx.GetContext(ctx, &head, `SELECT seq, entry_hash FROM audit_log ORDER BY seq DESC LIMIT 1`)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		head.Seq, head.Hash = 0, audit.GenesisHash
	case err != nil:
		return audit.Entry{}, fmt.Errorf("audit store: append: read chain head: %w", err)
	}

	id, err := newID(e.Time)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: append: %w", err)
	}
	e.ID = id
	e.Sequence = head.Seq + 1
	e.Time = e.Time.UTC()
	e.Request = nilIfEmpty(e.Request)
	e.Response = nilIfEmpty(e.Response)
	e.PrevHash = head.Hash
	e.EntryHash = audit.Hash(e.PrevHash, e)

	_, err = tx.ExecContext(ctx, s.q(`INSERT INTO audit_log (`+columns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		e.Sequence, e.ID, e.Time.Format(audit.TimeFormat),
		e.Principal.Subject, e.Principal.Issuer, e.Principal.Name, e.Principal.Email,
		e.Endpoint, e.RequestID, e.KnowledgeVersion, e.RequestDigest, e.ResponseDigest,
		e.Request, e.Response, e.PrevHash, e.EntryHash)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: append: insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: append: commit: %w", err)
	}
	return e, nil
}

// Entries calls fn for every entry with Sequence >= from, in sequence
// order. It stops at, and returns, the first error of fn.
func (s *Store) Entries(ctx context.Context, from int64, fn func(audit.Entry) error) error {
	rows, err := s.db.QueryxContext(ctx, s.q(`SELECT `+columns+` FROM audit_log WHERE seq >= ? ORDER BY seq`), from)
	if err != nil {
		return fmt.Errorf("audit store: read: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r row
		if err := rows.StructScan(&r); err != nil {
			return fmt.Errorf("audit store: read: %w", err)
		}
		e, err := r.entry()
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit store: read: %w", err)
	}
	return nil
}

// Entry returns the entry with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Entry(ctx context.Context, id string) (audit.Entry, error) {
	var r row
	err := s.db.GetContext(ctx, &r, s.q(`SELECT `+columns+` FROM audit_log WHERE id = ?`), id)
	if errors.Is(err, sql.ErrNoRows) {
		return audit.Entry{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit store: read: %w", err)
	}
	return r.entry()
}

// idPrefix starts every audit entry id.
const idPrefix = "aud_"

// crockford is the Crockford base-32 alphabet (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newID returns "aud_" followed by 26 Crockford base-32 characters of a
// 128-bit value: the 48-bit Unix millisecond time of t (so ids sort
// roughly by time) and 80 bits from crypto/rand (so ids never collide,
// even under a fixed clock).
func newID(t time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[6:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	ms &= 1<<48 - 1
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return idPrefix + string(out[:]), nil
}
