-- 0001_audit: the append-only, hash-chained audit log (DESIGN.md §5).
--
-- seq is the chain sequence (1, 2, 3, ...); entry_hash is the hex SHA-256
-- of prev_hash followed by the canonical entry (audit.Hash). time is
-- fixed-width RFC 3339 text in UTC (exactly what was hashed, to the
-- nanosecond); COLLATE "C" makes its text order the time order.
CREATE TABLE audit_log (
    seq               BIGINT PRIMARY KEY,
    id                TEXT   NOT NULL UNIQUE,
    time              TEXT   COLLATE "C" NOT NULL,
    principal_subject TEXT   NOT NULL,
    principal_issuer  TEXT   NOT NULL DEFAULT '',
    principal_name    TEXT   NOT NULL DEFAULT '',
    principal_email   TEXT   NOT NULL DEFAULT '',
    endpoint          TEXT   NOT NULL,
    request_id        TEXT   NOT NULL,
    knowledge_version TEXT   NOT NULL,
    request_digest    TEXT   NOT NULL,
    response_digest   TEXT   NOT NULL,
    request           BYTEA,
    response          BYTEA,
    prev_hash         TEXT   NOT NULL,
    entry_hash        TEXT   NOT NULL UNIQUE
);

CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_request_id ON audit_log (request_id);

-- The log is append-only: no statement may change an entry, and TRUNCATE is
-- refused. DELETE is guarded in 0002 (only the retention purge).
CREATE FUNCTION audit_log_reject_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: UPDATE is not allowed';
END;
$$;

CREATE FUNCTION audit_log_reject_truncate() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: TRUNCATE is not allowed';
END;
$$;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_reject_update();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_reject_truncate();
