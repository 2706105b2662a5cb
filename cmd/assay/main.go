// Command assay is the verifier host for agent evaluations.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/assay-eval/assay/host/cli"
)

func main() {
	runtime.MemProfileRate = heapSampling(os.Getenv, runtime.MemProfileRate)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// heapSampling is the rate at which the runtime samples allocations for
// heap profiles, given the current one. Only ASSAY_MEMPROFILE writes a
// heap profile, so without it nothing is sampled: each sample records its
// stack (unwinding reads the binary's pc tables, which then stay resident)
// and keeps a bucket for it, memory and CPU spent on a profile nobody
// reads (docs/performance.md, "Verifying many small turns").
func heapSampling(getenv func(string) string, rate int) int {
	if getenv("ASSAY_MEMPROFILE") == "" {
		return 0
	}
	return rate
}
