package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pgxsafety/pgxsafety/engine/audit/sqlstore"
)

// runMigrate applies the pending audit-store migrations and reports the
// schema version. serve migrates on start unless PGXSAFETY_DATABASE_MIGRATE
// is false; then this command is how the schema is brought up to date.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr, "migrate [--data-dir DIR]")
	dataDir := fs.String("data-dir", envOr("PGXSAFETY_DATA_DIR", defaultDataDir), "data directory (env PGXSAFETY_DATA_DIR)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := sqlstore.MigrateDatabase(ctx, databaseURLFromEnv(), *dataDir, sqlstore.Options{})
	if err != nil {
		return err
	}
	for _, name := range st.Applied {
		fmt.Fprintf(stdout, "applied %s\n", name)
	}
	fmt.Fprintf(stdout, "audit store schema at version %d (latest %d)\n", st.Version, st.Latest)
	return nil
}
