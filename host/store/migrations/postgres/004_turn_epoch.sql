-- Epochs (docs/verify-engine.md, docs/storage.md), Postgres dialect.
-- sqlite/004_turn_epoch.sql is the same change.
--
-- A candidate may run a task several times (epochs); (label, epoch)
-- identifies a turn of a run attempt. Rows recorded before this migration
-- are epoch 1, which is what a run without epochs has always been.
ALTER TABLE company_eval_turns ADD COLUMN epoch INTEGER NOT NULL DEFAULT 1;
ALTER TABLE company_eval_turns DROP CONSTRAINT uq_company_eval_turns_key;
ALTER TABLE company_eval_turns ADD CONSTRAINT uq_company_eval_turns_key UNIQUE (run_id, label, epoch, attempt, revision);
ALTER TABLE company_eval_turns ADD CONSTRAINT ck_company_eval_turns_epoch CHECK (epoch >= 1);
