package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// served is a running `assay serve`.
type served struct {
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

// startServe starts `assay serve` on a free port with db and waits for
// /healthz.
func startServe(t testing.TB, db string, extra ...string) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := append([]string{"--plugin-dir", pluginDir, "--db", db, "serve", "--addr", addr, "--log-format", "json"}, extra...)
	s := &served{url: "http://" + addr, cmd: exec.Command(assay, args...), stderr: &bytes.Buffer{}}
	s.cmd.Dir, s.cmd.Stderr = root, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	for i := 0; ; i++ {
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		if i > 200 {
			t.Fatalf("assay serve did not answer /healthz:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and wants a clean exit.
func (s *served) stop(t testing.TB) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("assay serve after SIGTERM: %v\n%s", err, s.stderr)
	}
}

func (s *served) do(t testing.TB, method, path, token string, body io.Reader) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// examplesTurnsFile writes examples/runs as one turns file, everything inline.
func examplesTurnsFile(t testing.TB, dir string) string {
	t.Helper()
	var out bytes.Buffer
	for _, c := range []string{"candidate-a", "candidate-b", "candidate-c"} {
		run := filepath.Join(root, "examples", "runs", c)
		var rows []map[string]any
		b, _ := os.ReadFile(filepath.Join(run, "results.json"))
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			label := r["label"].(string)
			turn := map[string]any{"label": label, "candidate": c}
			for _, k := range []string{"persona", "latency_s", "cost_usd", "started_at", "finished_at"} {
				turn[k] = r[k]
			}
			tr, err := os.ReadFile(filepath.Join(run, "results", label+".ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			var events []json.RawMessage
			for _, l := range bytes.Split(tr, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					events = append(events, l)
				}
			}
			turn["trace"] = events
			for k, s := range map[string]string{"state_before": "before", "state_after": "after"} {
				if snap, err := os.ReadFile(filepath.Join(run, "state", label+"."+s+".json")); err == nil {
					turn[k] = json.RawMessage(snap)
				}
			}
			line, _ := json.Marshal(turn)
			out.Write(append(line, '\n'))
		}
	}
	path := filepath.Join(dir, "examples.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// uploadAndWait uploads a turns file for pack example and returns the run's
// summary.json once it completed.
func uploadAndWait(t testing.TB, s *served, token, turns string) []byte {
	t.Helper()
	f, err := os.Open(turns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code, body := s.do(t, "POST", "/v1/runs?pack=example", token, f)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs = %d %s", code, body)
	}
	var acc struct {
		RunID int64 `json:"run_id"`
	}
	json.Unmarshal(body, &acc)
	for {
		_, body = s.do(t, "GET", fmt.Sprintf("/v1/runs/%d", acc.RunID), token, nil)
		var v struct{ Status, Error string }
		json.Unmarshal(body, &v)
		if v.Status == "failed" {
			t.Fatalf("run %d failed: %s", acc.RunID, v.Error)
		}
		if v.Status == "completed" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	code, body = s.do(t, "GET", fmt.Sprintf("/v1/runs/%d/summary", acc.RunID), token, nil)
	if code != 200 {
		t.Fatalf("GET summary = %d %s", code, body)
	}
	return body
}

// serveToken creates a token for packs/example.yaml's company.
func serveToken(t testing.TB, db string) string {
	t.Helper()
	r := run(t, db, "tokens", "create", "--company", "0b1aeb33-4f4e-4c70-8d83-a66d087e24c5", "--name", "e2e")
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || !strings.HasPrefix(lines[0], "assay_") || strings.TrimSpace(strings.Join(lines[1:], "")) != "" {
		t.Fatalf("tokens create: exit %d, stdout %q, want the token alone on the first line\n%s", r.code, r.stdout, r.stderr)
	}
	return lines[0]
}

// TestServeSummaryEqualsVerify (issue 21 tests): the example runs uploaded
// through the API give the summary `assay verify --turns` gives on the same
// file, field by field (the pack's path aside: the server names it by the
// pack's API name). The server logs JSON and shuts down cleanly.
func TestServeSummaryEqualsVerify(t *testing.T) {
	dir := t.TempDir()
	turns := examplesTurnsFile(t, dir)
	out := filepath.Join(dir, "out")
	if r := run(t, filepath.Join(dir, "cli.db"), "verify", "--pack", "packs/example.yaml", "--turns", turns, "--out", out); r.code != 1 {
		t.Fatalf("verify: exit %d, want 1 (candidate-b fails its gates)\n%s", r.code, r.stderr)
	}
	db := filepath.Join(dir, "serve.db")
	token := serveToken(t, db)
	s := startServe(t, db)
	pack, _ := os.ReadFile(filepath.Join(root, "packs", "example.yaml"))
	if code, body := s.do(t, "PUT", "/v1/packs/example", token, bytes.NewReader(pack)); code != 200 {
		t.Fatalf("PUT pack = %d %s", code, body)
	}
	got := uploadAndWait(t, s, token, turns)
	want, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(want, &w)
	g["pack"].(map[string]any)["path"], w["pack"].(map[string]any)["path"] = "", ""
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("summary through the API differs from assay verify's (-verify +api):\n%s", diff)
	}
	s.stop(t)
	jsonLines := 0
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["@message"] != nil {
			jsonLines++
		}
	}
	if jsonLines == 0 {
		t.Errorf("--log-format json logged no JSON lines:\n%s", s.stderr)
	}
}
