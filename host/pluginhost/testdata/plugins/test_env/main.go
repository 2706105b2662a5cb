// Command test_env reports the names and values of its environment, one
// "NAME=value" diagnostic each.
package main

import (
	"context"
	"os"
	"sort"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_env", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		env := os.Environ()
		sort.Strings(env)
		return &sdk.Result{Score: 1, Diagnostics: env}
	}})
}
