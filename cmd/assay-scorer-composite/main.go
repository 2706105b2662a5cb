// Command assay-scorer-composite serves the built-in composite scorer as an
// assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/composite"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(composite.New()) }
