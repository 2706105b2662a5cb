package pluginhost

// DialOptions are the gRPC options the host launches a plugin with.
var DialOptions = dialOptions

// PluginPIDs are the pids of the plugin processes h runs now, its shared
// ones and the solo ones of batches being isolated: what a benchmark
// counts as the plugins' CPU time.
func (h *Host) PluginPIDs() []int {
	h.mu.Lock()
	procs := make([]*proc, 0, len(h.procs)+len(h.solos))
	for _, p := range h.procs {
		procs = append(procs, p)
	}
	for p := range h.solos {
		procs = append(procs, p)
	}
	h.mu.Unlock()
	var pids []int
	for _, p := range procs {
		p.mu.Lock()
		if p.in != nil {
			p.in.runner.mu.Lock()
			if pid := p.in.runner.pid; pid > 0 {
				pids = append(pids, pid)
			}
			p.in.runner.mu.Unlock()
		}
		p.mu.Unlock()
	}
	return pids
}
