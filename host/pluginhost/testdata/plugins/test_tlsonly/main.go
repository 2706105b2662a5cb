// Command test_tlsonly serves only behind go-plugin's AutoMTLS, as a plugin
// written for the hosts before the private Unix socket does: it exits with
// an error unless the host offered AutoMTLS (PLUGIN_CLIENT_CERT). Each start
// appends "plain" or "tls" to assay-test-tlsonly.log in TMPDIR, so that a
// test can tell how the host launched it; a case labelled "exit" makes it
// exit in the middle of the batch.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	mode := "tls"
	if os.Getenv("PLUGIN_CLIENT_CERT") == "" {
		mode = "plain"
	}
	if f, err := os.OpenFile(filepath.Join(os.TempDir(), "assay-test-tlsonly.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, mode)
		f.Close()
	}
	if mode == "plain" {
		fmt.Fprintln(os.Stderr, "PLUGIN_CLIENT_CERT is not set: the host did not offer AutoMTLS")
		os.Exit(1)
	}
	plugin.Serve(testscorer.Scorer{ID: "test_tlsonly", Hook: func(_ context.Context, c *sdk.Case) *sdk.Result {
		if c.Task.Label == "exit" {
			os.Exit(7)
		}
		return nil
	}})
}
