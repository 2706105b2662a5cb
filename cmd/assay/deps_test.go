package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testingImporters are the packages the production binary may link that
// import package testing: go-plugin's testing.go (exported test helpers in
// the transport every plugin and the host use) and nothing of assay's.
var testingImporters = []string{"github.com/hashicorp/go-plugin"}

// TestBinaryDoesNotLinkTestKits checks `go list -deps ./cmd/assay`: no
// package of the production binary but go-plugin imports testing, and no
// test kit (sdk/sdktest, go-cmp, testify) is linked. `assay plugins
// conformance` uses sdk/conformance, which does not import testing.
func TestBinaryDoesNotLinkTestKits(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var importers, kits []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if imp == "testing" {
				importers = append(importers, pkg)
			}
		}
		if strings.HasSuffix(pkg, "/sdktest") || strings.HasPrefix(pkg, "github.com/google/go-cmp") ||
			strings.HasPrefix(pkg, "github.com/stretchr/testify") {
			kits = append(kits, pkg)
		}
	}
	if diff := cmp.Diff(testingImporters, importers); diff != "" {
		t.Errorf("packages of ./cmd/assay that import testing (-want +got):\n%s", diff)
	}
	if len(kits) > 0 {
		t.Errorf("./cmd/assay links test kits %v", kits)
	}
}
