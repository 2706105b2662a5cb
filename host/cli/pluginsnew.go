package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/scaffold"
)

func (a *app) pluginsNewCommand() *cli.Command {
	return &cli.Command{
		Name:  "new",
		Usage: "scaffold a scorer plugin module that builds and passes its tests as written",
		Description: `Writes a Go module for scorer ID into DIR (default ./ID; it must not exist or
be empty): go.mod and go.sum, a scorer with one KPI written with the grading
kit sdk/grade, a table test that also runs the conformance kit, the main in
cmd/assay-scorer-ID, and a Makefile whose install target builds, copies the
binary into the plugin directory, registers it and syncs the scorer set.

The SDK is not published on the module proxy, so go.mod replaces it with the
SDK source this assay was built from: --sdk DIR, else ASSAY_SDK_DIR, else the
first sdk/ directory of an assay checkout found in or above the current
directory or the assay binary's directory.`,
		UsageText: `assay plugins new ID [--dir DIR] [--module PATH] [--sdk DIR]

Example:
  assay plugins new ticket_linked --dir ../ticket_linked`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "the new module's `DIR` (default ./ID)"},
			&cli.StringFlag{Name: "module", Usage: "the module `PATH` (default example.com/ID)"},
			&cli.StringFlag{Name: "sdk", EnvVars: []string{"ASSAY_SDK_DIR"}, Usage: "the SDK source `DIR` (an assay checkout's sdk/)"},
		},
		Action: a.pluginsNew,
	}
}

func (a *app) pluginsNew(c *cli.Context) error {
	if c.NArg() != 1 {
		return invalidf("plugins new: name one scorer id, got %d arguments", c.NArg())
	}
	id := c.Args().First()
	dir := c.String("dir")
	if dir == "" {
		dir = id
	}
	sdkDir, err := sdkSource(c.String("sdk"))
	if err != nil {
		return invalidf("plugins new: %w (pass --sdk DIR, the sdk/ directory of an assay checkout)", err)
	}
	plugins, err := filepath.Abs(pluginDir(c))
	if err != nil {
		return hostErr(fmt.Errorf("plugins new: %w", err))
	}
	files, err := scaffold.Write(scaffold.Options{ID: id, Dir: dir, Module: c.String("module"), SDKDir: sdkDir, PluginDir: plugins})
	if err != nil {
		return invalidf("plugins new: %w", err)
	}
	for _, f := range files {
		fmt.Fprintf(a.stdout, "wrote %s\n", filepath.Join(dir, f))
	}
	fmt.Fprintf(a.stdout, "the SDK is %s (a replace in go.mod)\nnext: cd %s && go test ./... && make install\n", sdkDir, dir)
	return nil
}

// sdkSource is the SDK source directory: given, else found from the
// current directory or the assay binary's directory.
func sdkSource(given string) (string, error) {
	if given != "" {
		return scaffold.FindSDK(given)
	}
	cwd, _ := os.Getwd()
	exe, _ := os.Executable()
	if exe != "" {
		exe = filepath.Dir(exe)
	}
	return scaffold.FindSDK(cwd, exe)
}
