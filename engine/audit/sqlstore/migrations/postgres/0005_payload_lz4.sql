-- 0005_payload_lz4: the request and response payloads of new entries are
-- TOAST-compressed with lz4 instead of pglz (PostgreSQL 14 and later, built
-- with lz4, as Debian's and the official images are). pglz compressing a
-- 6 KB check answer is most of the database server's CPU per entry: with lz4
-- the audited /pgx/check rate on one 2-core host rose 13.6 % (six
-- alternating pairs of pgxsafety bench, docs/performance.md). Stored rows
-- keep their compression; reads decompress either. Where the server lacks
-- lz4 the payloads keep the server's default compression and the migration
-- still applies (nothing else depends on it); the statement is run by
-- EXECUTE so that a server older than 14, which cannot parse it, takes the
-- same way out.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE audit_log ALTER COLUMN request SET COMPRESSION lz4, ALTER COLUMN response SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'audit_log payloads keep the default TOAST compression: %', SQLERRM;
END
$$;
