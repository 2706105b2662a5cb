package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// maxMessage is the largest gRPC message either side accepts: a batch
// carries whole turns and snapshots.
const maxMessage = 256 << 20

// envAllowList is every variable of the host's environment a plugin sees;
// nothing else (no ASSAY_DB, no PGPASSWORD, no cloud credentials) reaches it.
var envAllowList = []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "LANG", "LANGUAGE", "TZ"}

// pluginEnv is the environment a plugin is started with.
func pluginEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
			continue
		}
		for _, a := range envAllowList {
			if k == a {
				env = append(env, kv)
				break
			}
		}
	}
	return env
}

// clientPlugin dispenses a scorerpb.ScorerClient.
type clientPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (clientPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host does not serve scorers")
}

func (clientPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return scorerpb.NewScorerClient(c), nil
}

var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  scorerpb.ProtocolVersion,
	MagicCookieKey:   scorerpb.MagicCookieKey,
	MagicCookieValue: scorerpb.MagicCookieValue,
}

// instance is one running plugin process.
type instance struct {
	client *plugin.Client
	rpc    scorerpb.ScorerClient
	desc   scorer.Description
}

// kill stops the process at once (it is broken or no longer wanted) and
// cleans up after it in the background.
func (in *instance) kill() {
	if rc := in.client.ReattachConfig(); rc != nil && rc.Pid > 0 {
		if p, err := os.FindProcess(rc.Pid); err == nil {
			_ = p.Kill()
		}
	}
	go in.client.Kill()
}

type launchConfig struct {
	path         string
	sum          []byte // the sha256 the binary must have
	logger       hclog.Logger
	startTimeout time.Duration
	callTimeout  time.Duration
}

// launch starts the binary directly (no shell) after go-plugin verified its
// sha256, with the allow-listed environment, AutoMTLS and a start timeout,
// and asks it to Describe itself under a deadline.
func launch(ctx context.Context, lc launchConfig) (*instance, error) {
	cmd := exec.Command(lc.path)
	cmd.Env = pluginEnv()
	cmd.SysProcAttr = dieWithParent()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: map[int]plugin.PluginSet{scorerpb.ProtocolVersion: {scorerpb.PluginName: clientPlugin{}}},
		Cmd:              cmd,
		SecureConfig:     &plugin.SecureConfig{Checksum: lc.sum, Hash: sha256.New()},
		SkipHostEnv:      true,
		AutoMTLS:         true,
		StartTimeout:     lc.startTimeout,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           lc.logger,
		Stderr:           io.Discard,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))},
	})
	proto, err := client.Client()
	if err != nil {
		client.Kill()
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			got, herr := FileSHA256(lc.path)
			if herr != nil {
				return nil, fmt.Errorf("launching %s: %w: %v", lc.path, ErrChecksum, herr)
			}
			return nil, fmt.Errorf("launching %s: %w: the file has %s, the manifest %s (the binary changed after registration; register it again)",
				lc.path, ErrChecksum, got, hex.EncodeToString(lc.sum))
		}
		if msg, _, multi := strings.Cut(err.Error(), "\n"); multi && strings.HasPrefix(msg, "Unrecognized remote plugin message") {
			return nil, fmt.Errorf("launching %s: %s (it must write nothing to stdout before the go-plugin handshake, or it is not an assay plugin)", lc.path, msg)
		}
		return nil, fmt.Errorf("launching %s: %w", lc.path, err)
	}
	raw, err := proto.Dispense(scorerpb.PluginName)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("launching %s: dispensing %s: %w", lc.path, scorerpb.PluginName, err)
	}
	in := &instance{client: client, rpc: raw.(scorerpb.ScorerClient)}
	dctx, cancel := context.WithTimeout(ctx, lc.callTimeout)
	defer cancel()
	resp, err := in.rpc.Describe(dctx, &scorerpb.DescribeRequest{})
	if err != nil {
		in.kill()
		return nil, fmt.Errorf("launching %s: describe: %w", lc.path, err)
	}
	in.desc = scorerpb.DescriptionFromProto(resp)
	return in, nil
}

// FileSHA256 returns the lowercase hex sha256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
