package sqlstore

import (
	"context"
	"fmt"
)

// CanPurge reports whether the store's database role may run the retention
// purge, which deletes expired rows. On PostgreSQL the least-privilege
// service role of docs/operations.md has INSERT and SELECT only, so it
// cannot; the owner runs "pgxsafety audit purge" instead. A SQLite store
// always can (its triggers, not privileges, guard the rows).
func (s *Store) CanPurge(ctx context.Context) (_ bool, err error) {
	if s.d.name == "sqlite" {
		return true, nil
	}
	if err := s.faulted(); err != nil {
		return false, err
	}
	defer s.guard(&err)()
	var ok bool
	if err := s.db.GetContext(ctx, &ok, `SELECT has_table_privilege(current_user, 'audit_log', 'DELETE')`); err != nil {
		return false, fmt.Errorf("audit store: check the purge privilege: %w", redactErr(err))
	}
	return ok, nil
}
