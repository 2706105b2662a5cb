package pluginhost_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
)

// TestPluginSocketIsPrivate: without TLS, what keeps other users off a
// plugin's socket is the directory it is in. The host makes one directory
// a run (mode 0700, its own), each plugin listens on a Unix socket in a
// 0700 directory inside it, the plugin is offered no TLS certificate, and
// the directory is gone after Close. A host that went back to TCP, or put
// the socket anywhere else, fails here.
func TestPluginSocketIsPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := short(manifest())
	outs := h.Score(context.Background(), "test_env", labelled("a"))
	if outs[0].Err != nil {
		h.Close()
		t.Fatalf("Score(test_env) error = %v", outs[0].Err)
	}
	env := map[string]string{}
	for _, kv := range outs[0].Result.Diagnostics {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if _, ok := env["PLUGIN_CLIENT_CERT"]; ok {
		t.Errorf("plugin environment has PLUGIN_CLIENT_CERT, want no TLS offered on a Unix socket")
	}
	runs, _ := filepath.Glob(filepath.Join(tmp, "assay-*"))
	if len(runs) != 1 {
		h.Close()
		t.Fatalf("socket directories in TMPDIR = %v, want one assay-*", runs)
	}
	own := env["PLUGIN_UNIX_SOCKET_DIR"]
	if filepath.Dir(own) != runs[0] {
		t.Errorf("PLUGIN_UNIX_SOCKET_DIR = %q, want a directory in %s", own, runs[0])
	}
	for _, d := range []string{runs[0], own} {
		if st, err := os.Lstat(d); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Errorf("Lstat(%s) = %v, %v; want a directory with mode 0700", d, st.Mode(), err)
		}
	}
	socks, _ := os.ReadDir(own)
	if len(socks) != 1 || socks[0].Type() != os.ModeSocket {
		t.Errorf("entries of %s = %v, want the plugin's one Unix socket", own, socks)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := os.Lstat(runs[0]); !os.IsNotExist(err) {
		t.Errorf("Lstat(%s) after Close = %v, want it removed", runs[0], err)
	}
}

// TestPluginAddressChecked: the host connects only to a Unix socket in the
// plugin's directory, and refuses, with a message, a plugin that listens on
// TCP or that answers with a TLS certificate the host did not ask for.
func TestPluginAddressChecked(t *testing.T) {
	t.Parallel()
	for id, want := range map[scorer.ID]string{
		"test_tcp": "connects only to a Unix socket",
		"test_tls": "the plugin serves TLS",
	} {
		t.Run(string(id), func(t *testing.T) {
			t.Parallel()
			m := manifest()
			m.Entries = append(m.Entries, pluginhost.Entry{ID: id, Binary: filepath.Base(bin(string(id))),
				SHA256: sha256File(t, bin(string(id))), Version: "0.0.1", Protocol: 1, KPIs: []scorer.KPI{}})
			h := short(m)
			defer h.Close()
			outs := h.Score(context.Background(), id, labelled("a"))
			if outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), want) {
				t.Errorf("Score(%s) error = %v, want one containing %q", id, outs[0].Err, want)
			}
		})
	}
}
