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
	env, err := readEnvironment()
	if err != nil {
		return err
	}
	fs := newFlagSet("migrate", stderr, "migrate [--data-dir DIR]")
	dataDir := env.dataDirFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := sqlstore.MigrateDatabase(ctx, env.DatabaseURL, *dataDir, sqlstore.Options{})
	if err != nil {
		return err
	}
	for _, name := range st.Applied {
		fmt.Fprintf(stdout, "applied %s\n", name)
	}
	fmt.Fprintf(stdout, "audit store schema at version %d (latest %d)\n", st.Version, st.Latest)
	return nil
}
