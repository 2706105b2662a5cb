package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// groupRunner starts a plugin for go-plugin (its RunnerFunc): it executes
// the already opened and hashed binary file (execPath), in a process group
// of its own with resource limits, and kills the whole group when the
// plugin exits or is killed, so that no process the plugin started outlives
// it (docs/plugins.md, "What runs", "Limits").
type groupRunner struct {
	file   *os.File // the binary, opened and hashed by launch
	name   string   // its path, for messages
	limits Limits
	env    []string
	check  *scorerpb.AddrCheck // the handshake's address; nil: any (Windows, AutoMTLS)
	tls    bool                // launched with AutoMTLS: any address, as go-plugin has it (no check)

	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser

	mu  sync.Mutex
	pid int // the plugin's pid and process group; 0 before Start
}

var _ runner.Runner = (*groupRunner)(nil)

// start is the go-plugin RunnerFunc: spec carries the handshake environment,
// socketDir is the directory go-plugin made for this plugin's socket inside
// the run's private one (PLUGIN_UNIX_SOCKET_DIR in spec.Env).
func (r *groupRunner) start(_ hclog.Logger, spec *exec.Cmd, socketDir string) (runner.Runner, error) {
	path, extra := execPath(r.file, r.name)
	r.cmd = &exec.Cmd{
		Path:        path,
		Args:        []string{filepath.Base(r.name)},
		Env:         append(r.env, spec.Env...),
		ExtraFiles:  extra,
		SysProcAttr: sysProcAttr(),
	}
	var err error
	if r.stdout, r.stderr, r.check, err = scorerpb.RunnerPipes(r.cmd, socketDir, r.tls); err != nil {
		return nil, err
	}
	return r, nil
}

// Start starts the plugin and sets its resource limits.
func (r *groupRunner) Start(context.Context) error {
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.name, err)
	}
	pid := r.cmd.Process.Pid
	r.mu.Lock()
	r.pid = pid
	r.mu.Unlock()
	if err := setLimits(pid, r.limits); err != nil {
		r.killGroup()
		return fmt.Errorf("starting %s: setting resource limits: %w", r.name, err)
	}
	return nil
}

// Wait waits for the plugin to exit, then kills what is left of its group
// and forgets the pid, so that no later kill can reach a process that
// reuses it.
func (r *groupRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid > 0 {
		killGroup(r.pid)
		r.pid = 0
	}
	return err
}

// Kill kills the plugin's whole process group.
func (r *groupRunner) Kill(context.Context) error {
	r.killGroup()
	if r.cmd == nil || r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// killGroup sends SIGKILL to the plugin's process group (nothing before
// Start).
func (r *groupRunner) killGroup() {
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid > 0 {
		killGroup(pid)
	}
}

func (r *groupRunner) Diagnose(context.Context) string { return "" }
func (r *groupRunner) Stdout() io.ReadCloser           { return r.stdout }
func (r *groupRunner) Stderr() io.ReadCloser           { return r.stderr }
func (r *groupRunner) Name() string                    { return r.name }

func (r *groupRunner) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strconv.Itoa(r.pid)
}

// PluginToHost accepts the address the plugin announced only when it is a
// Unix socket in the plugin's own private directory and the plugin offered
// no TLS (scorerpb.AddrCheck).
func (r *groupRunner) PluginToHost(network, addr string) (string, string, error) {
	return r.check.PluginToHost(network, addr)
}

func (r *groupRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
