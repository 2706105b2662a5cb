package scorerpb_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

func TestMakeSocketDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, err := scorerpb.MakeSocketDir()
	if err != nil {
		t.Fatalf("MakeSocketDir() error = %v", err)
	}
	defer os.RemoveAll(dir)
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("Lstat(%s) = %v, %v; want a directory with mode 0700", dir, st.Mode(), err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := scorerpb.CheckPrivate(open); !errors.Is(err, scorerpb.ErrNotPrivate) {
		t.Errorf("CheckPrivate(%s, mode 0755) = %v, want ErrNotPrivate", open, err)
	}
}

func TestAddrCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert := strings.Repeat("A", 60)
	for name, tc := range map[string]struct {
		line, network, addr string
		want                string // part of the error; "" for none
	}{
		"socket in the directory": {"1|1|unix|" + dir + "/plugin1|grpc\n", "unix", dir + "/plugin1", ""},
		"tcp":                     {"1|1|tcp|127.0.0.1:10000|grpc\n", "tcp", "127.0.0.1:10000", "connects only to a Unix socket"},
		"socket elsewhere":        {"1|1|unix|/tmp/plugin1|grpc\n", "unix", "/tmp/plugin1", "connects only to a socket in the directory"},
		"socket above":            {"1|1|unix|" + dir + "/../plugin1|grpc\n", "unix", dir + "/../plugin1", "connects only to a socket in the directory"},
		"the directory itself":    {"1|1|unix|" + dir + "|grpc\n", "unix", dir, "connects only to a socket in the directory"},
		"certificate":             {"1|1|unix|" + dir + "/plugin1|grpc|" + cert + "\n", "unix", dir + "/plugin1", "the plugin serves TLS"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := scorerpb.NewAddrCheck(dir)
			// The line arrives in two reads, as it may from a pipe.
			r := c.Stdout(io.NopCloser(io.MultiReader(strings.NewReader(tc.line[:7]), strings.NewReader(tc.line[7:]+"later output|x|y|z|w|"+cert+"\n"))))
			if _, err := io.ReadAll(r); err != nil {
				t.Fatal(err)
			}
			_, _, err := c.PluginToHost(tc.network, tc.addr)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("PluginToHost(%q, %q) after %q = %v, want %q", tc.network, tc.addr, tc.line, err, tc.want)
			}
		})
	}
}
