package e2e

import (
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestBuiltLean checks that e2e builds its binaries with the Makefile's
// BUILDFLAGS and CGO_ENABLED=0, and that the binaries are lean: static, no
// DWARF and no golang.org/x/net/trace (gRPC's request tracing). The host hashes a
// plugin's whole file at each launch (docs/plugins.md, "What runs"), so the
// bytes are start-up time (docs/performance.md, "Thirteenth round").
func TestBuiltLean(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^BUILDFLAGS \?= (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no BUILDFLAGS ?= ...")
	}
	if got := strings.Fields(string(m[1])); !slices.Equal(got, buildFlags) {
		t.Errorf("the Makefile's BUILDFLAGS = %q, e2e builds with %q: keep them the same", got, buildFlags)
	}
	if !strings.Contains(string(mk), "CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath $(BUILDFLAGS)") {
		t.Error("the Makefile's GOBUILD does not build with CGO_ENABLED=0 and $(BUILDFLAGS)")
	}
	// host/pluginhost's tests build the plugins its cold-start and boundary
	// benchmarks launch with the same flags.
	ph, err := os.ReadFile(filepath.Join(root, "host", "pluginhost", "main_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("var buildFlags = %#v", buildFlags); !strings.Contains(string(ph), want) {
		t.Errorf("host/pluginhost/main_test.go lacks %s", want)
	}
	bins, err := filepath.Glob(filepath.Join(pluginDir, "assay-scorer-*"))
	if err != nil || len(bins) == 0 {
		t.Fatalf("no built plugins in %s: %v", pluginDir, err)
	}
	for _, b := range append(bins, assay) {
		checkLean(t, b)
	}
}

// checkLean fails t unless the Go binary at path was built with -tags
// grpcnotrace and CGO_ENABLED=0 and (on Linux, where it is read as ELF) is
// static and carries no DWARF (-ldflags=-w) and no golang.org/x/net/trace
// code.
func checkLean(t *testing.T, path string) {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	// (-ldflags is not written there when -trimpath is set: its effect, no
	// DWARF, is checked below.)
	if !slices.Contains(strings.Split(settings["-tags"], ","), "grpcnotrace") {
		t.Errorf("%s: built with -tags %q, want grpcnotrace", filepath.Base(path), settings["-tags"])
	}
	if settings["CGO_ENABLED"] != "0" {
		t.Errorf("%s: built with CGO_ENABLED=%q, want 0 (a static binary)", filepath.Base(path), settings["CGO_ENABLED"])
	}
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: is dynamically linked (it names an interpreter)", filepath.Base(path))
		}
	}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("%s: has DWARF section %s", filepath.Base(path), s.Name)
			break
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: reading symbols: %v", path, err)
	}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "golang.org/x/net/trace.") {
			t.Errorf("%s: links %s (gRPC's request tracing)", filepath.Base(path), s.Name)
			break
		}
	}
}
