package pluginhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
	"github.com/assay-eval/assay/pkg/scorer"
)

// ManifestFile is the manifest's file name inside the plugin directory.
const ManifestFile = "manifest.json"

// maxManifest bounds the manifest file LoadManifest reads.
const maxManifest = 16 << 20

// Entry is one installed plugin binary.
type Entry struct {
	ID       scorer.ID     `json:"id"`
	Binary   string        `json:"binary"` // a file name inside the plugin directory (docs/plugins.md, "Confinement")
	SHA256   string        `json:"sha256"` // lowercase hex
	Version  string        `json:"version"`
	Protocol int           `json:"protocol"`
	KPIs     []scorer.KPI  `json:"kpis"`
	Needs    []scorer.Need `json:"needs"`
}

// Description is the entry's description as registered (no launch).
func (e Entry) Description() scorer.Description {
	d := scorer.Description{ID: e.ID, Version: e.Version, KPIs: e.KPIs, Needs: e.Needs}
	if e.Protocol > 0 {
		d.Protocols = []int{e.Protocol}
	}
	return d
}

// Manifest is the set of installed plugins: the source of the scorer set.
type Manifest struct {
	Dir     string  `json:"-"` // the plugin directory
	Entries []Entry `json:"plugins"`
}

// manifestJSON is the file's shape.
type manifestJSON struct {
	Plugins []Entry `json:"plugins"`
}

// Path is the manifest file's path.
func (m *Manifest) Path() string { return filepath.Join(m.Dir, ManifestFile) }

// LoadManifest reads dir/manifest.json. A missing file is an empty manifest;
// a malformed one is a diag.List with the position of the problem.
func LoadManifest(dir string) (*Manifest, error) {
	m := &Manifest{Dir: dir}
	path := m.Path()
	src, err := jsonpos.ReadFile(path, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading plugin manifest: %w", err)
	}
	var f manifestJSON
	if _, err := jsonpos.Decode(src, &f, jsonpos.Options{}); err != nil {
		return nil, diag.List{jsonpos.Source{File: path, Src: src}.Diag("manifest.syntax", "", err)}
	}
	m.Entries = f.Plugins
	if l := m.check(); len(l) > 0 {
		return nil, l
	}
	return m, nil
}

// check validates the entries: ids unique and non-empty, a binary and a
// sha256 for each.
func (m *Manifest) check() diag.List {
	var l diag.List
	pos := diag.Pos{File: m.Path()}
	seen := map[scorer.ID]bool{}
	for i, e := range m.Entries {
		switch {
		case e.ID == "":
			l = append(l, diag.Errorf(pos, "manifest.entry", "plugins[%d]: id is empty", i))
		case seen[e.ID]:
			l = append(l, diag.Errorf(pos, "manifest.entry", "plugins[%d]: id %s appears twice", i, e.ID))
		}
		seen[e.ID] = true
		if err := CheckBinaryName(e.Binary); err != nil {
			l = append(l, diag.Errorf(pos, "manifest.binary", "plugins[%d] (%s): %v", i, e.ID, err))
		}
		if len(e.SHA256) != 64 {
			l = append(l, diag.Errorf(pos, "manifest.entry", "plugins[%d] (%s): sha256 %q is not 64 hex digits", i, e.ID, e.SHA256))
		}
	}
	return l
}

// withoutArgsRead is entries with no KPI marked args_read. A host before
// SDK 1.4 refuses a manifest field it does not know, and must be free to
// ignore args_read (docs/protocol.md, "Versioning"); the host acts on the
// running binary's Describe for it, never on the manifest.
func withoutArgsRead(entries []Entry) []Entry {
	out := slices.Clone(entries)
	for i := range out {
		out[i].KPIs = slices.Clone(out[i].KPIs)
		for j := range out[i].KPIs {
			out[i].KPIs[j].ArgsRead = false
		}
	}
	return out
}

// Save writes the manifest atomically (a temporary file renamed over it),
// entries sorted by id.
func (m *Manifest) Save() error {
	sort.Slice(m.Entries, func(i, j int) bool { return m.Entries[i].ID < m.Entries[j].ID })
	b, err := json.MarshalIndent(manifestJSON{Plugins: withoutArgsRead(m.Entries)}, "", "  ")
	if err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	tmp, err := os.CreateTemp(m.Dir, ".manifest-*.json")
	if err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	if err := os.Rename(tmp.Name(), m.Path()); err != nil {
		return fmt.Errorf("saving plugin manifest: %w", err)
	}
	return nil
}

// IDs returns the ids of every entry, sorted.
func (m *Manifest) IDs() []scorer.ID {
	ids := make([]scorer.ID, len(m.Entries))
	for i, e := range m.Entries {
		ids[i] = e.ID
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Descriptions returns every entry's description by id, from the manifest
// alone (no plugin is launched).
func (m *Manifest) Descriptions() map[scorer.ID]scorer.Description {
	out := make(map[scorer.ID]scorer.Description, len(m.Entries))
	for _, e := range m.Entries {
		out[e.ID] = e.Description()
	}
	return out
}

// Lookup returns the entry with id.
func (m *Manifest) Lookup(id scorer.ID) (Entry, bool) {
	for _, e := range m.Entries {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// BinaryPath is e's binary as a path usable from the working directory
// (unchecked: Binary checks it before anything is read or run).
func (m *Manifest) BinaryPath(e Entry) string {
	return filepath.Join(m.Dir, e.Binary)
}

// CheckBinaryName checks that a manifest entry's binary is a plain file name:
// not empty, no path separator, not "." or "..", not absolute.
func CheckBinaryName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: binary is empty", ErrOutside)
	case name == "." || name == "..", strings.ContainsAny(name, `/\`+"\x00"), filepath.IsAbs(name):
		return fmt.Errorf("%w: binary %q is not a file name inside the plugin directory", ErrOutside, name)
	}
	return nil
}

// Binary returns the path of e's binary after checking that it stays inside
// the plugin directory: a plain file name (CheckBinaryName) whose file, if it
// is a symlink, resolves to a regular file inside the directory.
func (m *Manifest) Binary(e Entry) (string, error) {
	if err := CheckBinaryName(e.Binary); err != nil {
		return "", fmt.Errorf("plugin %s: %w", e.ID, err)
	}
	path := m.BinaryPath(e)
	dir, err := filepath.EvalSymlinks(m.Dir)
	if err != nil {
		return "", fmt.Errorf("plugin %s: resolving the plugin directory: %w", e.ID, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("plugin %s: resolving %s: %w", e.ID, path, err)
	}
	if filepath.Dir(real) != dir {
		return "", fmt.Errorf("plugin %s: %w: %s is a symlink to %s, outside the plugin directory %s", e.ID, ErrOutside, path, real, dir)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("plugin %s: %w", e.ID, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("plugin %s: %w: %s is not a regular file", e.ID, ErrOutside, path)
	}
	return path, nil
}

// put adds e, replacing an entry with the same id.
func (m *Manifest) put(e Entry) {
	for i := range m.Entries {
		if m.Entries[i].ID == e.ID {
			m.Entries[i] = e
			return
		}
	}
	m.Entries = append(m.Entries, e)
}
