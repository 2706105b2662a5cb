package pluginhost

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/pkg/scorer"
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
	sum, err := FileSHA256(abs)
	if err != nil {
		return Entry{}, fmt.Errorf("hashing: %w", err)
	}
	raw, _ := hex.DecodeString(sum)
	in, err := launch(ctx, launchConfig{
		path: abs, sum: raw, logger: logger.Named(filepath.Base(abs)),
		startTimeout: 10 * time.Second, callTimeout: 10 * time.Second,
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
	name := strings.TrimSuffix(filepath.Base(abs), ".exe")
	if name != BinaryPrefix+string(d.ID) {
		return Entry{}, fmt.Errorf("%w: plugin %s must be named %s%s, not %s", ErrBinaryName, d.ID, BinaryPrefix, d.ID, name)
	}
	return Entry{
		ID:       d.ID,
		Binary:   manifestPath(m.Dir, abs),
		SHA256:   sum,
		Version:  d.Version,
		Protocol: in.client.NegotiatedVersion(),
		KPIs:     nonNilKPIs(d.KPIs),
		Needs:    nonNilNeeds(d.Needs),
	}, nil
}

// manifestPath is abs relative to dir when it lies inside dir, else abs.
func manifestPath(dir, abs string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(d, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
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
