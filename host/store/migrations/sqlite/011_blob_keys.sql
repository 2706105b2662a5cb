-- company_eval_blobs keys become the 32 bytes of the sha256 instead of its
-- 64 hex digits (SQLite dialect; postgres/011_blob_keys.sql is the same
-- change). Each blob is an insert at a random place of the key's index, so
-- a smaller key is fewer index pages to read and write as the table grows
-- (docs/performance.md, "Flat memory"). Only the key's storage changes:
-- every API and every other table still names a blob by its hex sha256. A
-- key that is not 64 lowercase hex digits (assay writes none) is kept as
-- the bytes of its text. The rows are copied into a new table: updating
-- the keys in place would hold every page it changes in memory.
CREATE TABLE company_eval_blobs_011 (
    sha256     BLOB PRIMARY KEY,
    kind       TEXT NOT NULL,
    encoding   TEXT NOT NULL,
    size       INTEGER NOT NULL,
    data       BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL
);
INSERT INTO company_eval_blobs_011 (sha256, kind, encoding, size, data, created_at)
SELECT CASE
    WHEN length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*' THEN unhex(sha256)
    ELSE CAST(sha256 AS BLOB) END, kind, encoding, size, data, created_at
FROM company_eval_blobs ORDER BY rowid;
DROP TABLE company_eval_blobs;
ALTER TABLE company_eval_blobs_011 RENAME TO company_eval_blobs;
