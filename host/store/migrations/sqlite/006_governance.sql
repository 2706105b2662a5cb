-- Governance (docs/governance.md), sqlite dialect; the other dialect's
-- 006_governance.sql is the same change.
--
-- company_eval_run_history: one row per finished verification attempt of a
-- run (run_id, attempt), its candidate report as JSON and its drift units:
-- the history kill criteria read and the shadow runs promotion counts.
CREATE TABLE company_eval_run_history (
    id             INTEGER PRIMARY KEY,
    run_id         BIGINT NOT NULL,
    attempt        INTEGER NOT NULL,
    candidate      TEXT NOT NULL,
    pack_sha256    TEXT NOT NULL,
    scorer_version TEXT NOT NULL,
    units          TEXT NOT NULL,
    report         TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL,
    UNIQUE (run_id, attempt)
);
-- The review queue: turns picked by `assay review sample`; a turn is queued
-- once.
CREATE TABLE company_eval_review_queue (
    id          INTEGER PRIMARY KEY,
    turn_id     BIGINT NOT NULL UNIQUE,
    pack_sha256 TEXT NOT NULL,
    candidate   TEXT NOT NULL,
    strategy    TEXT NOT NULL,
    seed        BIGINT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
-- One row per recorded review, attributed to the scorer that produced the
-- reviewed score. verdict is agree or override; an override states the
-- correct verdict (pass or fail) and may state the correct score.
CREATE TABLE company_eval_reviews (
    id             INTEGER PRIMARY KEY,
    turn_id        BIGINT NOT NULL,
    pack_sha256    TEXT NOT NULL,
    candidate      TEXT NOT NULL,
    label          TEXT NOT NULL,
    scorer_id      TEXT NOT NULL,
    scorer_version TEXT NOT NULL,
    scorer_sha256  TEXT NOT NULL,
    reviewer       TEXT NOT NULL,
    verdict        TEXT NOT NULL CHECK (verdict IN ('agree', 'override')),
    correct        TEXT NOT NULL CHECK (correct IN ('', 'pass', 'fail')),
    correct_score  DOUBLE PRECISION,
    reason         TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL
);
-- Kill criteria firings: one row per firing, kept after it is cleared.
CREATE TABLE company_eval_kill_firings (
    id          INTEGER PRIMARY KEY,
    pack_sha256 TEXT NOT NULL,
    name        TEXT NOT NULL,
    candidate   TEXT NOT NULL,
    run_id      BIGINT NOT NULL,
    message     TEXT NOT NULL,
    fired_at    TIMESTAMP NOT NULL,
    cleared_at  TIMESTAMP,
    cleared_by  TEXT NOT NULL DEFAULT '',
    clear_reason TEXT NOT NULL DEFAULT ''
);
-- Promotion records, written only when every interlock was green.
CREATE TABLE company_eval_promotions (
    id             INTEGER PRIMARY KEY,
    pack_sha256    TEXT NOT NULL,
    candidate      TEXT NOT NULL,
    baseline       TEXT NOT NULL,
    approved_by    TEXT NOT NULL,
    reason         TEXT NOT NULL,
    runs           TEXT NOT NULL,
    scorer_version TEXT NOT NULL,
    interlocks     TEXT NOT NULL,
    rollback_on    TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL
);
