// Command assay is the verifier host for agent evaluations.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/assay-eval/assay/host/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
