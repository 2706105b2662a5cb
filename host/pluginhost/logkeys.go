package pluginhost

// Log keys used by the host.
const (
	logPlugin  = "plugin"
	logPath    = "path"
	logError   = "error"
	logCases   = "cases"
	logBackoff = "backoff"
	logAttempt = "attempt"
)
