package pack

import (
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

// Options are what Load checks a pack against beyond the schema.
type Options struct {
	// Schema is the pack JSON schema; nil uses the embedded one.
	Schema *Schema
	// Scorers are the descriptions of the installed scorers, by ID. When set,
	// every task's KPI keys and value types are checked against its scorer's
	// declaration (for composite: against any scorer's). When nil, KPI keys
	// are not checked.
	Scorers map[scorer.ID]scorer.Description
	// Checks run once the pack's YAML parsed, each adding its own
	// diagnostics (the CEL compiler is one), whatever else is wrong with the
	// pack, so that every problem is reported in one run. They see what
	// decoded: a task that is not a mapping, and a CEL check whose expr or
	// message_expr is not a string, are left out of the *Pack they get.
	Checks []Check
}

// Check is a provisioning step that validates part of a decoded pack, such as
// compiling its CEL expressions, and reports every problem it finds.
type Check interface {
	CheckPack(p *Pack) diag.List
}

// TaskChecker is a Check that can also check a pack as it is read, a task at
// a time, so that Validate need not hold every task. The diagnostics of its
// TaskCheck's calls together must be those CheckPack would return for the
// same pack, in any order (they are sorted).
type TaskChecker interface {
	Check
	CheckTasks() TaskCheck
}

// TaskCheck checks one pack: CheckTask is given each task that decoded, in
// order, and CheckRest, once, the pack without its tasks and its Source.
type TaskCheck interface {
	CheckTask(t *Task) diag.List
	CheckRest(p *Pack) diag.List
}
