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
	// Checks run after the pack decoded without errors, each adding its own
	// diagnostics (the CEL compiler is one). They see a complete *Pack.
	Checks []Check
}

// Check is a provisioning step that validates part of a decoded pack, such as
// compiling its CEL expressions, and reports every problem it finds.
type Check interface {
	CheckPack(p *Pack) diag.List
}
