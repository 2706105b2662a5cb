package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/internal/wire"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// DescribeFlag makes a plugin binary print its description as JSON on
// stdout and exit, without the go-plugin handshake.
const DescribeFlag = "--describe"

// Serve is the whole main() of a plugin: it serves s over go-plugin's gRPC
// transport (protocol 1) until the host stops it. Batches are scored
// concurrently with a bound; a panic, an error or an out-of-range score fails
// only its own case. Logs go to stderr as hclog JSON; stdout carries only the
// handshake. Run with --describe, the binary prints its description as JSON
// and exits instead.
func Serve(s sdk.Scorer) {
	desc := batchrun.Describe(s)
	for _, a := range os.Args[1:] {
		if a == DescribeFlag || a == "-describe" {
			if err := writeDescription(os.Stdout, desc); err != nil {
				fmt.Fprintf(os.Stderr, "writing description: %v\n", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	if os.Getenv("GOGC") == "" {
		// A plugin's live heap is small (one batch at a time) while it
		// allocates fast (decoding cases): collecting less often costs a
		// few megabytes and saves the host's run CPU it shares.
		debug.SetGCPercent(400)
	}
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       string(desc.ID),
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: wire.Plugins(&wire.Plugin{Impl: s, Desc: desc, Logger: logger}),
		GRPCServer:       wire.GRPCServerFunc,
		Logger:           logger,
	})
}

func writeDescription(w *os.File, d sdk.Description) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
