package builtin

import (
	"github.com/assay-eval/assay/plugins/answerkeywords"
	"github.com/assay-eval/assay/plugins/composite"
	"github.com/assay-eval/assay/plugins/memorygrounding"
	"github.com/assay-eval/assay/plugins/stigmergic"
	"github.com/assay-eval/assay/plugins/taskstate"
	"github.com/assay-eval/assay/plugins/toolsequence"
	"github.com/assay-eval/assay/sdk"
)

// Scorers returns new instances of the six built-in scorers, in the order the
// pack contract lists them: task_state, memory_grounding, tool_sequence,
// stigmergic, answer_keywords, composite.
func Scorers() []sdk.Scorer {
	return []sdk.Scorer{
		taskstate.New(),
		memorygrounding.New(),
		toolsequence.New(),
		stigmergic.New(),
		answerkeywords.New(),
		composite.New(),
	}
}
