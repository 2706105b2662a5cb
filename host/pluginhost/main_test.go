package pluginhost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/internal/buildflags"
	"github.com/assay-eval/assay/pkg/scorer"
)

// testPlugins are the test-only plugins under testdata/plugins, by id.
var testPlugins = []string{"test_panic", "test_exit", "test_sleep", "test_stdout", "test_env", "test_hog", "test_bad", "test_marker", "test_tcp", "test_tls", "test_tlsonly"}

var (
	binDir       string               // the built plugins: assay-scorer-<id>
	base         *pluginhost.Manifest // every registrable test plugin (and tool_sequence when it builds), registered once
	toolSequence bool                 // whether plugins/toolsequence built
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		actAsHost(dir)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pluginhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := buildPlugins(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	base = &pluginhost.Manifest{Dir: dir}
	bins := []string{bin("test_panic"), bin("test_exit"), bin("test_sleep"), bin("test_env"), bin("test_hog"), bin("test_bad")}
	if toolSequence {
		bins = append(bins, bin("tool_sequence"))
	}
	if _, err := pluginhost.Register(context.Background(), base, bins, hclog.NewNullLogger()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// goBuild runs go build with args as `make build` builds, so that the cold
// starts measured here are those of the plugins it ships.
func goBuild(args ...string) ([]byte, error) { return buildflags.Command(args...).CombinedOutput() }

// buildPlugins builds every test plugin (and the real tool_sequence plugin,
// when it builds) into dir as assay-scorer-<id>.
func buildPlugins(dir string) error {
	args := []string{"-o", dir + string(filepath.Separator)}
	for _, p := range testPlugins {
		args = append(args, "./testdata/plugins/"+p)
	}
	if out, err := goBuild(args...); err != nil {
		return fmt.Errorf("building test plugins: %v\n%s", err, out)
	}
	for _, p := range testPlugins {
		if err := os.Rename(filepath.Join(dir, p), bin(p)); err != nil {
			return err
		}
	}
	out, err := goBuild("-o", bin("tool_sequence"), "../../cmd/assay-scorer-tool_sequence")
	if err != nil {
		fmt.Fprintf(os.Stderr, "plugins/toolsequence does not build; its tests and benchmarks skip: %v\n%s", err, out)
	}
	toolSequence = err == nil
	return nil
}

func bin(id string) string { return filepath.Join(binDir, pluginhost.BinaryPrefix+id) }

// manifest returns a copy of the base manifest that a test may change.
func manifest() *pluginhost.Manifest {
	return &pluginhost.Manifest{Dir: base.Dir, Entries: slices.Clone(base.Entries)}
}

// helperEnv makes the test binary act as a host that launches test_env,
// prints the plugin's pid and waits to be killed.
const helperEnv = "PLUGINHOST_TEST_HELPER_MANIFEST_DIR"

func actAsHost(dir string) {
	m, err := pluginhost.LoadManifest(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	h := pluginhost.New(m)
	outs := h.Score(context.Background(), "test_env", []*scorer.Case{{ID: "a"}})
	if outs[0].Err != nil {
		fmt.Println(outs[0].Err)
		os.Exit(1)
	}
	// The plugin's environment does not hold its pid; ask the OS.
	fmt.Printf("plugin pid %d\n", childPid(os.Getpid()))
	time.Sleep(time.Minute)
	os.Exit(0)
}

// childPid returns the pid of a child of parent (the one plugin).
func childPid(parent int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
	if err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			p, _ := strconv.Atoi(f[0])
			return p
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			return p
		}
	}
	return 0
}
