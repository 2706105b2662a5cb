// Command test_marker is the unregistered binary of the swap race: the
// moment it runs it leaves a file MARKER-<pid> next to its executable, then
// serves as test_marker.
package main

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/assay-eval/assay/host/pluginhost/testdata/plugins/testscorer"
	"github.com/assay-eval/assay/sdk/plugin"
)

func main() {
	if exe, err := os.Executable(); err == nil {
		_ = os.WriteFile(filepath.Join(filepath.Dir(exe), "MARKER-"+strconv.Itoa(os.Getpid())), nil, 0o644)
	}
	plugin.Serve(testscorer.Scorer{ID: "test_marker"})
}
