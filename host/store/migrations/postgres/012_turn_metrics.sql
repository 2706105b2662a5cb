-- Each turn keeps its metrics row in the turn itself (Postgres dialect;
-- sqlite/012_turn_metrics.sql is the same change, docs/storage.md). Turns
-- recorded before it, and the evidence a queued run stores before its
-- turns, keep the row in company_eval_blobs; readers take it from either.
-- Adding a column with a constant default rewrites no row.
ALTER TABLE company_eval_turns ADD COLUMN metrics BYTEA NOT NULL DEFAULT ''::bytea;
