-- 0003_transparency: the audit log as a transparency log (DESIGN.md §5,
-- docs/operations.md "Transparency log").
--
--   * committed_at is the database's clock when the entry was inserted
--     (UTC, second precision; NULL for entries written before this
--     migration; the store inserts strftime('now'), the trigger requires a
--     value — checking it against the clock costs more per row than the
--     rest of the insert, and PostgreSQL sets it itself). The retention purge keeps every entry younger than 365
--     days by the entry's own time OR by committed_at, so entries dated by a
--     replica whose clock is behind are not purged early.
--   * INSERT OR REPLACE / REPLACE INTO would delete the row it replaces
--     without firing the DELETE trigger: inserting an entry whose seq, id
--     or hash already exists is refused, so REPLACE cannot rewrite one.
--   * audit_purged_leaf keeps the entry hash (never the content) of every
--     purged entry: the Merkle tree covers every entry ever appended.
--   * A retention checkpoint carries the note signed with the log's key
--     (verified by "pgxsafety audit verify"; the database only requires it
--     to be present).

ALTER TABLE audit_log ADD COLUMN committed_at TEXT;

CREATE TRIGGER audit_log_insert_guard BEFORE INSERT ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: an entry with this seq, id or hash exists (no REPLACE)')
    WHERE EXISTS (SELECT 1 FROM audit_log WHERE seq = NEW.seq OR id = NEW.id OR entry_hash = NEW.entry_hash);
    SELECT RAISE(ABORT, 'audit_log: committed_at (the database clock at insert) is required')
    WHERE NEW.committed_at IS NULL;
END;

ALTER TABLE audit_checkpoint ADD COLUMN note TEXT;

CREATE TABLE audit_purged_leaf (
    seq        INTEGER PRIMARY KEY,
    entry_hash TEXT    NOT NULL
);

CREATE TRIGGER audit_purged_leaf_valid BEFORE INSERT ON audit_purged_leaf
BEGIN
    SELECT RAISE(ABORT, 'audit_purged_leaf is append-only: this leaf exists (no REPLACE)')
    WHERE EXISTS (SELECT 1 FROM audit_purged_leaf WHERE seq = NEW.seq);
    SELECT RAISE(ABORT, 'audit_purged_leaf: only entries a retention checkpoint covers, with their true hash')
    WHERE NEW.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
       OR NEW.entry_hash IS NOT (SELECT entry_hash FROM audit_log WHERE seq = NEW.seq);
END;

CREATE TRIGGER audit_purged_leaf_no_update BEFORE UPDATE ON audit_purged_leaf
BEGIN
    SELECT RAISE(ABORT, 'audit_purged_leaf is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER audit_purged_leaf_no_delete BEFORE DELETE ON audit_purged_leaf
BEGIN
    SELECT RAISE(ABORT, 'audit_purged_leaf is append-only: DELETE is not allowed');
END;

DROP TRIGGER audit_checkpoint_valid;

CREATE TRIGGER audit_checkpoint_valid BEFORE INSERT ON audit_checkpoint
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoint: through_seq must exceed every earlier checkpoint')
    WHERE NEW.through_seq <= (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint);
    SELECT RAISE(ABORT, 'audit_checkpoint: entry_hash must be the hash of the entry at through_seq')
    WHERE NEW.entry_hash IS NOT (SELECT entry_hash FROM audit_log WHERE seq = NEW.through_seq);
    SELECT RAISE(ABORT, 'audit_checkpoint: a retention checkpoint must carry its signed note')
    WHERE NEW.note IS NULL OR NEW.note = '';
    SELECT RAISE(ABORT, 'audit_checkpoint: only entries older than 365 days may be purged')
    WHERE EXISTS (SELECT 1 FROM audit_log
                  WHERE seq <= NEW.through_seq
                    AND (time >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-365 days')
                         OR committed_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-365 days')));
END;

-- An entry may be deleted only when a checkpoint covers it and its leaf is
-- kept.
DROP TRIGGER audit_log_no_delete;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
  OR NOT EXISTS (SELECT 1 FROM audit_purged_leaf WHERE seq = OLD.seq)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: DELETE is allowed only for entries covered by a retention checkpoint');
END;
