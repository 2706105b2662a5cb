// Command assay-scorer-memory_grounding serves the built-in memory_grounding
// scorer as an assay plugin.
package main

import (
	memorygrounding "github.com/assay-eval/assay/plugins/memory_grounding"
	"github.com/assay-eval/assay/sdk"
)

func main() { sdk.Serve(memorygrounding.New()) }
