package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pluginhost"
)

func pluginsMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestPluginsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	dir := filepath.Join(t.TempDir(), "plugins")
	bin := filepath.Join(dir, pluginhost.BinaryPrefix+"answer_keywords")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/assay-scorer-answer_keywords")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	code, out, errOut := pluginsMain("--plugin-dir", dir, "plugins", "register", bin)
	if code != ExitOK || !strings.Contains(out, "registered answer_keywords") {
		t.Fatalf("plugins register = exit %d, %q, %q; want exit 0 and the entry", code, out, errOut)
	}
	m, err := pluginhost.LoadManifest(dir)
	if err != nil || len(m.Entries) != 1 || m.Entries[0].Binary != pluginhost.BinaryPrefix+"answer_keywords" {
		t.Fatalf("manifest after register = %+v, %v; want one entry with a path relative to the plugin dir", m, err)
	}

	// A binary named for another id is a usage error (exit 2), and the
	// manifest keeps its entry.
	misnamed := filepath.Join(dir, pluginhost.BinaryPrefix+"ticket_linked")
	if b, err := os.ReadFile(bin); err != nil || os.WriteFile(misnamed, b, 0o755) != nil {
		t.Fatalf("copying %s: %v", bin, err)
	}
	code, _, errOut = pluginsMain("--plugin-dir", dir, "plugins", "register", misnamed)
	if code != ExitInvalid || !strings.Contains(errOut, "must be named assay-scorer-answer_keywords, not assay-scorer-ticket_linked") {
		t.Errorf("plugins register %s = exit %d, %q; want exit 2 naming the right name", misnamed, code, errOut)
	}

	// A binary outside the plugin directory is refused (exit 3), naming it.
	outside := filepath.Join(t.TempDir(), pluginhost.BinaryPrefix+"answer_keywords")
	if b, err := os.ReadFile(bin); err != nil || os.WriteFile(outside, b, 0o755) != nil {
		t.Fatalf("copying %s: %v", bin, err)
	}
	code, _, errOut = pluginsMain("--plugin-dir", dir, "plugins", "register", outside)
	if code != ExitHost || !strings.Contains(errOut, outside+" is not in the plugin directory") {
		t.Errorf("plugins register %s = exit %d, %q; want exit 3 naming the file outside the plugin directory", outside, code, errOut)
	}
	if err := os.Remove(misnamed); err != nil {
		t.Fatal(err)
	}

	code, out, _ = pluginsMain("--plugin-dir", dir, "plugins", "list")
	if code != ExitOK || !strings.Contains(out, "answer_keywords,min_answer_length") || !strings.Contains(out, m.Entries[0].SHA256[:12]) || !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Errorf("plugins list = exit %d, %q; want the entry with its KPI keys, short sha256 and hash ok", code, out)
	}

	code, out, _ = pluginsMain("plugins", "conformance", bin)
	if code != ExitOK || strings.Contains(out, "FAIL") || strings.Count(out, "ok ") != 8 {
		t.Errorf("plugins conformance = exit %d, %q; want eight ok lines and exit 0", code, out)
	}

	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("tampered")
	f.Close()
	code, out, _ = pluginsMain("--plugin-dir", dir, "plugins", "list", "--format", "json")
	var rows []struct {
		ID   string `json:"id"`
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal([]byte(out), &rows); code != ExitOK || err != nil || len(rows) != 1 || rows[0].Hash != "changed" {
		t.Errorf("plugins list --format json after tampering = exit %d, %q (%v); want hash changed", code, out, err)
	}
}

// TestDoctorConfinement covers doctor's refusal of a manifest entry that
// leaves the plugin directory: a path in the manifest, or a symlink out.
func TestDoctorConfinement(t *testing.T) {
	t.Parallel()
	sum := strings.Repeat("ab", 32)
	tests := []struct {
		name, binary, want string
	}{
		{"parent path", "../../../bin/sh", `binary "../../../bin/sh" is not a file name inside the plugin directory`},
		{"absolute path", "/bin/sh", `binary "/bin/sh" is not a file name inside the plugin directory`},
		{"sibling directory", "../evil/assay-scorer-evil", `binary "../evil/assay-scorer-evil" is not a file name`},
		{"symlink out", "assay-scorer-evil", "assay-scorer-evil is a symlink to /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Symlink("/bin/sh", filepath.Join(dir, "assay-scorer-evil")); err != nil {
				t.Fatal(err)
			}
			src := `{"plugins":[{"id":"evil","binary":"` + tt.binary + `","sha256":"` + sum + `","version":"1","protocol":1,"kpis":[],"needs":[]}]}`
			if err := os.WriteFile(filepath.Join(dir, pluginhost.ManifestFile), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := pluginsMain("--plugin-dir", dir, "--db", filepath.Join(t.TempDir(), "a.db"), "doctor")
			if code != ExitHost || !strings.Contains(out+errOut, tt.want) || !strings.Contains(out+errOut, "evil") || strings.Contains(out, "all checks passed") {
				t.Errorf("doctor with binary %q = exit %d\n%s%s\nwant exit 3 naming the entry and %q", tt.binary, code, out, errOut, tt.want)
			}
		})
	}
}

func TestPluginsCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"register nothing", []string{"plugins", "register"}, ExitInvalid, "name at least one plugin binary"},
		{"register missing", []string{"--plugin-dir", t.TempDir(), "plugins", "register", "/nonexistent/assay-scorer-x"}, ExitInvalid, "/nonexistent/assay-scorer-x: no such file"},
		{"conformance missing", []string{"plugins", "conformance", "/nonexistent/assay-scorer-x"}, ExitInvalid, "no such file"},
		{"conformance not a plugin", []string{"plugins", "conformance", "/bin/true"}, ExitGate, "FAIL  launch"},
		{"list empty", []string{"--plugin-dir", t.TempDir(), "plugins", "list"}, ExitOK, "no plugins in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := pluginsMain(tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("assay %v = exit %d, %q, %q; want exit %d mentioning %q", tt.args, code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestPluginLimitFlags covers the flags and variables that set the plugin
// limits (docs/plugins.md, "Limits").
func TestPluginLimitFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    pluginhost.Limits
		wantErr string
	}{
		{"defaults", nil, pluginhost.DefaultLimits(), ""},
		{"set", []string{"--plugin-memory-mb", "512", "--plugin-cpu", "90s", "--plugin-procs", "300", "--max-checks", "10"},
			pluginhost.Limits{AddressSpace: 512 << 20, CPU: 90 * time.Second, Processes: 300, MaxChecks: 10}, ""},
		{"off", []string{"--plugin-memory-mb", "0", "--plugin-cpu", "0"},
			pluginhost.Limits{MaxChecks: pluginhost.DefaultMaxChecks}, ""},
		{"cpu under a second", []string{"--plugin-cpu", "500ms"}, pluginhost.Limits{}, "--plugin-cpu: want at least 1s"},
		{"no checks", []string{"--max-checks", "0"}, pluginhost.Limits{}, "--max-checks: want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got pluginhost.Limits
			var err error
			app := &cli.App{HideHelp: true, HideVersion: true, Flags: pluginLimitFlags(), Action: func(c *cli.Context) error { // no shared global help flag: the subtests run in parallel
				got, err = pluginLimits(c)
				return nil
			}}
			if rerr := app.Run(append([]string{"assay"}, tt.args...)); rerr != nil {
				t.Fatal(rerr)
			}
			if tt.wantErr != "" {
				if code, _ := exitCode(err); code != ExitInvalid || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("pluginLimits(%v) error = %v, want exit 2 with %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("pluginLimits(%v) error = %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pluginLimits(%v) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}
