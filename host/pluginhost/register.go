package pluginhost

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// BinaryPrefix starts every scorer plugin's file name: assay-scorer-<id>.
const BinaryPrefix = "assay-scorer-"

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Register installs each binary into m: it hashes the file, launches it
// (pinned to that hash), asks it to Describe itself and writes the entry,
// replacing an entry with the same id; then it saves the manifest. A binary
// inside m.Dir is stored relative to it. It returns the entries written.
func Register(ctx context.Context, m *Manifest, binaries []string, logger hclog.Logger) ([]Entry, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	var out []Entry
	for _, bin := range binaries {
		e, err := register(ctx, m, bin, logger)
		if err != nil {
			return out, fmt.Errorf("registering %s: %w", bin, err)
		}
		m.put(e)
		out = append(out, e)
	}
	if err := m.Save(); err != nil {
		return out, err
	}
	return out, nil
}

func register(ctx context.Context, m *Manifest, bin string, logger hclog.Logger) (Entry, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return Entry{}, err
	}
	name, err := inside(m.Dir, abs)
	if err != nil {
		return Entry{}, err
	}
	sockets, err := scorerpb.NewSocketDir()
	if err != nil {
		return Entry{}, err
	}
	defer sockets.Remove()
	in, err := launch(ctx, launchConfig{
		path: abs, limits: DefaultLimits(), logger: logger.Named(filepath.Base(abs)),
		startTimeout: 10 * time.Second, callTimeout: 10 * time.Second, socketDir: sockets.Path,
	})
	if err != nil {
		return Entry{}, err
	}
	defer in.client.Kill()
	d := in.desc
	if !snakeCase.MatchString(string(d.ID)) {
		return Entry{}, fmt.Errorf("plugin id %q is not snake_case", d.ID)
	}
	if d.Version == "" {
		return Entry{}, fmt.Errorf("plugin %s has no version", d.ID)
	}
	if base := strings.TrimSuffix(name, ".exe"); base != BinaryPrefix+string(d.ID) {
		return Entry{}, fmt.Errorf("%w: plugin %s must be named %s%s, not %s", ErrBinaryName, d.ID, BinaryPrefix, d.ID, base)
	}
	return Entry{
		ID:       d.ID,
		Binary:   name,
		SHA256:   in.sum,
		Version:  d.Version,
		Protocol: in.client.NegotiatedVersion(),
		KPIs:     nonNilKPIs(d.KPIs),
		Needs:    nonNilNeeds(d.Needs),
	}, nil
}

// inside returns the file name of binary abs after checking that it is a
// file of the plugin directory dir, not a symlink out of it (docs/plugins.md,
// "Confinement").
func inside(dir, abs string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	name := filepath.Base(abs)
	if filepath.Dir(abs) != d {
		if rd, err1 := filepath.EvalSymlinks(d); err1 != nil || filepath.Dir(abs) != rd {
			return "", fmt.Errorf("%w: %s is not in the plugin directory %s (copy it there, then register it)", ErrOutside, abs, d)
		}
	}
	if _, err := (&Manifest{Dir: d}).Binary(Entry{ID: scorer.ID(name), Binary: name}); err != nil {
		return "", err
	}
	return name, nil
}

func nonNilKPIs(k []scorer.KPI) []scorer.KPI {
	if k == nil {
		return []scorer.KPI{}
	}
	return k
}

func nonNilNeeds(n []scorer.Need) []scorer.Need {
	if n == nil {
		return []scorer.Need{}
	}
	return n
}
