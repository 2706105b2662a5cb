// Command test_hog misbehaves with resources by the task label: "hog"
// allocates without bound, "fork" starts 20 `sleep 600` processes and
// returns their pids in its check's detail.
package main

import (
	"context"
	"os/exec"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_hog", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		switch c.Task.Label {
		case "hog":
			var keep [][]byte
			for {
				b := make([]byte, 64<<20)
				b[0] = 1
				keep = append(keep, b)
			}
		case "fork":
			var pids []string
			for range 20 {
				cmd := exec.Command("sleep", "600")
				if err := cmd.Start(); err != nil {
					return &sdk.Result{Diagnostics: []string{err.Error()}}
				}
				pids = append(pids, strconv.Itoa(cmd.Process.Pid))
			}
			return &sdk.Result{Score: 1, Checks: []sdk.Check{{KPI: "label_seen", Score: 1, Passed: true, Detail: strings.Join(pids, " ")}}}
		}
		return nil
	}})
}
