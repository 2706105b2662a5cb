// Command assay-scorer-tool_sequence serves the built-in tool_sequence scorer
// as an assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/toolsequence"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(toolsequence.New()) }
