package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/plugins/builtin"
)

// session is what a command that scores turns works with: the startup check
// passed, the pack loaded with its CEL checks compiled, and the plugin host.
type session struct {
	rt            *runtime
	pack          *pack.Pack
	cel           *kpi.Set
	host          *pluginhost.Host
	descriptions  map[scorer.ID]scorer.Description
	identities    map[scorer.ID]verify.ScorerRef
	scorerVersion string
	hostVersion   string
}

// logger is the host's log: hclog on stderr, warnings and up unless
// ASSAY_LOG_LEVEL says otherwise.
func (a *app) logger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv("ASSAY_LOG_LEVEL"))
	if level == hclog.NoLevel {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "assay", Output: a.stderr, Level: level})
}

// flagCallTimeout is the base of every plugin call's deadline.
const flagCallTimeout = "call-timeout"

// callTimeoutFlag is --call-timeout, for the commands that score turns.
func callTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: flagCallTimeout, Value: pluginhost.DefaultCallTimeout,
		Usage: "base `D` of a plugin call's deadline: a call of n turns may take D + n×D/20; a batch that times out is run a turn at a time and the hung turn is unscored"}
}

// hostOptions are the plugin host's options for a command: its logger,
// --call-timeout, and the built-in scorers in-process when asked.
func (a *app) hostOptions(c *cli.Context, inProcess bool) ([]pluginhost.Option, error) {
	limits, err := pluginLimits(c)
	if err != nil {
		return nil, err
	}
	opts := []pluginhost.Option{pluginhost.WithLogger(a.logger()), pluginhost.WithLimits(limits)}
	if c.IsSet(flagCallTimeout) {
		d := c.Duration(flagCallTimeout)
		if d <= 0 {
			return nil, invalidf("--%s: want a positive duration, got %v", flagCallTimeout, d)
		}
		opts = append(opts, pluginhost.WithCallTimeout(d))
	}
	if inProcess {
		for _, b := range builtin.Scorers() {
			opts = append(opts, pluginhost.WithInProcess(b))
		}
	}
	return opts, nil
}

// openSession runs the startup check, loads the pack and starts the plugin
// host. The pack loads while the database opens (its migrations can take
// as long on a Postgres server); a failed startup check is still reported
// alone, before any problem of the pack. Problems in the pack are printed
// with their source and make the command exit 2.
func (a *app) openSession(c *cli.Context, packPath string, needDB, inProcess bool) (*session, error) {
	checker := kpi.NewChecker()
	var p *pack.Pack
	var diags diag.List
	rt, err := a.startupWhile(c, needDB, func(m invariant.ManifestPlace, s invariant.SchemaPlace) {
		p, diags = pack.Load(packPath, packOptionsOf(m.Manifest, s.Schema, checker))
	})
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			rt.close()
		}
	}()
	if len(diags) > 0 {
		src := map[string][]byte{packPath: nil}
		if p != nil {
			src[packPath] = p.Source
		} else if b, err := os.ReadFile(packPath); err == nil {
			src[packPath] = b
		}
		fmt.Fprint(a.stderr, diags.Render(src))
	}
	if diags.HasErrors() || p == nil {
		return nil, &ExitError{Code: ExitInvalid, Err: fmt.Errorf("pack %s is not valid", packPath)}
	}
	// The source is for rendering the load's diagnostics, done above; the
	// session's commands read none of it (a 10,000-task pack's is 3 MB,
	// held for the whole run otherwise).
	p.Source = nil
	// Nor do they read where a CEL check or a KPI is written: tasks with
	// the same check share one (docs/performance.md, "Verifying many small
	// turns").
	p.DropPositions()
	hopts, err := a.hostOptions(c, inProcess)
	if err != nil {
		return nil, err
	}
	s := newSession(rt, pluginhost.New(rt.manifest, hopts...), p, checker.Set(), inProcess)
	ok = true
	return s, nil
}

// packOptions are the options every pack is loaded with: the schema and
// scorers the startup check loaded, and the CEL checker.
func packOptions(rt *runtime, checker *kpi.Checker) pack.Options {
	return packOptionsOf(rt.manifest, rt.schema, checker)
}

// packOptionsOf are packOptions from the manifest and schema themselves.
func packOptionsOf(m *pluginhost.Manifest, s *pack.Schema, checker *kpi.Checker) pack.Options {
	return pack.Options{Schema: s, Scorers: m.Descriptions(), Checks: []pack.Check{checker}}
}

// newSession is the session for a loaded pack on a plugin host: each
// scorer's identity and the scorer version.
func newSession(rt *runtime, host *pluginhost.Host, p *pack.Pack, cel *kpi.Set, inProcess bool) *session {
	s := &session{rt: rt, pack: p, cel: cel, host: host, descriptions: rt.manifest.Descriptions()}
	bi := ReadBuildInfo()
	s.hostVersion = bi.Version + "+" + bi.Revision
	inProcSHA := ""
	if inProcess {
		inProcSHA = executableSHA()
	}
	builtins := map[scorer.ID]bool{}
	for _, b := range builtin.Scorers() {
		builtins[b.Describe().ID] = true
	}
	s.identities = map[scorer.ID]verify.ScorerRef{}
	for _, e := range rt.manifest.Entries {
		ref := verify.ScorerRef{ID: string(e.ID), Version: e.Version, SHA256: e.SHA256}
		if inProcess && builtins[e.ID] {
			ref.SHA256 = inProcSHA
		}
		s.identities[e.ID] = ref
	}
	s.scorerVersion = scorerVersion(bi.Revision, s.used(), s.identities)
	return s
}

// start launches every scorer the pack uses, in parallel, so a plugin that
// cannot run at all (its binary changed since it was registered, it does not
// start, it describes itself otherwise than the manifest says) stops the
// command before any turn is scored: the host cannot run, exit 3. A plugin
// that breaks on some cases later costs those cases a retry, never the run.
func (s *session) start(ctx context.Context) error {
	used := s.used()
	errs := make([]error, len(used))
	var wg sync.WaitGroup
	for i, id := range used {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.host.Describe(ctx, id); err != nil {
				errs[i] = fmt.Errorf("scorer %s: %w", id, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return hostErr(fmt.Errorf("starting the pack's scorers: %w", err))
	}
	return nil
}

// used lists the scorers the pack's tasks use, upstream scorers included.
func (s *session) used() []scorer.ID {
	seen := map[scorer.ID]bool{}
	for _, t := range s.pack.Tasks {
		seen[t.Scorer] = true
		for _, id := range verify.Upstreams(s.descriptions, t) {
			seen[id] = true
		}
	}
	ids := make([]scorer.ID, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// scorerVersion is sha256 over the host's VCS revision and the sorted
// (id, sha256) of every plugin used: runs with different scorer versions are
// never silently compared.
func scorerVersion(revision string, used []scorer.ID, ids map[scorer.ID]verify.ScorerRef) string {
	h := sha256.New()
	fmt.Fprintf(h, "host %s\n", revision)
	for _, id := range used {
		fmt.Fprintf(h, "%s %s\n", id, ids[id].SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// executableSHA is the sha256 of the running host binary: the code that
// scores when built-in scorers run in-process.
func executableSHA() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// close stops the plugins and closes the database, the two at once: each
// waits on its own (the plugins' exit, SQLite's last checkpoint), and
// neither needs the other.
func (s *session) close() {
	var wg sync.WaitGroup
	if s.host != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.host.Close()
		}()
	}
	if s.rt != nil {
		s.rt.close()
	}
	wg.Wait()
}
