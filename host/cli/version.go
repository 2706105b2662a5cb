package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// BuildInfo is the host's module version and VCS revision.
type BuildInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// ReadBuildInfo reads the module version and VCS revision stamped by the Go
// toolchain; "(devel)" and "unknown" when they are absent.
func ReadBuildInfo() BuildInfo {
	bi := BuildInfo{Version: "(devel)", Revision: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return bi
	}
	bi.Go = info.GoVersion
	if v := info.Main.Version; v != "" {
		bi.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			bi.Revision = s.Value
		case "vcs.modified":
			bi.Modified = s.Value == "true"
		}
	}
	return bi
}

func (a *app) versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the module version and VCS revision",
		UsageText: "assay version\n\nExample:\n   assay version",
		Action: func(c *cli.Context) error {
			bi := ReadBuildInfo()
			rev := bi.Revision
			if bi.Modified {
				rev += " (modified)"
			}
			fmt.Fprintf(a.stdout, "assay %s\nrevision %s\n%s\n", bi.Version, rev, bi.Go)
			return nil
		},
	}
}
