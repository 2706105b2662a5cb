// Command test_exit exits in the middle of a batch when it meets a case
// labelled "exit".
package main

import (
	"context"
	"os"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
)

func main() {
	sdk.Serve(testscorer.Scorer{ID: "test_exit", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		if c.Task.Label == "exit" {
			os.Exit(7)
		}
		return nil
	}})
}
