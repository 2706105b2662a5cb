// Command test_panic panics inside Score for a case labelled "panic".
package main

import (
	"context"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_panic", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		if c.Task.Label == "panic" {
			panic("test_panic: asked to panic")
		}
		return nil
	}})
}
