package pluginhost_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/conformance"
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

// TestPluginTLSFallback: a plugin that exits unless the host offers AutoMTLS
// (one written for the hosts before the private Unix socket) is launched
// once more with AutoMTLS and scores; the host warns once, and every later
// launch of it in the run (a restart after a crash, the solo process of a
// lost batch) goes straight to AutoMTLS. Not parallel: it sets TMPDIR, where
// the plugin logs how it was launched.
func TestPluginTLSFallback(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const id = scorer.ID("test_tlsonly")
	// Register launches it too: it registers through the same fallback.
	m := &pluginhost.Manifest{Dir: t.TempDir()}
	exe := filepath.Join(m.Dir, filepath.Base(bin(string(id))))
	b, err := os.ReadFile(bin(string(id)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := pluginhost.Register(context.Background(), m, []string{exe}, hclog.NewNullLogger()); err != nil {
		t.Fatalf("Register: %v", err)
	}
	h := short(m)
	defer h.Close()
	for _, label := range []string{"a", "exit", "b"} {
		outs := h.Score(context.Background(), id, labelled(label))
		if label != "exit" && outs[0].Err != nil {
			t.Fatalf("Score(%s) error = %v, want a result", label, outs[0].Err)
		}
	}
	warns := h.Warnings()
	if len(warns) != 1 || !strings.Contains(warns[0], "scorer test_tlsonly did not start without TLS; it was started with AutoMTLS") {
		t.Errorf("Warnings() = %q, want one about test_tlsonly and AutoMTLS", warns)
	}
	b, err = os.ReadFile(filepath.Join(tmp, "assay-test-tlsonly.log"))
	if err != nil {
		t.Fatal(err)
	}
	starts := strings.Fields(string(b))
	rep, err := conformance.CheckBinary(context.Background(), bin(string(id)), nil)
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	if last := rep[len(rep)-1]; !last.OK() || last.Name != conformance.CheckTransport || len(last.Findings) != 1 ||
		!strings.Contains(last.Findings[0], "requires AutoMTLS") {
		t.Errorf("conformance report = %+v, want a passing plaintext_transport with a requires-AutoMTLS finding last (the test scorer fails unset_kpis on purpose)", rep)
	}
	if len(starts) < 4 || starts[0] != "plain" || starts[2] != "plain" || slices.Contains(starts[3:], "plain") {
		t.Errorf("launches = %q, want plain then AutoMTLS at Register and at the run's first launch, then AutoMTLS only (the restart)", starts)
	}
}
