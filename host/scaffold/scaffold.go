package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// SDKModule is the SDK's module path.
const SDKModule = "github.com/assay-eval/assay/sdk"

//go:embed all:template
var templates embed.FS

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Options says what to scaffold and where.
type Options struct {
	ID        string // the scorer ID, snake_case
	Dir       string // the new module's directory; must not exist or be empty
	Module    string // the module path; "" for example.com/<id>
	SDKDir    string // the SDK source directory (holding the SDK's go.mod)
	PluginDir string // the plugin directory the Makefile registers into
}

// data is what the templates see.
type data struct {
	Options
	Pkg      string   // the scorer package's name: the ID without underscores
	Indirect []string // the SDK's requirements, "path version"
}

// Write scaffolds the plugin module and returns the files it wrote,
// relative to o.Dir.
func Write(o Options) ([]string, error) {
	if !snakeCase.MatchString(o.ID) {
		return nil, fmt.Errorf("scaffolding plugin: id %q is not snake_case (like ticket_linked)", o.ID)
	}
	if o.Module == "" {
		o.Module = "example.com/" + o.ID
	}
	if err := emptyDir(o.Dir); err != nil {
		return nil, fmt.Errorf("scaffolding plugin: %w", err)
	}
	reqs, err := requirements(filepath.Join(o.SDKDir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("scaffolding plugin: reading the SDK's go.mod: %w", err)
	}
	d := data{Options: o, Pkg: strings.ReplaceAll(o.ID, "_", ""), Indirect: reqs}
	var wrote []string
	err = fs.WalkDir(templates, "template", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, "template/"), ".tmpl")
		rel = strings.ReplaceAll(rel, "ID", o.ID)
		if err := render(path, filepath.Join(o.Dir, rel), d); err != nil {
			return err
		}
		wrote = append(wrote, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scaffolding plugin: %w", err)
	}
	sum, err := os.ReadFile(filepath.Join(o.SDKDir, "go.sum"))
	if err != nil {
		return nil, fmt.Errorf("scaffolding plugin: reading the SDK's go.sum: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "go.sum"), sum, 0o644); err != nil {
		return nil, fmt.Errorf("scaffolding plugin: %w", err)
	}
	return append(wrote, "go.sum"), nil
}

func render(tmpl, out string, d data) error {
	src, err := templates.ReadFile(tmpl)
	if err != nil {
		return err
	}
	t, err := template.New(filepath.Base(tmpl)).Delims("[[", "]]").Parse(string(src))
	if err != nil {
		return fmt.Errorf("parsing %s: %w", tmpl, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return fmt.Errorf("rendering %s: %w", tmpl, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// emptyDir makes dir, which may exist only as an empty directory.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s exists and is not empty", dir)
	}
	return nil
}

// requirements lists the "path version" of every module the go.mod at path
// requires, so the new module's go.mod lists them as the SDK does.
func requirements(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			in = true
		case in && len(f) == 1 && f[0] == ")":
			in = false
		case in && len(f) == 2:
			out = append(out, f[0]+" "+f[1])
		case len(f) == 3 && f[0] == "require":
			out = append(out, f[1]+" "+f[2])
		}
	}
	return out, sc.Err()
}

// FindSDK returns the SDK source directory: the first of starts, or of
// their parent directories, that holds sdk/go.mod declaring the SDK module
// (a checkout of assay), or that is such an sdk directory itself.
func FindSDK(starts ...string) (string, error) {
	for _, s := range starts {
		if s == "" {
			continue
		}
		dir, err := filepath.Abs(s)
		if err != nil {
			continue
		}
		for {
			for _, cand := range []string{dir, filepath.Join(dir, "sdk")} {
				if isSDK(cand) {
					return cand, nil
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("no SDK source (a directory with the go.mod of %s) in or above %s", SDKModule, strings.Join(starts, ", "))
}

func isSDK(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+SDKModule+"\n"))
}
