package e2e

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// describer dispenses a scorerpb.ScorerClient, for a host of the past.
type describer struct{ plugin.NetRPCUnsupportedPlugin }

func (describer) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("not a plugin")
}

func (describer) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return scorerpb.NewScorerClient(c), nil
}

// TestPreviousHostTransport: a host from before the private Unix socket
// transport offered go-plugin's AutoMTLS (PLUGIN_CLIENT_CERT) and connected
// over TLS. Plugins of today must still serve such a host: a built-in Go
// plugin (the SDK's server is go-plugin's, which serves TLS when offered a
// certificate) and the Node.js example (which serves TLS on 127.0.0.1 then).
func TestPreviousHostTransport(t *testing.T) {
	t.Parallel()
	bins := map[string]string{"answer_keywords": filepath.Join(pluginDir, "assay-scorer-answer_keywords")}
	if nodeReady(t) {
		bins["node_keywords"] = filepath.Join(root, "examples", "node-scorer", "scorer.js")
	}
	for id, path := range bins {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(path)
			cmd.Env = scorerpb.PluginEnv(os.Environ())
			client := plugin.NewClient(&plugin.ClientConfig{
				HandshakeConfig:  scorerpb.Handshake,
				VersionedPlugins: map[int]plugin.PluginSet{scorerpb.ProtocolVersion: {scorerpb.PluginName: describer{}}},
				Cmd:              cmd,
				SkipHostEnv:      true,
				AutoMTLS:         true,
				StartTimeout:     10 * time.Second,
				AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
				Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
			})
			defer client.Kill()
			proto, err := client.Client()
			if err != nil {
				t.Fatalf("starting %s with AutoMTLS: %v", path, err)
			}
			raw, err := proto.Dispense(scorerpb.PluginName)
			if err != nil {
				t.Fatalf("dispensing %s: %v", path, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d, err := raw.(scorerpb.ScorerClient).Describe(ctx, &scorerpb.DescribeRequest{})
			if err != nil {
				t.Fatalf("Describe over AutoMTLS (%s) error = %v", path, err)
			}
			if d.GetId() != id {
				t.Errorf("Describe over AutoMTLS (%s) id = %q, want %q", path, d.GetId(), id)
			}
		})
	}
}
