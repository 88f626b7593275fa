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
--   * checkpoints are never updated, deleted or truncated; entries are
--     never updated or truncated.
-- No session setting or privileged function opens the log: the checkpoint
-- row is the authorisation, and it can only describe expired entries.

CREATE TABLE audit_checkpoint (
    through_seq  BIGINT PRIMARY KEY,
    entry_hash   TEXT   NOT NULL,
    through_time TEXT   COLLATE "C" NOT NULL,
    purged_at    TEXT   COLLATE "C" NOT NULL,
    removed      BIGINT NOT NULL
);

CREATE FUNCTION audit_checkpoint_validate() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    cutoff TEXT := to_char((now() AT TIME ZONE 'UTC') - interval '365 days', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
BEGIN
    IF NEW.through_seq <= (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint) THEN
        RAISE EXCEPTION 'audit_checkpoint: through_seq must exceed every earlier checkpoint';
    END IF;
    IF NEW.entry_hash IS DISTINCT FROM (SELECT entry_hash FROM audit_log WHERE seq = NEW.through_seq) THEN
        RAISE EXCEPTION 'audit_checkpoint: entry_hash must be the hash of the entry at through_seq';
    END IF;
    IF EXISTS (SELECT 1 FROM audit_log WHERE seq <= NEW.through_seq AND time >= cutoff) THEN
        RAISE EXCEPTION 'audit_checkpoint: only entries older than 365 days may be purged';
    END IF;
    RETURN NEW;
END;
$$;

CREATE FUNCTION audit_checkpoint_reject_change() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'audit_checkpoint is append-only: % is not allowed', TG_OP;
END;
$$;

CREATE TRIGGER audit_checkpoint_valid BEFORE INSERT ON audit_checkpoint
    FOR EACH ROW EXECUTE FUNCTION audit_checkpoint_validate();

CREATE TRIGGER audit_checkpoint_no_update BEFORE UPDATE OR DELETE ON audit_checkpoint
    FOR EACH ROW EXECUTE FUNCTION audit_checkpoint_reject_change();

CREATE TRIGGER audit_checkpoint_no_truncate BEFORE TRUNCATE ON audit_checkpoint
    FOR EACH STATEMENT EXECUTE FUNCTION audit_checkpoint_reject_change();

CREATE FUNCTION audit_log_guard_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF OLD.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint) THEN
        RAISE EXCEPTION 'audit_log is append-only: DELETE is allowed only for entries covered by a retention checkpoint';
    END IF;
    RETURN OLD;
END;
$$;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard_delete();
