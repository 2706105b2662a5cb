// Command assay-scorer-task_state serves the built-in task_state scorer as an
// assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/taskstate"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(taskstate.New()) }
