package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pgxsafety/pgxsafety/engine/audit"
)

//go:embed migrations
var migrationsFS embed.FS

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

// MigrationStatus reports the schema version of a database.
type MigrationStatus struct {
	// Applied lists the names of the migrations this call applied.
	Applied []string
	// Version is the schema version after the call.
	Version int
	// Latest is the newest migration this build knows.
	Latest int
}

const createSchemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)`

// Migrate applies every embedded migration not yet recorded in
// schema_migrations, in version order, each in its own transaction (which,
// on PostgreSQL, first takes an advisory lock, so replicas starting
// together do not race). Open calls it unless Options.NoMigrate is set.
func (s *Store) Migrate(ctx context.Context) (MigrationStatus, error) {
	ms, err := loadMigrations(s.d.migrations)
	if err != nil {
		return MigrationStatus{}, err
	}
	st := MigrationStatus{Latest: latest(ms)}
	if err := s.inMigrationTx(ctx, "schema_migrations", func(tx execer) error {
		_, err := tx.ExecContext(ctx, createSchemaMigrations)
		return err
	}); err != nil {
		return st, err
	}
	for _, m := range ms {
		applied := false
		err := s.inMigrationTx(ctx, m.name, func(tx execer) error {
			var n int
			if err := tx.GetContext(ctx, &n, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
				m.version, m.name, s.opts.Now().UTC().Format(audit.TimeFormat)); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return st, err
		}
		if applied {
			st.Applied = append(st.Applied, m.name)
		}
	}
	st.Version, err = s.schemaVersion(ctx)
	if err != nil {
		return st, err
	}
	if st.Version != st.Latest {
		return st, fmt.Errorf("%w: database is at version %d, this build at %d", ErrSchema, st.Version, st.Latest)
	}
	return st, nil
}

func latest(ms []migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// execer is what a migration step needs of a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

func (s *Store) inMigrationTx(ctx context.Context, name string, fn func(execer) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit store: migration %s: %w", name, redactErr(err))
	}
	defer tx.Rollback()
	if s.d.lockForMigrate != "" {
		if _, err := tx.ExecContext(ctx, s.d.lockForMigrate); err != nil {
			return fmt.Errorf("audit store: migration %s: lock: %w", name, err)
		}
	}
	if err := fn(tx); err != nil {
		return fmt.Errorf("audit store: migration %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit store: migration %s: commit: %w", name, err)
	}
	return nil
}

// schemaVersion returns the highest applied migration (0 when none).
func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.GetContext(ctx, &v, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`); err != nil {
		return 0, fmt.Errorf("%w: cannot read schema_migrations: %v", ErrSchema, err)
	}
	return v, nil
}

// checkSchema returns an error wrapping ErrSchema unless the database has
// exactly the migrations of this build.
func (s *Store) checkSchema(ctx context.Context) error {
	ms, err := loadMigrations(s.d.migrations)
	if err != nil {
		return err
	}
	v, err := s.schemaVersion(ctx)
	if err != nil {
		return err
	}
	if want := latest(ms); v != want {
		return fmt.Errorf("%w: database is at version %d, this build needs %d (run \"pgxsafety migrate\")", ErrSchema, v, want)
	}
	return nil
}

// SchemaStatus reports the schema version without changing anything.
func (s *Store) SchemaStatus(ctx context.Context) (MigrationStatus, error) {
	ms, err := loadMigrations(s.d.migrations)
	if err != nil {
		return MigrationStatus{}, err
	}
	v, err := s.schemaVersion(ctx)
	return MigrationStatus{Version: v, Latest: latest(ms)}, err
}
