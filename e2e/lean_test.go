package e2e

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/buildflags"
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
	m := regexp.MustCompile(`(?m)^BUILDFLAGS\s*:=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no BUILDFLAGS := ...")
	}
	if got := strings.Fields(string(m[1])); !slices.Equal(got, buildflags.Flags) {
		t.Errorf("the Makefile's BUILDFLAGS = %q, the tests build with %q (internal/buildflags): keep them the same", got, buildflags.Flags)
	}
	for _, want := range []string{"CGO_ENABLED ?= 0\n", "CGO_ENABLED=$(CGO_ENABLED) $(GO) build -buildvcs=auto -trimpath $(BUILDFLAGS)"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("the Makefile lacks %q", want)
		}
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
