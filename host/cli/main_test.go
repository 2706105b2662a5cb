package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/plugins/builtin"
)

// TestMain gives the package's tests a plugin directory whose manifest lists
// the six built-in scorers (descriptions only: the startup check and the KPI
// catalog need no binaries) and a database path in a temporary directory, so
// no test writes into the source tree. Tests that need another setup pass
// --plugin-dir and --db themselves.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "assay-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir := filepath.Join(dir, "plugins")
	if err := writeBuiltinManifest(pluginDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("ASSAY_PLUGIN_DIR", pluginDir)
	os.Setenv("ASSAY_DB", filepath.Join(dir, "assay.db"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeBuiltinManifest writes a manifest of the built-in scorers to dir.
func writeBuiltinManifest(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		return err
	}
	for _, s := range builtin.Scorers() {
		d := s.Describe()
		m.Entries = append(m.Entries, pluginhost.Entry{ID: d.ID, Binary: "assay-scorer-" + string(d.ID),
			SHA256: fmt.Sprintf("%064x", 0), Version: d.Version, Protocol: 1, KPIs: d.KPIs, Needs: d.Needs})
	}
	return m.Save()
}
