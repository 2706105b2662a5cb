-- A turn keeps a trace of at most 512 bytes in the turn itself (Postgres
-- dialect; sqlite/013_turn_trace.sql is the same change, docs/storage.md).
-- A longer trace, a trace recorded before it and the evidence a queued run
-- stores before its turns stay in company_eval_blobs; readers take a trace
-- from either. Adding a column with a constant default rewrites no row.
ALTER TABLE company_eval_turns ADD COLUMN trace BYTEA NOT NULL DEFAULT ''::bytea;
