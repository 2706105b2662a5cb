package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
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
// AutoMTLS, an allow-listed environment) and returns a client and a function
// that kills it. The plugin's stderr log goes to stderr (nil: discarded).
func Launch(path string, stderr io.Writer) (Client, func(), error) {
	if stderr == nil {
		stderr = io.Discard
	}
	cmd := exec.Command(path)
	cmd.Env = scorerpb.PluginEnv(os.Environ())
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: wire.Plugins(&wire.Plugin{}),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AutoMTLS:         true,
		StartTimeout:     10 * time.Second,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: stderr, Level: hclog.Warn}),
	})
	c, err := dispense(client)
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("launching %s: %w", path, err)
	}
	return c, client.Kill, nil
}
