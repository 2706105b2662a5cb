-- Content-keyed resume (docs/verify-engine.md), Postgres dialect.
-- sqlite/003_turn_revision.sql is the same change.
--
-- input_key is the sha256 of everything a turn's score depends on; a resumed
-- run reuses a stored turn only when the key is the same. A turn whose inputs
-- changed is scored again as the next revision of that turn in the same run
-- attempt, and its earlier revisions stay stored. Rows recorded before this
-- migration are revision 1 with an empty key, which matches no input, so a
-- resume scores them again.
ALTER TABLE company_eval_turns ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
ALTER TABLE company_eval_turns ADD COLUMN input_key TEXT NOT NULL DEFAULT '';
ALTER TABLE company_eval_turns DROP CONSTRAINT uq_company_eval_turns_key;
ALTER TABLE company_eval_turns ADD CONSTRAINT uq_company_eval_turns_key UNIQUE (run_id, label, attempt, revision);
ALTER TABLE company_eval_turns ADD CONSTRAINT ck_company_eval_turns_revision CHECK (revision >= 1);
