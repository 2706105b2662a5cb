-- Task evaluations (docs/task-eval.md), Postgres dialect. sqlite/002_taskeval.sql is
-- the same schema. Owned by host/taskeval; JSON columns hold TEXT, as on SQLite.

-- One evaluation run. Status moves pending -> running -> completed / failed /
-- cancelled and never leaves a terminal state (enforced by host/taskeval).
-- event_seq is the last eval_run_events.seq handed out for the run.
CREATE TABLE IF NOT EXISTS eval_runs (
    id         TEXT PRIMARY KEY,
    task_id    TEXT NOT NULL DEFAULT '',
    status     TEXT NOT NULL DEFAULT 'pending',
    error      TEXT NOT NULL DEFAULT '',
    event_seq  INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT ck_eval_runs_status CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled'))
);

-- One scored task per run; a second write for the same run and task replaces
-- the first. category_scores is the JSON array of categoryScores[] items
-- (category, deterministicScore, aiScore, finalScore, weight, band,
-- rationale, evidence[]); evidence_bundle the bounded bundle.
CREATE TABLE IF NOT EXISTS eval_task_results (
    run_id          TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    task_id         TEXT NOT NULL,
    category_scores TEXT NOT NULL,
    overall_score   INTEGER NOT NULL,
    band            TEXT NOT NULL,
    evidence_bundle TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    CONSTRAINT uq_eval_task_results_run_task UNIQUE (run_id, task_id),
    CONSTRAINT ck_eval_task_results_overall CHECK (overall_score BETWEEN 0 AND 100),
    CONSTRAINT ck_eval_task_results_band CHECK (band IN ('failing', 'weak', 'acceptable', 'strong', 'excellent'))
);
CREATE INDEX IF NOT EXISTS ix_eval_task_results_task ON eval_task_results (task_id);

-- The append-only event trail of a run, numbered 1, 2, ... per run.
CREATE TABLE IF NOT EXISTS eval_run_events (
    run_id     TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT pk_eval_run_events PRIMARY KEY (run_id, seq),
    CONSTRAINT ck_eval_run_events_seq CHECK (seq >= 1)
);
