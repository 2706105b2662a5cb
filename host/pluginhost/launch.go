package pluginhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// clientPlugin dispenses a scorerpb.ScorerClient.
type clientPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (clientPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host does not serve scorers")
}

func (clientPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &rpcClient{ScorerClient: scorerpb.NewScorerClient(c), conn: c}, nil
}

// rpcClient is the generated client plus the connection, on which Score
// batches are sent as bytes written by scorerpb.MarshalCases and their
// results read by scorerpb.UnmarshalResults.
type rpcClient struct {
	scorerpb.ScorerClient
	conn *grpc.ClientConn
}

func (c *rpcClient) scoreRaw(ctx context.Context, req *scorerpb.RawMessage) ([]scorerpb.WireResult, error) {
	return scorerpb.ScoreRawResults(ctx, c.conn, req)
}

// instance is one running plugin process.
type instance struct {
	client *plugin.Client
	runner *groupRunner
	rpc    *rpcClient
	desc   scorer.Description
	sum    string // the sha256 of the file that runs, lowercase hex
	tls    bool   // it was started with AutoMTLS: it did not start without (launch)
}

// kill stops the process and its process group at once (it is broken or no
// longer wanted) and cleans up after it in the background.
func (in *instance) kill() {
	in.runner.killGroup()
	go in.client.Kill()
}

type launchConfig struct {
	path         string
	sum          []byte // the sha256 the binary must have; nil: any (register)
	limits       Limits
	logger       hclog.Logger
	startTimeout time.Duration
	callTimeout  time.Duration
	socketDir    string // the run's private directory for plugin sockets (scorerpb.NewSocketDir)
	tls          bool   // launch with go-plugin's AutoMTLS at once (the scorer needed it earlier in the run)
}

// launch opens the binary once, hashes the open file and, when the hash is
// the one wanted, executes that same open file (see runner.go), never the
// path again: a rename between the check and the exec cannot change what
// runs. The plugin gets the allow-listed environment, its own process group
// and resource limits and a start timeout, and is asked to Describe itself
// under a deadline. It listens on a Unix socket that go-plugin puts in a
// directory of its own inside lc.socketDir, which only the user running the
// host can enter, and the host connects to that socket only, without TLS
// (docs/plugins.md, "The connection"; on Windows: TCP with AutoMTLS).
//
// A plugin that wrote nothing on stdout before it exited or closed it may
// be one that serves only behind AutoMTLS, as every host offered before
// this one: it is launched once more with AutoMTLS, and the instance says
// so (tls). When that fails too, the error names both attempts. A plugin
// that ran out of start time is not launched again: a plugin that only
// knows AutoMTLS says so by exiting, and a second launch would make a
// hanging plugin cost the start timeout twice.
func launch(ctx context.Context, lc launchConfig) (*instance, error) {
	in, silent, err := launchOnce(ctx, lc)
	if err == nil || lc.tls || !silent || ctx.Err() != nil {
		return in, err
	}
	lc.tls = true
	in, _, tlsErr := launchOnce(ctx, lc)
	if tlsErr != nil {
		return nil, fmt.Errorf("%w (without TLS); launched again with AutoMTLS: %w", err, tlsErr)
	}
	lc.logger.Warn("plugin did not start without TLS; it was started with AutoMTLS (slower; see docs/plugins.md)", logPath, lc.path)
	return in, nil
}

// launchOnce is one launch, with AutoMTLS when lc.tls (and on Windows);
// silent says the plugin wrote nothing on stdout and exited or closed it
// before the start timeout.
func launchOnce(ctx context.Context, lc launchConfig) (in *instance, silent bool, err error) {
	f, sum, err := openHashed(lc.path)
	if err != nil {
		return nil, false, fmt.Errorf("launching %s: %w", lc.path, err)
	}
	defer f.Close()
	if lc.sum != nil && !bytes.Equal(sum, lc.sum) {
		return nil, false, fmt.Errorf("launching %s: %w: the file has %s, the manifest %s (the binary changed after registration; register it again)",
			lc.path, ErrChecksum, hex.EncodeToString(sum), hex.EncodeToString(lc.sum))
	}
	r := &groupRunner{file: f, name: lc.path, limits: lc.limits, env: scorerpb.PluginEnv(os.Environ()), tls: lc.tls}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{scorerpb.ProtocolVersion: {scorerpb.PluginName: clientPlugin{}}},
		RunnerFunc:       r.start,
		SkipHostEnv:      true,
		AutoMTLS:         lc.tls || !scorerpb.UnixSockets,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: lc.socketDir},
		StartTimeout:     lc.startTimeout,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           lc.logger,
		Stderr:           io.Discard,
		GRPCDialOptions:  dialOptions(),
	})
	begin := time.Now()
	proto, err := client.Client()
	if err != nil {
		r.killGroup()
		client.Kill()
		silent = r.check.RetryWithTLS(time.Since(begin), lc.startTimeout)
		if msg, _, multi := strings.Cut(err.Error(), "\n"); multi && strings.HasPrefix(msg, "Unrecognized remote plugin message") {
			return nil, silent, fmt.Errorf("launching %s: %s (it must write nothing to stdout before the go-plugin handshake, or it is not an assay plugin)", lc.path, msg)
		}
		return nil, silent, fmt.Errorf("launching %s: %w", lc.path, err)
	}
	raw, err := proto.Dispense(scorerpb.PluginName)
	if err != nil {
		r.killGroup()
		client.Kill()
		return nil, false, fmt.Errorf("launching %s: dispensing %s: %w", lc.path, scorerpb.PluginName, err)
	}
	in = &instance{client: client, runner: r, rpc: raw.(*rpcClient), sum: hex.EncodeToString(sum), tls: lc.tls}
	dctx, cancel := context.WithTimeout(ctx, lc.callTimeout)
	defer cancel()
	resp, err := in.rpc.Describe(dctx, &scorerpb.DescribeRequest{})
	if err != nil {
		in.kill()
		return nil, false, fmt.Errorf("launching %s: describe: %w", lc.path, err)
	}
	in.desc = scorerpb.DescriptionFromProto(resp)
	return in, false, nil
}

// openHashed opens the regular file at path and returns it with its sha256.
func openHashed(path string) (*os.File, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	if err == nil {
		_, err = io.Copy(h, f)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("hashing: %w", err)
	}
	return f, h.Sum(nil), nil
}

// FileSHA256 returns the lowercase hex sha256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, sum, err := openHashed(path)
	if err != nil {
		return "", err
	}
	f.Close()
	return hex.EncodeToString(sum), nil
}

// agree checks that a plugin's description matches its manifest entry: id,
// version and KPI keys.
func agree(e Entry, d scorer.Description) error {
	var diffs []string
	if d.ID != e.ID {
		diffs = append(diffs, fmt.Sprintf("id %q, manifest %q", d.ID, e.ID))
	}
	if d.Version != e.Version {
		diffs = append(diffs, fmt.Sprintf("version %q, manifest %q", d.Version, e.Version))
	}
	got, want := kpiKeys(d.KPIs), kpiKeys(e.KPIs)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		diffs = append(diffs, fmt.Sprintf("KPI keys %v, manifest %v", got, want))
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: plugin %s says %s (register the binary again)", ErrMismatch, e.ID, strings.Join(diffs, "; "))
}

func kpiKeys(ks []scorer.KPI) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Key
	}
	sort.Strings(out)
	return out
}

// dialOptions are the host's gRPC options for a plugin's connection: the
// protocol's message limit both ways and scorerpb's transport settings
// (the flow-control windows the host grants).
func dialOptions() []grpc.DialOption {
	return append([]grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(scorerpb.MaxMessage), grpc.MaxCallSendMsgSize(scorerpb.MaxMessage))},
		scorerpb.TransportDialOptions()...)
}
