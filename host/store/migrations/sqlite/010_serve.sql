-- assay serve (docs/serve.md), SQLite dialect. postgres/010_serve.sql is the
-- same schema.

-- API tokens: only the sha256 of a token is stored; the token itself is
-- printed once by `assay tokens create`.
CREATE TABLE assay_tokens (
    id         INTEGER PRIMARY KEY,
    company    TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    hash       TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP,
    CONSTRAINT uq_assay_tokens_hash UNIQUE (hash)
);

-- Packs uploaded through PUT /v1/packs/{name}, one per company and name.
CREATE TABLE assay_server_packs (
    company    TEXT NOT NULL,
    name       TEXT NOT NULL,
    sha256     TEXT NOT NULL,
    source     TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    CONSTRAINT pk_assay_server_packs PRIMARY KEY (company, name)
);

-- Uploads through POST /v1/runs: one verification each, its status, and
-- the summary.json of the verification when it completed.
CREATE TABLE assay_server_runs (
    id              INTEGER PRIMARY KEY,
    company         TEXT NOT NULL,
    token_id        INTEGER NOT NULL,
    pack_name       TEXT NOT NULL,
    pack_sha256     TEXT NOT NULL,
    candidate       TEXT NOT NULL DEFAULT '',
    idempotency_key TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    turns           INTEGER NOT NULL DEFAULT 0,
    done            INTEGER NOT NULL DEFAULT 0,
    summary         TEXT,
    error           TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    CONSTRAINT ck_assay_server_runs_status CHECK (status IN ('queued', 'running', 'completed', 'failed'))
);
CREATE UNIQUE INDEX ux_assay_server_runs_idem ON assay_server_runs (token_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX ix_assay_server_runs_company ON assay_server_runs (company, id);
