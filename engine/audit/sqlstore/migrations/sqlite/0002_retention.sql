-- 0002_retention: retention checkpoints, and the one exception to the
-- append-only rule (DESIGN.md §5, docs/operations.md).
--
-- A purge removes the expired head of the chain and records, in the same
-- transaction, a checkpoint naming the last removed entry (its sequence,
-- hash and time) so that the remaining entries still verify. The database
-- itself guarantees that
--   * a checkpoint names an existing entry by its true hash, lies beyond
--     every earlier checkpoint, and covers only entries older than 365
--     days (by the database's clock);
--   * an entry can be deleted only when a checkpoint covers it;
--   * checkpoints are never updated or deleted; entries are never updated.
-- Times are stored as fixed-width RFC 3339 text in UTC, so text order is
-- time order (to within a second for rows written before this layout).

CREATE TABLE audit_checkpoint (
    through_seq  INTEGER PRIMARY KEY,
    entry_hash   TEXT    NOT NULL,
    through_time TEXT    NOT NULL,
    purged_at    TEXT    NOT NULL,
    removed      INTEGER NOT NULL
);

CREATE TRIGGER audit_checkpoint_valid BEFORE INSERT ON audit_checkpoint
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoint: through_seq must exceed every earlier checkpoint')
    WHERE NEW.through_seq <= (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint);
    SELECT RAISE(ABORT, 'audit_checkpoint: entry_hash must be the hash of the entry at through_seq')
    WHERE NEW.entry_hash IS NOT (SELECT entry_hash FROM audit_log WHERE seq = NEW.through_seq);
    SELECT RAISE(ABORT, 'audit_checkpoint: only entries older than 365 days may be purged')
    WHERE EXISTS (SELECT 1 FROM audit_log
                  WHERE seq <= NEW.through_seq
                    AND time >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-365 days'));
END;

CREATE TRIGGER audit_checkpoint_no_update BEFORE UPDATE ON audit_checkpoint
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoint is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER audit_checkpoint_no_delete BEFORE DELETE ON audit_checkpoint
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoint is append-only: DELETE is not allowed');
END;

-- Replace the unconditional DELETE guard of 0001 by one that lets the purge
-- remove exactly the entries a checkpoint covers.
DROP TRIGGER audit_log_no_delete;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: DELETE is allowed only for entries covered by a retention checkpoint');
END;
