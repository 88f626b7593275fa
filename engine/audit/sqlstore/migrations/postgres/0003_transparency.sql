-- 0003_transparency: the audit log as a transparency log (DESIGN.md §5,
-- docs/operations.md "Transparency log").
--
--   * committed_at is the database's clock when the entry was inserted
--     (UTC, second precision; set by a trigger whatever the client sends;
--     NULL for entries written before this migration). The retention purge
--     keeps every entry younger than 365 days by the entry's own time OR by
--     committed_at, so entries dated by a replica whose clock is behind are
--     not purged early.
--   * audit_purged_leaf keeps the entry hash (never the content) of every
--     purged entry: the Merkle tree covers every entry ever appended.
--   * A retention checkpoint carries the note signed with the log's key
--     (verified by "pgxsafety audit verify"; the database only requires it
--     to be present).
-- PostgreSQL has no REPLACE; INSERT ... ON CONFLICT DO UPDATE fires the
-- UPDATE trigger and is refused.

ALTER TABLE audit_log ADD COLUMN committed_at TEXT COLLATE "C";

CREATE FUNCTION audit_log_stamp() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    NEW.committed_at := to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
    RETURN NEW;
END;
$$;

CREATE TRIGGER audit_log_stamp BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_stamp();

ALTER TABLE audit_checkpoint ADD COLUMN note TEXT;

CREATE TABLE audit_purged_leaf (
    seq        BIGINT PRIMARY KEY,
    entry_hash TEXT   NOT NULL
);

CREATE FUNCTION audit_purged_leaf_validate() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
       OR NEW.entry_hash IS DISTINCT FROM (SELECT entry_hash FROM audit_log WHERE seq = NEW.seq) THEN
        RAISE EXCEPTION 'audit_purged_leaf: only entries a retention checkpoint covers, with their true hash';
    END IF;
    RETURN NEW;
END;
$$;

CREATE FUNCTION audit_purged_leaf_reject_change() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'audit_purged_leaf is append-only: % is not allowed', TG_OP;
END;
$$;

CREATE TRIGGER audit_purged_leaf_valid BEFORE INSERT ON audit_purged_leaf
    FOR EACH ROW EXECUTE FUNCTION audit_purged_leaf_validate();

CREATE TRIGGER audit_purged_leaf_no_change BEFORE UPDATE OR DELETE ON audit_purged_leaf
    FOR EACH ROW EXECUTE FUNCTION audit_purged_leaf_reject_change();

CREATE TRIGGER audit_purged_leaf_no_truncate BEFORE TRUNCATE ON audit_purged_leaf
    FOR EACH STATEMENT EXECUTE FUNCTION audit_purged_leaf_reject_change();

CREATE OR REPLACE FUNCTION audit_checkpoint_validate() RETURNS trigger
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
    IF NEW.note IS NULL OR NEW.note = '' THEN
        RAISE EXCEPTION 'audit_checkpoint: a retention checkpoint must carry its signed note';
    END IF;
    IF EXISTS (SELECT 1 FROM audit_log WHERE seq <= NEW.through_seq AND (time >= cutoff OR committed_at >= cutoff)) THEN
        RAISE EXCEPTION 'audit_checkpoint: only entries older than 365 days may be purged';
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION audit_log_guard_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF OLD.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
       OR NOT EXISTS (SELECT 1 FROM audit_purged_leaf WHERE seq = OLD.seq) THEN
        RAISE EXCEPTION 'audit_log is append-only: DELETE is allowed only for entries covered by a retention checkpoint';
    END IF;
    RETURN OLD;
END;
$$;
