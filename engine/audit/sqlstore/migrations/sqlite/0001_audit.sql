-- 0001_audit: the append-only, hash-chained audit log (DESIGN.md §5).
--
-- seq is the chain sequence (1, 2, 3, ...); entry_hash is the hex SHA-256
-- of prev_hash followed by the canonical entry (audit.Hash). time is
-- RFC 3339 with nanoseconds in UTC (audit.TimeFormat).
CREATE TABLE audit_log (
    seq               INTEGER PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,
    time              TEXT    NOT NULL,
    principal_subject TEXT    NOT NULL,
    principal_issuer  TEXT    NOT NULL DEFAULT '',
    principal_name    TEXT    NOT NULL DEFAULT '',
    principal_email   TEXT    NOT NULL DEFAULT '',
    endpoint          TEXT    NOT NULL,
    request_id        TEXT    NOT NULL,
    knowledge_version TEXT    NOT NULL,
    request_digest    TEXT    NOT NULL,
    response_digest   TEXT    NOT NULL,
    request           BLOB,
    response          BLOB,
    prev_hash         TEXT    NOT NULL,
    entry_hash        TEXT    NOT NULL UNIQUE
);

CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_request_id ON audit_log (request_id);

-- The log is append-only: no statement may change or remove an entry.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: DELETE is not allowed');
END;
