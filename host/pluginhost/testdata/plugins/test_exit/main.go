// Command test_exit exits in the middle of a batch when it meets a case
// whose label starts with "exit". A case labelled "once_exit" exits the
// first time its case id is seen (a marker file in TMPDIR remembers it) and
// scores after that: a crash that a fresh process does not repeat. A case
// labelled "once_panic" panics the first time its case id is seen (the
// scorer fails that case only; the process lives) and scores after that.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	plugin.Serve(testscorer.Scorer{ID: "test_exit", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		switch {
		case strings.HasPrefix(c.Task.Label, "exit"):
			os.Exit(7)
		case c.Task.Label == "once_exit":
			marker := filepath.Join(os.TempDir(), "assay-test-once-exit-"+c.ID)
			if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
				os.Exit(7)
			}
		case c.Task.Label == "once_panic":
			marker := filepath.Join(os.TempDir(), "assay-test-once-panic-"+c.ID)
			if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
				panic("once_panic: the first time")
			}
		}
		return nil
	}})
}
