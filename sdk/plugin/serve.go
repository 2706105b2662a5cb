package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"

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
	if dir := os.Getenv(CPUProfileEnv); dir != "" {
		stop := startCPUProfile(dir, desc.ID, logger)
		defer stop()
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  scorerpb.Handshake,
		VersionedPlugins: wire.Plugins(&wire.Plugin{Impl: s, Desc: desc, Logger: logger}),
		GRPCServer:       wire.GRPCServerFunc,
		Logger:           logger,
	})
}

// CPUProfileEnv names a directory: a plugin started with it set writes a
// CPU profile of its whole life there, as <id>-<pid>.pprof, when the host
// stops it (docs/performance.md, "The plugin boundary", "Fifth round"). The host
// passes it on from its own environment.
const CPUProfileEnv = "ASSAY_PLUGIN_CPUPROFILE"

// startCPUProfile starts the CPU profile into dir and returns the function
// that stops and writes it; a profile that cannot start is logged and the
// plugin serves without it.
func startCPUProfile(dir string, id sdk.ID, logger hclog.Logger) func() {
	path := filepath.Join(dir, string(id)+"-"+strconv.Itoa(os.Getpid())+".pprof")
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		logger.Error("not profiling", "path", path, "error", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			logger.Error("writing the CPU profile", "path", path, "error", err)
		}
	}
}

func writeDescription(w *os.File, d sdk.Description) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
