package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/cockpit"
	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/server"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
)

func (a *app) serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the harness API (/v1) and the cockpit over HTTP",
		UsageText: `assay serve [--addr 127.0.0.1:8080] [--log-format text|json] [--max-body-mib N]
             [--runs-per-token N] [--in-process] [--shutdown-timeout D]

One process serving the JSON API (packs, turn uploads verified on the same engine
as assay verify, their status, summary and results) and the cockpit, signed in
with tokens from assay tokens create. /healthz answers while the process runs;
/readyz runs the three-place check and pings the database. On SIGINT or SIGTERM
it stops accepting requests and waits --shutdown-timeout for verifications in
flight; one still running then is interrupted and resumes when uploaded again.
docs/serve.md is the API reference.

Example:
   assay tokens create --company acme
   assay serve --addr 127.0.0.1:8080 --log-format json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "listen on `HOST:PORT`"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log `FORMAT`: text or json"},
			&cli.Int64Flag{Name: "max-body-mib", Value: server.DefaultBodyLimit >> 20, Usage: "request body cap in `MiB`"},
			&cli.IntFlag{Name: "runs-per-token", Value: server.DefaultRunsPerToken, Usage: "queued and running uploads a token may have (429 beyond)"},
			&cli.BoolFlag{Name: "in-process", Usage: "run the built-in scorers inside the host"},
			&cli.IntFlag{Name: "batch-size", Value: 64, Usage: "cases per plugin call"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: 30 * time.Second, Usage: "how long shutdown waits for verifications in flight"},
			callTimeoutFlag(),
		},
		Action: a.serve,
	}
}

func (a *app) serve(c *cli.Context) error {
	logger, err := serveLogger(c.String("log-format"), a)
	if err != nil {
		return err
	}
	if c.Int64("max-body-mib") <= 0 || c.Int("runs-per-token") <= 0 {
		return invalidf("--max-body-mib and --runs-per-token: want positive numbers")
	}
	rt, err := a.startup(c, true)
	if err != nil {
		return err
	}
	defer rt.close()
	hopts, err := a.hostOptions(c, c.Bool("in-process"))
	if err != nil {
		return err
	}
	host := pluginhost.New(rt.manifest, hopts...)
	defer host.Close()
	if n, err := rt.store.FailUnfinishedUploads(c.Context, "the server stopped before this run finished; upload the same turns again to resume"); err != nil {
		return hostErr(err)
	} else if n > 0 {
		logger.Warn("runs left unfinished by a previous server marked failed", "count", n)
	}
	v := &serveVerifier{rt: rt, host: host, inProcess: c.Bool("in-process"), batchSize: c.Int("batch-size"), logger: logger}
	cfg := server.Config{Store: rt.store, Verifier: v, Logger: logger, BodyLimit: c.Int64("max-body-mib") << 20,
		RunsPerToken: c.Int("runs-per-token"), Ready: readyCheck(a.startupConfigOf(c, false))}
	cfg.Cockpit = cockpit.New(cockpit.Config{Store: rt.store, LoadPack: v.LoadPack, Logger: logger})
	return a.listen(c.Context, c.String("addr"), server.New(cfg), c.Duration("shutdown-timeout"), logger)
}

// listen serves until ctx ends, then shuts down gracefully.
func (a *app) listen(ctx context.Context, addr string, srv *server.Server, grace time.Duration, logger hclog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return hostErr(fmt.Errorf("listening on %s: %w", addr, err))
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stderr, "assay serve: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return hostErr(fmt.Errorf("serving: %w", err))
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", grace.String())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	herr := hs.Shutdown(sctx)
	if err := srv.Shutdown(sctx); err != nil {
		return hostErr(err)
	}
	if herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		return hostErr(fmt.Errorf("shutting down: %w", herr))
	}
	return nil
}

// serveLogger is the server's log: hclog at info (ASSAY_LOG_LEVEL
// overrides), JSON with --log-format json.
func serveLogger(format string, a *app) (hclog.Logger, error) {
	if format != "text" && format != "json" {
		return nil, invalidf("--log-format: want text or json, got %q", format)
	}
	level := hclog.LevelFromString(os.Getenv("ASSAY_LOG_LEVEL"))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{Name: "assay", Output: a.stderr, Level: level, JSONFormat: format == "json"}), nil
}

// readyCheck is /readyz: the three places load and agree.
func readyCheck(cfg invariant.Config) func(context.Context) error {
	return func(ctx context.Context) error {
		p := invariant.Load(ctx, cfg)
		defer p.Close()
		if err := p.Err(); err != nil {
			return err
		}
		if r := p.Report(); !r.OK() {
			return errors.New(r.Error())
		}
		return nil
	}
}

// serveVerifier is the server's Verifier: packs load and verify exactly as
// for `assay pack validate` and `assay verify`, on one shared plugin host.
type serveVerifier struct {
	rt        *runtime
	host      *pluginhost.Host
	inProcess bool
	batchSize int
	logger    hclog.Logger
}

func (v *serveVerifier) LoadPack(file string, src []byte) (*pack.Pack, diag.List) {
	return pack.Parse(file, src, packOptions(v.rt, kpi.NewChecker()))
}

func (v *serveVerifier) Engine(file string, src []byte) (verify.Config, func(context.Context) error, error) {
	checker := kpi.NewChecker()
	p, ds := pack.Parse(file, src, packOptions(v.rt, checker))
	if p == nil || ds.HasErrors() {
		return verify.Config{}, nil, fmt.Errorf("pack %s no longer loads: %w", file, ds.Errors())
	}
	s := newSession(v.rt, v.host, p, checker.Set(), v.inProcess)
	return s.engineConfig(v.batchSize, v.logger, nil), s.start, nil
}
