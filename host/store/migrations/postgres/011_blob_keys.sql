-- company_eval_blobs keys become the 32 bytes of the sha256 instead of its
-- 64 hex digits (Postgres dialect; sqlite/011_blob_keys.sql is the same
-- change). Each blob is an insert at a random place of the key's index, so
-- a smaller key is fewer index pages to read and write as the table grows
-- (docs/performance.md, "Flat memory"). Only the key's storage changes:
-- every API and every other table still names a blob by its hex sha256. A
-- key that is not 64 lowercase hex digits (assay writes none) is kept as
-- the bytes of its text.
ALTER TABLE company_eval_blobs ALTER COLUMN sha256 TYPE BYTEA USING CASE
    WHEN sha256 ~ '^[0-9a-f]{64}$' THEN decode(sha256, 'hex')
    ELSE convert_to(sha256, 'UTF8') END;
