-- Evidence kept with every turn (docs/evidence.md), SQLite dialect.
-- postgres/005_evidence.sql is the same change.
--
-- company_eval_blobs holds every trace, state snapshot and metrics row a
-- turn was scored from, once per sha256 of its uncompressed bytes, gzip
-- compressed. Turns reference their trace and metrics row by sha256 (the
-- snapshots were referenced already). Rows recorded before this migration
-- have empty references and cannot be rescored; snapshots stored before it
-- stay in company_eval_snapshots and are still read from there.
CREATE TABLE company_eval_blobs (
    sha256     TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    encoding   TEXT NOT NULL,
    size       INTEGER NOT NULL,
    data       BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL
);
ALTER TABLE company_eval_turns ADD COLUMN trace_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE company_eval_turns ADD COLUMN metrics_sha256 TEXT NOT NULL DEFAULT '';
-- units are the run's drift units as JSON: pack sha256, each scorer's id,
-- version and sha256, scorer version, policy and skill versions.
ALTER TABLE company_eval_runs ADD COLUMN units TEXT NOT NULL DEFAULT '{}';
-- One row per scorer per `assay scorers probe`: whether re-scoring stored
-- turns gave the same result on every repeat and the stored result.
CREATE TABLE company_eval_probes (
    id          INTEGER PRIMARY KEY,
    scorer_id   TEXT NOT NULL,
    version     TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    status      TEXT NOT NULL,
    reason      TEXT NOT NULL,
    turns       INTEGER NOT NULL,
    repeats     INTEGER NOT NULL,
    seed        BIGINT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
