-- Each turn keeps its metrics row in the turn itself (docs/storage.md,
-- "company_eval_turns"; docs/evidence.md): the row is the turn's own (its
-- candidate, label and times), so as a blob of its own it was an insert at
-- a random place of the evidence key's index for every turn, the cost that
-- grew with the database (docs/performance.md, "Flat memory"). The turn
-- still names it by metrics_sha256. Turns recorded before this migration,
-- and the evidence a queued run stores before its turns, keep the row in
-- company_eval_blobs; readers take it from either. Adding a column with a
-- constant default rewrites no row.
ALTER TABLE company_eval_turns ADD COLUMN metrics BLOB NOT NULL DEFAULT x'';
