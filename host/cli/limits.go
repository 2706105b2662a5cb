package cli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pluginhost"
)

// The global flags that cap what a plugin may use and return
// (docs/plugins.md, "Limits").
const (
	flagPluginMemory = "plugin-memory-mb"
	flagPluginCPU    = "plugin-cpu"
	flagPluginProcs  = "plugin-procs"
	flagMaxChecks    = "max-checks"
)

// pluginLimitFlags are the global flags of the plugin limits.
func pluginLimitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Uint64Flag{Name: flagPluginMemory, Value: pluginhost.DefaultAddressSpace >> 20, EnvVars: []string{"ASSAY_PLUGIN_MEMORY_MB"},
			Usage: "address space (RLIMIT_AS) of each plugin process in `MiB`; 0: no limit"},
		&cli.DurationFlag{Name: flagPluginCPU, Value: pluginhost.DefaultCPU, EnvVars: []string{"ASSAY_PLUGIN_CPU"},
			Usage: "CPU time (RLIMIT_CPU) each plugin process may use over its life, `D`; 0: no limit"},
		&cli.Uint64Flag{Name: flagPluginProcs, EnvVars: []string{"ASSAY_PLUGIN_PROCS"},
			Usage: "RLIMIT_NPROC of each plugin process: processes and threads of the host's user, machine-wide, `N`; 0 (default): no limit"},
		&cli.IntFlag{Name: flagMaxChecks, Value: pluginhost.DefaultMaxChecks, EnvVars: []string{"ASSAY_MAX_CHECKS"},
			Usage: "most checks one scorer result may hold, `N`; a result with more is a scorer error"},
	}
}

// pluginLimits reads the plugin limit flags.
func pluginLimits(c *cli.Context) (pluginhost.Limits, error) {
	l := pluginhost.Limits{
		AddressSpace: c.Uint64(flagPluginMemory) << 20,
		CPU:          c.Duration(flagPluginCPU),
		Processes:    c.Uint64(flagPluginProcs),
		MaxChecks:    c.Int(flagMaxChecks),
	}
	switch {
	case l.CPU < 0:
		return l, invalidf("--%s: want a duration of 0 or more, got %v", flagPluginCPU, l.CPU)
	case l.CPU > 0 && l.CPU < time.Second:
		return l, invalidf("--%s: want at least 1s (RLIMIT_CPU counts whole seconds), got %v", flagPluginCPU, l.CPU)
	case l.MaxChecks < 1:
		return l, invalidf("--%s: want at least 1, got %d", flagMaxChecks, l.MaxChecks)
	}
	return l, nil
}
