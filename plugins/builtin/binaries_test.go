package builtin

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/sdk/sdktest"
)

// TestBinaries builds every built-in plugin's cmd as `make build` does and
// runs the conformance suite against the binary, over go-plugin as the host
// launches it.
func TestBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binaries")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the plugins")
	}
	dir := t.TempDir()
	for _, s := range Scorers() {
		id := string(s.Describe().ID)
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(dir, "assay-scorer-"+id)
			out, err := exec.Command("go", "build", "-o", bin, "github.com/assay-eval/assay/cmd/assay-scorer-"+id).CombinedOutput()
			if err != nil {
				t.Fatalf("go build %s: %v\n%s", id, err, out)
			}
			sdktest.RunBinary(t, bin)
		})
	}
}
