package taskeval

import "time"

// Task is everything collected about one finished task: the input of both
// the deterministic signals and the evidence bundle. A zero time means the
// timestamp is missing.
type Task struct {
	TaskID         string
	Status         string // e.g. "done", "in-review"
	Metadata       Metadata
	MergeCommitSHA string
	Commits        []Commit
	Workflow       []WorkflowStep
	Reviews        []Review
	Documents      []Document
	Activity       []ActivityEntry
	AgentLogs      []AgentLog
	RunAudit       []AuditEvent
}

// Metadata describes the task itself.
type Metadata struct {
	Title       string
	Description string
	PRURL       string
	UpdatedAt   time.Time
}

// Commit is one commit made for the task.
type Commit struct {
	SHA       string
	Subject   string
	Message   string // full message; the subject is used when empty
	Author    string
	Timestamp time.Time
}

// Workflow step statuses.
const (
	StepPassed  = "passed"
	StepFailed  = "failed"
	StepPending = "pending"
)

// WorkflowStep is one required step (lint, tests, ...) and its result.
type WorkflowStep struct {
	ID          string
	Name        string
	Status      string // StepPassed, StepFailed or StepPending
	Output      string
	StartedAt   time.Time
	CompletedAt time.Time
}

// Review is one review verdict ("approved", "changes-requested", ...).
type Review struct {
	Reviewer  string
	Verdict   string
	Summary   string
	Timestamp time.Time
}

// Document is one task document (spec, notes, ...) at a revision.
type Document struct {
	Key       string
	Revision  int
	Author    string
	Content   string
	UpdatedAt time.Time
}

// ActivityEntry is one line of the task's activity log.
type ActivityEntry struct {
	Timestamp time.Time
	Action    string
	Outcome   string
}

// AgentLog is one agent log entry.
type AgentLog struct {
	Timestamp time.Time
	Type      string
	Agent     string
	Text      string
	Detail    string
}

// AuditEvent is one run-audit event (a mutation the run made).
type AuditEvent struct {
	ID           string
	Timestamp    time.Time
	Domain       string
	MutationType string
	Target       string
}
