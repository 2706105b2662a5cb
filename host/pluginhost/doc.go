// Package pluginhost runs scorer plugins for the host: the plugin manifest
// (manifest.json in the plugin directory, the source of the scorer set), the
// registration of binaries into it, and a Host that launches each manifest
// binary once (sha256-pinned, no shell, an allow-listed environment, AutoMTLS,
// a start timeout, dying with the host), scores batches on it under a
// deadline, and kills, relaunches with backoff and retries once when a plugin
// crashes, hangs or speaks garbage. Scorers given with WithInProcess run in
// the host process through the SDK's own batch runner instead.
package pluginhost
