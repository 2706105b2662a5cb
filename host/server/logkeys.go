package server

// Log keys.
const (
	logRun     = "run_id"
	logCompany = "company"
	logPack    = "pack"
	logErr     = "error"
	logStatus  = "status"
	logPath    = "path"
)
