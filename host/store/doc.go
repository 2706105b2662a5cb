// Package store keeps packs, runs, turns and state snapshots in SQLite (the
// default) or Postgres, runs the embedded versioned migrations on open, and
// reads back and rewrites the database's scorer enum (the CHECK constraint
// ck_company_eval_packs_scorer), one of the three places scorer IDs live.
package store
