// Command test_sleep hangs (ignoring its context) on a case whose label
// starts with "sleep".
package main

import (
	"context"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_sleep", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		if strings.HasPrefix(c.Task.Label, "sleep") {
			time.Sleep(time.Hour)
		}
		return nil
	}})
}
