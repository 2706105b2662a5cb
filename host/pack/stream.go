package pack

import "github.com/assay-eval/assay/pkg/diag"

// taskStream is Validate's way of reading a pack: each task that decoded is
// given to the checks and counted, then dropped.
type taskStream struct {
	checks []TaskCheck
	diags  []diag.List // by check
	tasks  int
}

// streams reports whether Validate streams the tasks to checks: whether
// every one is a TaskChecker.
func streams(checks []Check) bool {
	for _, chk := range checks {
		if _, ok := chk.(TaskChecker); !ok {
			return false
		}
	}
	return true
}

// newTaskStream returns nil, for the tasks to be kept and the checks run on
// the whole pack, unless stream is set and every check is a TaskChecker.
func newTaskStream(checks []Check, stream bool) *taskStream {
	if !stream || !streams(checks) {
		return nil
	}
	ts := &taskStream{diags: make([]diag.List, len(checks))}
	for _, chk := range checks {
		ts.checks = append(ts.checks, chk.(TaskChecker).CheckTasks())
	}
	return ts
}

func (ts *taskStream) task(t *Task) {
	ts.tasks++
	for i, chk := range ts.checks {
		ts.diags[i] = append(ts.diags[i], chk.CheckTask(t)...)
	}
}

// finish runs each check on the rest of the pack and adds its diagnostics
// to c sorted, as CheckPack's are added.
func (ts *taskStream) finish(p *Pack, c *collector) {
	for i, chk := range ts.checks {
		ds := append(ts.diags[i], chk.CheckRest(p)...)
		ds.Sort()
		for _, dg := range ds {
			c.add(dg, "")
		}
	}
}

// keep adds a decoded task to the pack, or gives it to the stream.
func (d *decoder) keep(p *Pack, t *Task) {
	if d.stream != nil {
		d.stream.task(t)
		return
	}
	t.index = int32(len(p.Tasks))
	p.Tasks = append(p.Tasks, t)
}
