-- Epochs (docs/verify-engine.md, docs/storage.md), SQLite dialect.
-- postgres/004_turn_epoch.sql is the same change; SQLite cannot change a
-- table's unique key in place, so the table is rebuilt with every row kept.
--
-- A candidate may run a task several times (epochs); (label, epoch)
-- identifies a turn of a run attempt. Rows recorded before this migration
-- are epoch 1, which is what a run without epochs has always been.
CREATE TABLE company_eval_turns_004 (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES company_eval_runs (id) ON DELETE CASCADE,
    label               TEXT NOT NULL,
    attempt             INTEGER NOT NULL,
    status              TEXT NOT NULL,
    process_score       REAL,
    kpi_score           REAL,
    turn_score          REAL,
    checks              TEXT NOT NULL DEFAULT '[]',
    failure_tags        TEXT NOT NULL DEFAULT '[]',
    scorer_id           TEXT NOT NULL DEFAULT '',
    scorer_sha256       TEXT NOT NULL DEFAULT '',
    state_before_sha256 TEXT NOT NULL DEFAULT '',
    state_after_sha256  TEXT NOT NULL DEFAULT '',
    result              TEXT NOT NULL DEFAULT '{}',
    created_at          TIMESTAMP NOT NULL,
    revision            INTEGER NOT NULL DEFAULT 1,
    input_key           TEXT NOT NULL DEFAULT '',
    epoch               INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT uq_company_eval_turns_key UNIQUE (run_id, label, epoch, attempt, revision),
    CONSTRAINT ck_company_eval_turns_status CHECK (status IN ('scored', 'unscored', 'missing')),
    CONSTRAINT ck_company_eval_turns_revision CHECK (revision >= 1),
    CONSTRAINT ck_company_eval_turns_epoch CHECK (epoch >= 1)
);
INSERT INTO company_eval_turns_004 (id, run_id, label, attempt, status, process_score, kpi_score, turn_score,
    checks, failure_tags, scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at,
    revision, input_key)
SELECT id, run_id, label, attempt, status, process_score, kpi_score, turn_score,
    checks, failure_tags, scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at,
    revision, input_key
FROM company_eval_turns;
DROP TABLE company_eval_turns;
ALTER TABLE company_eval_turns_004 RENAME TO company_eval_turns;
