package scorerpb

import "strings"

// envAllowList is every variable of the host's environment a plugin sees,
// by exact name; nothing else (no ASSAY_DB, no PGPASSWORD, no cloud
// credentials, no LC_API_TOKEN) reaches it. The locale variables are the
// POSIX and glibc categories by name, never every LC_ prefix.
// docs/plugins.md lists them.
var envAllowList = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ",
	"LANG", "LANGUAGE", "LC_ALL",
	"LC_ADDRESS", "LC_COLLATE", "LC_CTYPE", "LC_IDENTIFICATION", "LC_MEASUREMENT",
	"LC_MESSAGES", "LC_MONETARY", "LC_NAME", "LC_NUMERIC", "LC_PAPER",
	"LC_TELEPHONE", "LC_TIME",
	// a directory for plugin CPU profiles (plugin.CPUProfileEnv)
	"ASSAY_PLUGIN_CPUPROFILE",
}

// PluginEnv is the environment a plugin is started with, by the host and by
// package conformance alike: the entries of environ (os.Environ's form,
// KEY=value) whose key is on the allow list.
func PluginEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		for _, a := range envAllowList {
			if k == a {
				env = append(env, kv)
				break
			}
		}
	}
	return env
}
