-- Content-keyed resume (docs/verify-engine.md), SQLite dialect.
-- postgres/003_turn_revision.sql is the same change; SQLite cannot change a
-- table's unique key in place, so the table is rebuilt with every row kept.
--
-- input_key is the sha256 of everything a turn's score depends on; a resumed
-- run reuses a stored turn only when the key is the same. A turn whose inputs
-- changed is scored again as the next revision of that turn in the same run
-- attempt, and its earlier revisions stay stored. Rows recorded before this
-- migration are revision 1 with an empty key, which matches no input, so a
-- resume scores them again.
CREATE TABLE company_eval_turns_003 (
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
    CONSTRAINT uq_company_eval_turns_key UNIQUE (run_id, label, attempt, revision),
    CONSTRAINT ck_company_eval_turns_status CHECK (status IN ('scored', 'unscored', 'missing')),
    CONSTRAINT ck_company_eval_turns_revision CHECK (revision >= 1)
);
INSERT INTO company_eval_turns_003 (id, run_id, label, attempt, status, process_score, kpi_score, turn_score,
    checks, failure_tags, scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at)
SELECT id, run_id, label, attempt, status, process_score, kpi_score, turn_score,
    checks, failure_tags, scorer_id, scorer_sha256, state_before_sha256, state_after_sha256, result, created_at
FROM company_eval_turns;
DROP TABLE company_eval_turns;
ALTER TABLE company_eval_turns_003 RENAME TO company_eval_turns;
