// Package buildflags is how the tests and benchmarks build the binaries
// they run: as the Makefile's build target builds them (e2e's TestBuiltLean
// holds the two together), so that what they measure is what `make build`
// ships (docs/performance.md, "The plugin boundary", "Thirteenth round").
package buildflags

import (
	"os"
	"os/exec"
)

// Flags are the Makefile's BUILDFLAGS: no DWARF, no gRPC request tracing.
var Flags = []string{"-tags", "grpcnotrace", "-ldflags=-w"}

// Command is `go build` with Flags, then args, and CGO_ENABLED=0, the
// Makefile's default: a static binary.
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command("go", append(append([]string{"build"}, Flags...), args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
