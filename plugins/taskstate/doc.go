// Package taskstate is the built-in task_state scorer: the turn created (or,
// failing that, named in done.task_id) a Company OS task with the expected
// owner, due date, priority, specification and state.
//
// The target task is a task in state_after that is not in state_before (by
// id); without state_before, a task whose created_at falls within the turn's
// window [started_at, finished_at]; else the task whose id is the trace's
// done.task_id. When several tasks qualify, the best match wins: the highest
// mean over its checks, ties going to the earliest in state_after. Without a
// target task every check scores 0. Every failed check carries
// state_not_changed.
package taskstate
