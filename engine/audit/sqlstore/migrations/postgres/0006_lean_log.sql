-- 0006_lean_log: a leaner audit_log row (as SQLite's 0005_lean_log;
-- docs/operations.md "Stored payloads", docs/performance.md).
--
--   * payload_codec names how request and response are stored: NULL as
--     given, 's2' each compressed as one S2 block
--     (github.com/klauspost/compress/s2), by the service before the
--     writer's transaction; reads decompress, entry hashes cover the
--     payloads as given.
--   * toast_tuple_target = 4080: a row of up to 4080 bytes (a compressed
--     check answer's row is about 3 KB) stays in the table as it is,
--     with no TOAST compression attempt (lz4, 0005, would only fail to
--     shrink an S2 block) and no TOAST-table insert. In four alternating
--     pairs of pgxsafety bench the server's CPU per entry fell from 70-75
--     to 61-67 µs. (STORAGE MAIN, which also keeps a row in place but
--     still tries to compress it first, cost more: 91-107 against 66-84
--     µs.) Larger rows are TOASTed as before.
--   * entry_hash is no longer UNIQUE: nothing looks an entry up by its
--     hash, and its random keys touched a random page of a large index for
--     every entry. seq and id stay unique; a row whose hash does not follow
--     from its content and predecessor fails "pgxsafety audit verify".
ALTER TABLE audit_log DROP CONSTRAINT IF EXISTS audit_log_entry_hash_key;
-- The column is added without a constraint and the CHECK as NOT VALID:
-- every existing row holds NULL, and validating them would scan the whole
-- table under an exclusive lock. New rows are checked.
ALTER TABLE audit_log ADD COLUMN payload_codec TEXT;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_payload_codec
    CHECK (payload_codec IS NULL OR payload_codec = 's2') NOT VALID;
ALTER TABLE audit_log SET (toast_tuple_target = 4080);
