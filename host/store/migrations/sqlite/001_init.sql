-- The logical schema, SQLite dialect. postgres/001_init.sql is the same schema.

-- One row per pack task. The scorer CHECK is the database's scorer enum, one
-- of the three places scorer IDs live; `assay scorers sync` rewrites it.
CREATE TABLE company_eval_packs (
    id          INTEGER PRIMARY KEY,
    pack_sha256 TEXT NOT NULL,
    company     TEXT NOT NULL DEFAULT '',
    label       TEXT NOT NULL,
    scorer      TEXT NOT NULL,
    weight      REAL NOT NULL DEFAULT 1,
    slice_tags  TEXT NOT NULL DEFAULT '[]',
    created_at  TIMESTAMP NOT NULL,
    CONSTRAINT uq_company_eval_packs_task UNIQUE (pack_sha256, label),
    CONSTRAINT ck_company_eval_packs_scorer CHECK (scorer IN ('answer_keywords', 'composite', 'memory_grounding', 'stigmergic', 'task_state', 'tool_sequence'))
);
CREATE INDEX ix_company_eval_packs_scorer ON company_eval_packs (scorer);

-- One row per (candidate, pack, scorer version); attempt counts fresh re-runs.
CREATE TABLE company_eval_runs (
    id             INTEGER PRIMARY KEY,
    candidate      TEXT NOT NULL,
    pack_sha256    TEXT NOT NULL,
    pack_name      TEXT NOT NULL DEFAULT '',
    scorer_version TEXT NOT NULL,
    host_version   TEXT NOT NULL DEFAULT '',
    attempt        INTEGER NOT NULL DEFAULT 1,
    status         TEXT NOT NULL DEFAULT 'running',
    summary        TEXT,
    verdict        TEXT,
    created_at     TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL,
    CONSTRAINT uq_company_eval_runs_key UNIQUE (candidate, pack_sha256, scorer_version),
    CONSTRAINT ck_company_eval_runs_status CHECK (status IN ('running', 'completed', 'failed'))
);
CREATE INDEX ix_company_eval_runs_pack ON company_eval_runs (pack_sha256);

-- One row per scored turn, written as each turn completes; the unique key
-- makes a resumed run skip what is already stored.
CREATE TABLE company_eval_turns (
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
    CONSTRAINT uq_company_eval_turns_key UNIQUE (run_id, label, attempt),
    CONSTRAINT ck_company_eval_turns_status CHECK (status IN ('scored', 'unscored', 'missing'))
);

-- Content-addressed Company OS state snapshots, so any stored turn can be
-- re-scored from what was stored.
CREATE TABLE company_eval_snapshots (
    sha256     TEXT PRIMARY KEY,
    json       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
