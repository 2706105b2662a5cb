package sdk

import (
	"context"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/pkg/trace"
)

// Scorer is a deterministic verifier of agent turns. It stays at two methods:
// new capabilities arrive as optional interfaces or new fields, never as new
// methods.
type Scorer interface {
	// Describe returns the scorer's constant description; no side effects.
	Describe() Description
	// Score scores one case. It must be safe for concurrent use and
	// deterministic. Problems with the input go in Result.Diagnostics; an
	// error means the scorer broke.
	Score(ctx context.Context, c *Case) (*Result, error)
}

// The model a scorer works with; see package scorer for the fields.
type (
	ID          = scorer.ID
	Need        = scorer.Need
	ValueType   = scorer.ValueType
	KPI         = scorer.KPI
	Description = scorer.Description
	Safety      = scorer.Safety
	Task        = scorer.Task
	Upstream    = scorer.Upstream
	Case        = scorer.Case
	Check       = scorer.Check
	Result      = scorer.Result
)

// Needs a scorer may declare.
const (
	NeedTrace       = scorer.NeedTrace
	NeedAnswer      = scorer.NeedAnswer
	NeedStateBefore = scorer.NeedStateBefore
	NeedStateAfter  = scorer.NeedStateAfter
	NeedUpstream    = scorer.NeedUpstream
	NeedEvents      = scorer.NeedEvents
)

// KPI value types.
const (
	Bool          = scorer.Bool
	Number        = scorer.Number
	Integer       = scorer.Integer
	String        = scorer.String
	StringList    = scorer.StringList
	StringListMap = scorer.StringListMap
	Any           = scorer.Any
)

// The parts of a case, re-exported so a plugin needs no other import.
type (
	Snapshot    = companyos.Snapshot
	StateTask   = companyos.Task
	Note        = companyos.Note
	MemoryEntry = companyos.MemoryEntry
	Turn        = trace.Turn
	ToolCall    = trace.ToolCall
	Event       = trace.Event
)
