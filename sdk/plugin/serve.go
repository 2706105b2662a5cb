package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       string(desc.ID),
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.Info,
	})
	if os.Getenv("GOGC") == "" {
		if err := setHeapFloor(); err != nil {
			logger.Warn("could not release the heap floor's pages; they may stay resident", "bytes", heapFloor, "error", err)
		}
	}
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

// heapFloor is the least heap a plugin's collector counts as live: a
// plugin's own live heap is small (the batches in flight) while it
// allocates fast (decoding cases, scoring them), so with the runtime's
// 4 MB minimum it would collect every few megabytes, and with a heap goal
// that moves with the batches in flight the runtime gives pages back to
// the system and faults them in again. Counted as live, heapFloor sets the
// heap goal to at least twice itself at the default GOGC of 100, which
// still grows with a large live heap (a plugin holding a 200 MB corpus
// peaks near 430 MB, not five times it as at GOGC 400, the SDK's setting
// before; docs/performance.md, "The plugin boundary", fifteenth round).
const heapFloor = 16 << 20

// floor is the heap floor: heapFloor bytes allocated once and never
// written or read, and the collector does not scan a []byte. The runtime
// clears an allocation this large only when its address range held
// freed objects before, which depends on what the process allocated
// first; so setHeapFloor hands the floor's pages back to the system
// (releaseFloor) and the floor costs address space, not resident memory.
var floor []byte

// setHeapFloor allocates the heap floor (once) and releases its pages.
// An error means the floor may stay resident (when the runtime cleared
// it): it still sets the heap goal, at the cost of heapFloor bytes of
// memory.
func setHeapFloor() error {
	if floor != nil {
		return nil
	}
	floor = make([]byte, heapFloor)
	return releaseFloor(floor)
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
