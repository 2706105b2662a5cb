package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWrite scaffolds into an empty directory and refuses a bad id or a
// directory with files in it (issue 15 item 2; e2e's
// TestPluginsNewScaffold builds and runs what it writes).
func TestWrite(t *testing.T) {
	t.Parallel()
	sdkDir, err := FindSDK(".")
	if err != nil {
		t.Fatalf("FindSDK(.) = %v, want the repository's sdk/", err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	files, err := Write(Options{ID: "acme_refunds", Dir: dir, SDKDir: sdkDir, PluginDir: "/p"})
	if err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	want := []string{".gitignore", "Makefile", "cmd/assay-scorer-acme_refunds/main.go", "go.mod", "scorer.go", "scorer_test.go", "go.sum"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("Write() files (-want +got):\n%s", diff)
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, s := range []string{"module example.com/acme_refunds\n", "replace " + SDKModule + " => " + sdkDir + "\n", "google.golang.org/grpc "} {
		if !strings.Contains(string(mod), s) {
			t.Errorf("go.mod lacks %q:\n%s", s, mod)
		}
	}
	for name, o := range map[string]Options{
		"not snake_case": {ID: "Acme-Refunds", Dir: filepath.Join(t.TempDir(), "x"), SDKDir: sdkDir},
		"non-empty dir":  {ID: "acme", Dir: dir, SDKDir: sdkDir},
	} {
		if _, err := Write(o); err == nil {
			t.Errorf("Write(%s) error = nil, want a refusal", name)
		}
	}
}
