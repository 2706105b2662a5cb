// Package pluginhost runs scorer plugins for the host: the plugin manifest
// (manifest.json in the plugin directory, the source of the scorer set), the
// registration of binaries into it, and a Host that launches each manifest
// binary once (sha256-pinned, no shell, an allow-listed environment, a Unix
// socket in a directory private to the user, a start timeout, dying with the
// host) and scores batches on it, each call
// under a deadline scaled by its number of cases. A batch lost to a crash,
// a hang or garbage is run again on a process of its own, replayed whole
// (crash) and one case at a time, so that only a case that breaks the plugin
// by itself is failed; each case has its own restart budget (isolate.go,
// docs/plugins.md). Scorers given with WithInProcess run in the host process
// through package batchrun, the runner a plugin runs, instead.
package pluginhost
