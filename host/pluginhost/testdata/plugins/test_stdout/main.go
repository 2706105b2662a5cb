// Command test_stdout prints to stdout before serving, which breaks the
// go-plugin handshake.
package main

import (
	"fmt"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	fmt.Println("hello from a plugin that writes to stdout")
	plugin.Serve(testscorer.Scorer{ID: "test_stdout"})
}
