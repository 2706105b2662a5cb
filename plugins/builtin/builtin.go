package builtin

import (
	answerkeywords "github.com/assay-eval/assay/plugins/answer_keywords"
	"github.com/assay-eval/assay/plugins/composite"
	memorygrounding "github.com/assay-eval/assay/plugins/memory_grounding"
	"github.com/assay-eval/assay/plugins/stigmergic"
	taskstate "github.com/assay-eval/assay/plugins/task_state"
	toolsequence "github.com/assay-eval/assay/plugins/tool_sequence"
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
