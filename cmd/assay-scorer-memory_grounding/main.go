// Command assay-scorer-memory_grounding serves the built-in memory_grounding
// scorer as an assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/memorygrounding"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(memorygrounding.New()) }
