// Package queue scores verification turns on any number of stateless
// workers through River, a job queue in assay's Postgres database: the
// enqueuer records the turns' evidence and inserts batch jobs, and a worker
// records a batch's turn rows in the transaction that completes its job
// (docs/scale.md).
package queue
