// Package taskeval implements the task-evaluation contract
// (docs/task-eval.md): three integer 0..100 category scores blended from a
// deterministic score and an advisory AI score, the weighted overall score
// and its band, the bounded evidence bundle an AI evaluator cites, and the
// eval_runs / eval_task_results / eval_run_events tables that persist them.
//
// The score math here is authoritative: an AI evaluator only proposes
// aiScore, rationale and evidence; FinalScore and OverallScore decide.
// All arithmetic is IEEE double arithmetic on float64 values with every
// product explicitly rounded, so results agree to the integer with the
// reference implementation (docs/task-eval.md has the reference vectors).
package taskeval
