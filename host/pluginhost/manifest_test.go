package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

func TestLoadManifest(t *testing.T) {
	t.Parallel()
	sum := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		src     string // "" = no file
		wantIDs []scorer.ID
		wantErr string
	}{
		{"missing file", "", []scorer.ID{}, ""},
		{"two entries", `{"plugins":[{"id":"b","binary":"assay-scorer-b","sha256":"` + sum + `","version":"1","protocol":1,"kpis":[],"needs":[]},
 {"id":"a","binary":"assay-scorer-a","sha256":"` + sum + `","version":"1","protocol":1,"kpis":[{"key":"k","value_type":"bool"}],"needs":["trace"]}]}`,
			[]scorer.ID{"a", "b"}, ""},
		{"syntax error", "{\"plugins\": [\n  {\"id\": \"a\",,}]}", nil, "manifest.json:2:14: manifest.syntax: invalid character ','"},
		{"wrong type", "{\"plugins\": [\n  {\"id\": 3}]}", nil, "manifest.json:2:10: manifest.syntax: plugins[0].id: want a string, got number"},
		{"unknown key", "{\"plugins\": [], \"extra\": 1}", nil, `manifest.json:1:17: manifest.syntax: unknown field "extra"`},
		{"bad entry", `{"plugins":[{"id":"a","binary":"","sha256":"x"}]}`, nil, `plugins[0] (a): binary outside the plugin directory: binary is empty`},
		{"parent path", entry("../../../bin/sh"), nil, `manifest.binary: plugins[0] (a): binary outside the plugin directory: binary "../../../bin/sh" is not a file name inside the plugin directory`},
		{"absolute path", entry("/bin/sh"), nil, `plugins[0] (a): binary outside the plugin directory: binary "/bin/sh" is not a file name`},
		{"sibling directory", entry("../evil/assay-scorer-evil"), nil, `plugins[0] (a): binary outside the plugin directory: binary "../evil/assay-scorer-evil"`},
		{"subdirectory", entry("sub/assay-scorer-a"), nil, `binary "sub/assay-scorer-a" is not a file name`},
		{"dot dot", entry(".."), nil, `binary ".." is not a file name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.src != "" {
				if err := os.WriteFile(filepath.Join(dir, pluginhost.ManifestFile), []byte(tt.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := pluginhost.LoadManifest(dir)
			if tt.wantErr != "" {
				var l diag.List
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &l) {
					t.Fatalf("LoadManifest(%s) error = %v, want a diag.List containing %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadManifest(%s) error = %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.wantIDs, m.IDs()); diff != "" {
				t.Errorf("LoadManifest(%s).IDs() (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// entry is a manifest of one entry whose binary is bin.
func entry(bin string) string {
	return `{"plugins":[{"id":"a","binary":"` + bin + `","sha256":"` + strings.Repeat("ab", 32) + `","version":"1","protocol":1,"kpis":[],"needs":[]}]}`
}

func TestRegisterSaveLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, bin("test_panic"), filepath.Join(dir, "assay-scorer-test_panic"))
	copyFile(t, bin("test_env"), filepath.Join(dir, "assay-scorer-test_env"))
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Registered twice: one entry remains, the later one.
	if _, err := pluginhost.Register(context.Background(), m, []string{filepath.Join(dir, "assay-scorer-test_panic")}, nil); err != nil {
		t.Fatalf("Register() error = %v", err)
	}
	if m.Entries[0].Binary != "assay-scorer-test_panic" {
		t.Errorf("Register(inside the dir) binary = %q, want it relative to the dir", m.Entries[0].Binary)
	}
	entries, err := pluginhost.Register(context.Background(), m, []string{filepath.Join(dir, "assay-scorer-test_panic"), filepath.Join(dir, "assay-scorer-test_env")}, nil)
	if err != nil {
		t.Fatalf("Register() error = %v", err)
	}
	if len(entries) != 2 || entries[0].Binary != "assay-scorer-test_panic" {
		t.Errorf("Register() = %+v, want 2 entries named by file name", entries)
	}
	got, err := pluginhost.LoadManifest(dir)
	if err != nil {
		t.Fatalf("LoadManifest() after Register error = %v", err)
	}
	if diff := cmp.Diff(m.Entries, got.Entries); diff != "" {
		t.Errorf("LoadManifest() after Save (-want +got):\n%s", diff)
	}
	want := map[scorer.ID]scorer.Description{
		"test_env":   {ID: "test_env", Version: "0.0.1", Protocols: []int{1}, KPIs: []scorer.KPI{{Key: "label_seen", ValueType: scorer.Bool}}, Needs: []scorer.Need{scorer.NeedTrace}},
		"test_panic": {ID: "test_panic", Version: "0.0.1", Protocols: []int{1}, KPIs: []scorer.KPI{{Key: "label_seen", ValueType: scorer.Bool}}, Needs: []scorer.Need{scorer.NeedTrace}},
	}
	if diff := cmp.Diff(want, got.Descriptions()); diff != "" {
		t.Errorf("Descriptions() (-want +got):\n%s", diff)
	}
	if e := got.Entries[0]; len(e.SHA256) != 64 || e.SHA256 != sha256File(t, bin("test_env")) {
		t.Errorf("entry sha256 = %q, want the file's", e.SHA256)
	}
	if e := got.Entries[0]; e.Binary != "assay-scorer-test_env" {
		t.Errorf("entry binary = %q, want its file name", e.Binary)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".manifest-*"))
	if len(leftovers) != 0 {
		t.Errorf("Save left temporary files %v", leftovers)
	}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, bin("test_env"), filepath.Join(dir, "env-plugin"))
	copyFile(t, bin("test_stdout"), filepath.Join(dir, "assay-scorer-test_stdout"))
	if err := os.Symlink(bin("test_exit"), filepath.Join(dir, "assay-scorer-test_exit")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, bin, want string
	}{
		{"wrong name", filepath.Join(dir, "env-plugin"), "must be named assay-scorer-test_env"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"garbage on stdout", filepath.Join(dir, "assay-scorer-test_stdout"), "hello from a plugin"},
		{"outside the plugin directory", bin("test_env"), "binary outside the plugin directory: " + bin("test_env") + " is not in the plugin directory"},
		{"symlink out of the plugin directory", filepath.Join(dir, "assay-scorer-test_exit"), "is a symlink to " + bin("test_exit") + ", outside the plugin directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &pluginhost.Manifest{Dir: dir}
			_, err := pluginhost.Register(context.Background(), m, []string{tt.bin}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Register(%s) error = %v, want it to contain %q", tt.name, err, tt.want)
			}
			if strings.Contains(tt.name, "outside") && !errors.Is(err, pluginhost.ErrOutside) {
				t.Errorf("Register(%s) error = %v, want ErrOutside", tt.name, err)
			}
			if len(m.Entries) != 0 {
				t.Errorf("Register(%s) wrote entries %+v", tt.name, m.Entries)
			}
		})
	}
}

// TestConfinedAtLaunch covers the refusals at launch and in Verify (doctor)
// of a manifest entry that passes LoadManifest's name check but whose file
// leaves the plugin directory, or that names a path (a manifest built in
// code, not loaded).
func TestConfinedAtLaunch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink(bin("test_env"), filepath.Join(dir, "assay-scorer-test_env")); err != nil {
		t.Fatal(err)
	}
	copyFile(t, bin("test_env"), filepath.Join(dir, "real"))
	if err := os.Symlink("real", filepath.Join(dir, "inside-link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, binary, want string
	}{
		{"symlink out", "assay-scorer-test_env", "is a symlink to " + bin("test_env") + ", outside the plugin directory"},
		{"absolute path", bin("test_env"), "is not a file name inside the plugin directory"},
		{"parent path", "../" + filepath.Base(dir) + "/real", "is not a file name inside the plugin directory"},
		{"symlink inside", "inside-link", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := base.Entries[slices.IndexFunc(base.Entries, func(e pluginhost.Entry) bool { return e.ID == "test_env" })]
			e.Binary = tt.binary
			m := &pluginhost.Manifest{Dir: dir, Entries: []pluginhost.Entry{e}}
			h := pluginhost.New(m)
			defer h.Close()
			outs := h.Score(context.Background(), "test_env", []*scorer.Case{{ID: "a"}})
			verr := h.Verify(context.Background(), "test_env")
			if tt.want == "" {
				if outs[0].Err != nil || verr != nil {
					t.Fatalf("Score/Verify(%s) = %v, %v, want success", tt.name, outs[0].Err, verr)
				}
				return
			}
			for _, err := range []error{outs[0].Err, verr} {
				if !errors.Is(err, pluginhost.ErrOutside) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "test_env") {
					t.Errorf("Score/Verify(%s) error = %v, want ErrOutside naming test_env and containing %q", tt.name, err, tt.want)
				}
			}
		})
	}
}

// TestSavedManifestReadsInOlderHosts: a host reads the manifest strictly
// (an unknown field is manifest.syntax), and a host before SDK 1.4 does not
// know a KPI's args_read, which it must be free to ignore (docs/protocol.md,
// "Versioning"): the manifest is written without it. The host acts on the
// running binary's Describe for it, not on the manifest.
func TestSavedManifestReadsInOlderHosts(t *testing.T) {
	t.Parallel()
	m := &pluginhost.Manifest{Dir: t.TempDir(), Entries: []pluginhost.Entry{{ID: "a", Binary: "assay-scorer-a",
		SHA256: strings.Repeat("ab", 32), Version: "1", Protocol: 1, Needs: []scorer.Need{"trace"},
		KPIs: []scorer.KPI{{Key: "args", ValueType: "string_list_map", FailureTag: "wrong", ArgsRead: true}}}}}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	// The manifest's shape as a host before SDK 1.4 reads it.
	var old struct {
		Plugins []struct {
			ID       string `json:"id"`
			Binary   string `json:"binary"`
			SHA256   string `json:"sha256"`
			Version  string `json:"version"`
			Protocol int    `json:"protocol"`
			KPIs     []struct {
				Key         string `json:"key"`
				ValueType   string `json:"value_type"`
				Description string `json:"description,omitempty"`
				FailureTag  string `json:"failure_tag,omitempty"`
			} `json:"kpis"`
			Needs []string `json:"needs"`
		} `json:"plugins"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&old); err != nil {
		t.Errorf("a host before SDK 1.4 reads the saved manifest: %v\n%s", err, b)
	}
	if m.Entries[0].KPIs[0].ArgsRead != true {
		t.Errorf("Save() changed the entry in memory")
	}
}
