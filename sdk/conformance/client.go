package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/internal/wire"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// Client is a scorer behind a transport, as the checks talk to it.
type Client interface {
	// Describe asks the scorer for its description.
	Describe(ctx context.Context) (sdk.Description, error)
	// Score scores a batch and returns one outcome per case, in order; an
	// error means the whole call failed.
	Score(ctx context.Context, cases []*sdk.Case) ([]batchrun.Outcome, error)
}

// grpcClient is a Client over a scorerpb.ScorerClient.
type grpcClient struct {
	rpc scorerpb.ScorerClient
}

func (c grpcClient) Describe(ctx context.Context) (sdk.Description, error) {
	r, err := c.rpc.Describe(ctx, &scorerpb.DescribeRequest{})
	if err != nil {
		return sdk.Description{}, fmt.Errorf("describe: %w", err)
	}
	return scorerpb.DescriptionFromProto(r), nil
}

func (c grpcClient) Score(ctx context.Context, cases []*sdk.Case) ([]batchrun.Outcome, error) {
	req, err := scorerpb.EncodeScoreRequest(cases)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.Score(ctx, req, grpc.MaxCallRecvMsgSize(scorerpb.MaxMessage), grpc.MaxCallSendMsgSize(scorerpb.MaxMessage))
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	if err := scorerpb.CheckResults(cases, resp); err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	outs := make([]batchrun.Outcome, len(cases))
	for i, r := range resp.GetResults() {
		res, err := scorerpb.ResultFromProto(r)
		outs[i] = batchrun.Outcome{Result: res, Err: err}
	}
	return outs, nil
}

// Serve serves s in-process over real gRPC (go-plugin's test mode) and
// returns a client connected to it and a function that stops both.
func Serve(s sdk.Scorer) (Client, func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	logger := hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off})
	p := &wire.Plugin{Impl: s, Desc: batchrun.Describe(s), Logger: logger}
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: wire.Plugins(p),
		GRPCServer:       wire.GRPCServerFunc,
		Logger:           logger,
		Test:             &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed},
	})
	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		cancel()
		return nil, nil, errors.New("serving in-process: the server stopped before it started")
	case <-time.After(10 * time.Second):
		cancel()
		return nil, nil, errors.New("serving in-process: no reattach config after 10s")
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  scorerpb.Handshake,
		Plugins:          wire.Plugins(&wire.Plugin{})[1],
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
	})
	stop := func() {
		client.Kill()
		cancel()
		<-closed
	}
	c, err := dispense(client)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("serving in-process: %w", err)
	}
	return c, stop, nil
}

func dispense(client *plugin.Client) (Client, error) {
	proto, err := client.Client()
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	raw, err := proto.Dispense(scorerpb.PluginName)
	if err != nil {
		return nil, fmt.Errorf("dispensing %s: %w", scorerpb.PluginName, err)
	}
	rpc, ok := raw.(scorerpb.ScorerClient)
	if !ok {
		return nil, fmt.Errorf("dispensing %s: got %T", scorerpb.PluginName, raw)
	}
	return grpcClient{rpc: rpc}, nil
}

// Launch starts the plugin binary at path as the host does (go-plugin, gRPC,
// an allow-listed environment, a Unix socket in a directory only this user
// can enter, without TLS; on Windows TCP with AutoMTLS) and returns a client
// and a function that kills it and removes the directory. A plugin that
// writes nothing on stdout and exits before the start timeout is launched
// once more with AutoMTLS, as the host does (CheckBinary reports it as a finding). The
// plugin's stderr log goes to stderr (nil: discarded).
func Launch(path string, stderr io.Writer) (Client, func(), error) {
	c, stop, _, err := launch(path, stderr)
	return c, stop, err
}

// launch is Launch, and says whether the plugin needed AutoMTLS.
func launch(path string, stderr io.Writer) (Client, func(), bool, error) {
	if stderr == nil {
		stderr = io.Discard
	}
	c, stop, silent, err := launchOnce(path, stderr, false)
	if err == nil || !silent {
		return c, stop, false, err
	}
	c, stop, _, tlsErr := launchOnce(path, stderr, true)
	if tlsErr != nil {
		return nil, nil, false, fmt.Errorf("%w (without TLS); launched again with AutoMTLS: %w", err, tlsErr)
	}
	return c, stop, true, nil
}

// startTimeout is how long a plugin has to finish its handshake, as in the
// host.
const startTimeout = 10 * time.Second

// launchOnce is one launch, with AutoMTLS when tls (and on Windows); silent
// says the plugin wrote nothing on stdout and exited or closed it before
// the start timeout (scorerpb.AddrCheck.RetryWithTLS).
func launchOnce(path string, stderr io.Writer, tls bool) (c Client, stop func(), silent bool, err error) {
	sockets, err := scorerpb.NewSocketDir()
	if err != nil {
		return nil, nil, false, fmt.Errorf("launching %s: %w", path, err)
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: stderr, Level: hclog.Warn})
	var check *scorerpb.AddrCheck
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: wire.Plugins(&wire.Plugin{}),
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, socketDir string) (runner.Runner, error) {
			cmd := exec.Command(path)
			cmd.Env = append(scorerpb.PluginEnv(os.Environ()), spec.Env...)
			r, err := checkedRunner(cmd, socketDir, tls)
			if r != nil {
				check = r.check
			}
			return r, err
		},
		SkipHostEnv:      true,
		AutoMTLS:         tls || !scorerpb.UnixSockets,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: sockets.Path},
		StartTimeout:     startTimeout,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
	})
	stop = func() {
		client.Kill()
		sockets.Remove()
	}
	begin := time.Now()
	c, err = dispense(client)
	if err != nil {
		silent = check.RetryWithTLS(time.Since(begin), startTimeout)
		stop()
		return nil, nil, silent, fmt.Errorf("launching %s: %w", path, err)
	}
	return c, stop, false, nil
}

// checkedRunner runs cmd for go-plugin, and accepts as the handshake's address
// only a Unix socket in the directory go-plugin made for the plugin
// (scorerpb.AddrCheck); with AutoMTLS (tls), any address, as go-plugin has it.
func checkedRunner(cmd *exec.Cmd, socketDir string, tls bool) (*cmdRunner, error) {
	r := &cmdRunner{cmd: cmd}
	var err error
	if r.stdout, r.stderr, r.check, err = scorerpb.RunnerPipes(cmd, socketDir, tls); err != nil {
		return nil, err
	}
	return r, nil
}

// cmdRunner runs a plugin as go-plugin's own runner does, with the address
// check.
type cmdRunner struct {
	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser
	check          *scorerpb.AddrCheck
}

func (r *cmdRunner) Start(context.Context) error     { return r.cmd.Start() }
func (r *cmdRunner) Wait(context.Context) error      { return r.cmd.Wait() }
func (r *cmdRunner) Diagnose(context.Context) string { return "" }
func (r *cmdRunner) Stdout() io.ReadCloser           { return r.stdout }
func (r *cmdRunner) Stderr() io.ReadCloser           { return r.stderr }
func (r *cmdRunner) Name() string                    { return r.cmd.Path }

func (r *cmdRunner) Kill(context.Context) error {
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *cmdRunner) ID() string {
	if r.cmd.Process == nil {
		return ""
	}
	return strconv.Itoa(r.cmd.Process.Pid)
}

func (r *cmdRunner) PluginToHost(network, addr string) (string, string, error) {
	return r.check.PluginToHost(network, addr)
}

func (r *cmdRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
