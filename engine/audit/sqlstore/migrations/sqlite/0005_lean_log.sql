-- 0005_lean_log: a leaner audit_log row (docs/operations.md "Stored
-- payloads", docs/performance.md).
--
--   * payload_codec names how request and response are stored: NULL as
--     given, 's2' each compressed as one S2 block
--     (github.com/klauspost/compress/s2). The store compresses new
--     payloads before they reach the writer and decompresses on every read
--     (export, verify, receipts), so entry hashes, which cover the
--     payloads as given, do not change. A /pgx/check answer of 5.8 KB is
--     stored in about 2.4 KB: its row fits in one page instead of spilling
--     into overflow pages.
--   * entry_hash is no longer UNIQUE. Nothing looks an entry up by its
--     hash; the index existed to make the insert guard refuse a copied
--     row, and its random keys rewrote a random page of a large index for
--     every entry. A second row with an existing hash is still refused by
--     seq and id (both unique), and a row whose hash does not follow from
--     its content and predecessor fails "pgxsafety audit verify" as before.
--
-- SQLite cannot drop a column constraint, so the table is rebuilt: every
-- row is copied as it is (the copy takes time and disk in proportion to
-- the log, once), then its indexes and triggers are made again.

PRAGMA legacy_alter_table = ON;

CREATE TABLE audit_log_0005 (
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
    entry_hash        TEXT    NOT NULL,
    committed_at      TEXT,
    payload_codec     TEXT    CHECK (payload_codec IS NULL OR payload_codec = 's2')
);

INSERT INTO audit_log_0005 (seq, id, time, principal_subject, principal_issuer, principal_name,
    principal_email, endpoint, request_id, knowledge_version, request_digest, response_digest,
    request, response, prev_hash, entry_hash, committed_at)
SELECT seq, id, time, principal_subject, principal_issuer, principal_name,
    principal_email, endpoint, request_id, knowledge_version, request_digest, response_digest,
    request, response, prev_hash, entry_hash, committed_at
FROM audit_log ORDER BY seq;

DROP TABLE audit_log;
ALTER TABLE audit_log_0005 RENAME TO audit_log;

PRAGMA legacy_alter_table = OFF;

CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_request_id ON audit_log (request_id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE is not allowed');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.seq > (SELECT COALESCE(MAX(through_seq), 0) FROM audit_checkpoint)
  OR NOT EXISTS (SELECT 1 FROM audit_purged_leaf WHERE seq = OLD.seq)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: DELETE is allowed only for entries covered by a retention checkpoint');
END;

CREATE TRIGGER audit_log_insert_guard BEFORE INSERT ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: an entry with this seq or id exists (no REPLACE)')
    WHERE EXISTS (SELECT 1 FROM audit_log WHERE seq = NEW.seq OR id = NEW.id);
    SELECT RAISE(ABORT, 'audit_log: committed_at (the database clock at insert) is required')
    WHERE NEW.committed_at IS NULL;
END;
