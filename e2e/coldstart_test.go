package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/assay-eval/assay/sdk/conformance"
)

// coldStart launches the plugin at path n times, as the host does (go-plugin
// handshake on a private Unix socket), and returns the median time from starting the
// process to the answer of its first Describe.
func coldStart(b *testing.B, path string, n int) time.Duration {
	b.Helper()
	var times []time.Duration
	for range n {
		start := time.Now()
		c, stop, err := conformance.Launch(path, nil)
		if err != nil {
			b.Fatalf("launching %s: %v", path, err)
		}
		if _, err := c.Describe(context.Background()); err != nil {
			stop()
			b.Fatalf("Describe of %s: %v", path, err)
		}
		times = append(times, time.Since(start))
		stop()
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// BenchmarkColdStartDescribe reports the median of 20 cold starts to the
// first Describe: a built-in Go plugin (issue 15 wants at most 50 ms) and,
// when node is present with its modules installed, the Node.js example.
func BenchmarkColdStartDescribe(b *testing.B) {
	b.Run("go", func(b *testing.B) {
		bin := filepath.Join(pluginDir, "assay-scorer-answer_keywords")
		for range b.N {
			b.ReportMetric(float64(coldStart(b, bin, 20).Microseconds())/1000, "median-ms")
		}
	})
	b.Run("node", func(b *testing.B) {
		if _, err := exec.LookPath("node"); err != nil {
			b.Skip("node not found")
		}
		bin := filepath.Join(root, "examples", "node-scorer", "scorer.js")
		if _, err := exec.Command("node", "-e", "require.resolve('@grpc/grpc-js', {paths: ['"+filepath.Dir(bin)+"']})").CombinedOutput(); err != nil {
			b.Skip("examples/node-scorer has no node_modules (run npm ci there)")
		}
		for range b.N {
			b.ReportMetric(float64(coldStart(b, bin, 20).Microseconds())/1000, "median-ms")
		}
	})
}
