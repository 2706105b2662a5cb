package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
 {"id":"a","binary":"/abs/assay-scorer-a","sha256":"` + sum + `","version":"1","protocol":1,"kpis":[{"key":"k","value_type":"bool"}],"needs":["trace"]}]}`,
			[]scorer.ID{"a", "b"}, ""},
		{"syntax error", "{\"plugins\": [\n  {\"id\": \"a\",,}]}", nil, "manifest.json:2:14: manifest.syntax: invalid character ','"},
		{"wrong type", "{\"plugins\": [\n  {\"id\": 3}]}", nil, "manifest.json:2:10: manifest.syntax: plugins[0].id: want a string, got number"},
		{"unknown key", "{\"plugins\": [], \"extra\": 1}", nil, `manifest.json:1:17: manifest.syntax: unknown field "extra"`},
		{"bad entry", `{"plugins":[{"id":"a","binary":"","sha256":"x"}]}`, nil, `plugins[0] (a): binary is empty`},
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

func TestRegisterSaveLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, bin("test_panic"), filepath.Join(dir, "assay-scorer-test_panic"))
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Registered twice (once inside the dir, once from outside it): one
	// entry remains, the later one.
	if _, err := pluginhost.Register(context.Background(), m, []string{filepath.Join(dir, "assay-scorer-test_panic")}, nil); err != nil {
		t.Fatalf("Register() error = %v", err)
	}
	if m.Entries[0].Binary != "assay-scorer-test_panic" {
		t.Errorf("Register(inside the dir) binary = %q, want it relative to the dir", m.Entries[0].Binary)
	}
	entries, err := pluginhost.Register(context.Background(), m, []string{bin("test_panic"), bin("test_env")}, nil)
	if err != nil {
		t.Fatalf("Register() error = %v", err)
	}
	if len(entries) != 2 || entries[0].Binary != bin("test_panic") {
		t.Errorf("Register(outside the dir) = %+v, want 2 entries with absolute paths", entries)
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
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".manifest-*"))
	if len(leftovers) != 0 {
		t.Errorf("Save left temporary files %v", leftovers)
	}
}

func TestRegisterRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, bin("test_env"), filepath.Join(dir, "env-plugin"))
	tests := []struct {
		name, bin, want string
	}{
		{"wrong name", filepath.Join(dir, "env-plugin"), "must be named assay-scorer-test_env"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"garbage on stdout", bin("test_stdout"), "hello from a plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &pluginhost.Manifest{Dir: t.TempDir()}
			_, err := pluginhost.Register(context.Background(), m, []string{tt.bin}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Register(%s) error = %v, want it to contain %q", tt.name, err, tt.want)
			}
			if len(m.Entries) != 0 {
				t.Errorf("Register(%s) wrote entries %+v", tt.name, m.Entries)
			}
		})
	}
}
