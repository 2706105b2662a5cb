// Command assay-scorer-stigmergic serves the built-in stigmergic scorer as an
// assay plugin.
package main

import (
	"github.com/assay-eval/assay/plugins/stigmergic"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() { plugin.Serve(stigmergic.New()) }
