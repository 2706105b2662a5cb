package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/pkg/companyos"
)

const stateToken = "tok-9f8e7d6c"

func stateServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+stateToken {
			http.Error(w, "unauthorized: got "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/company/companies/acme/tasks":
			fmt.Fprint(w, `{"tasks": [{"id": 1, "title": "Investigate build", "priority": 7}]}`)
		case "/api/company/companies/acme/memory":
			fmt.Fprint(w, `{"entries": [{"id": "m1", "body": "arm64 runner disk"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestStateCaptureCLI(t *testing.T) {
	srv := stateServer(t)

	code, out, errOut := evalRun(t, "state", "capture", "--api-base", srv.URL, "--company", "acme", "--token", stateToken)
	if code != 0 {
		t.Fatalf("assay state capture = exit %d: %s", code, errOut)
	}
	var snap companyos.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("stdout is not a snapshot: %v\n%s", err, out)
	}
	if len(snap.Tasks) != 1 || snap.Tasks[0].ID != "1" || len(snap.Memory) != 1 || snap.CapturedAt == "" {
		t.Errorf("assay state capture = %s, want 1 task with id \"1\", 1 memory entry, captured_at", out)
	}
	if !strings.Contains(out, "\n  \"tasks\": [") {
		t.Errorf("stdout = %q, want indented JSON", out)
	}

	// The token from the environment, the snapshot to --out.
	t.Setenv("ASSAY_COMPANY_OS_TOKEN", stateToken)
	path := filepath.Join(t.TempDir(), "state", "after.json")
	code, out, errOut = evalRun(t, "state", "capture", "--api-base", srv.URL, "--company", "acme", "--out", path)
	if code != 0 || out != "" || !strings.Contains(errOut, "captured 1 tasks and 1 memory entries to "+path) {
		t.Fatalf("assay state capture --out = exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, _, code := stateCheck(t, path); code != 0 {
		t.Errorf("assay state check on a captured snapshot = exit %d, want 0", code)
	}

	// Help never shows the token from the environment.
	if _, out, errOut := evalRun(t, "state", "capture", "--help"); strings.Contains(out+errOut, stateToken) {
		t.Errorf("assay state capture --help shows the token: %s%s", out, errOut)
	}

	// Errors: the URL and status are named, the token never shown.
	t.Setenv("ASSAY_COMPANY_OS_TOKEN", "")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"404", []string{"--company", "nobody", "--token", stateToken}, 3, "/api/company/companies/nobody/tasks: 404 Not Found"},
		{"401 echoing the token", []string{"--company", "acme", "--token", stateToken + "x"}, 3, "401 Unauthorized: unauthorized: got Bearer [redacted]"},
		{"no company", []string{"--token", stateToken}, 2, "--company is required"},
		{"bad timeout", []string{"--company", "acme", "--timeout", "-1s"}, 2, "--timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"state", "capture", "--api-base", srv.URL}, tt.args...)
			code, _, errOut := evalRun(t, args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("assay %q = exit %d, stderr %q; want exit %d containing %q", args, code, errOut, tt.code, tt.want)
			}
			if strings.Contains(errOut, stateToken) {
				t.Errorf("assay %q stderr %q shows the token", args, errOut)
			}
		})
	}
}

func stateCheck(t *testing.T, files ...string) (string, string, int) {
	t.Helper()
	code, out, errOut := evalRun(t, append([]string{"state", "check"}, files...)...)
	return out, errOut, code
}

func TestStateCheckCLI(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"tasks": [{"id": 3, "title": "x", "extra": 1}], "memory": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("{\"tasks\": [\n  {\"priority\": \"high\"}\n]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := stateCheck(t, good)
	if code != 0 || !strings.Contains(out, "good.json: 1 tasks, 0 memory entries") || !strings.Contains(errOut, "warning: state.unknown_field") {
		t.Errorf("assay state check good.json = exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = stateCheck(t, good, bad)
	want := "bad.json:2:16: state.type: tasks[0].priority: want a number, got a string \"high\"\n      {\"priority\": \"high\"}\n                   ^\n"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("assay state check bad.json = exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
	code, out, _ = evalRun(t, "state", "check", "--format", "json", bad)
	if code != 2 || !strings.Contains(out, `"code": "state.type"`) {
		t.Errorf("assay state check --format json = exit %d, %q", code, out)
	}
}

// TestSnapshotExcerptEscapesControlCharacters covers issue 14 item 8: a
// snapshot holding ESC/OSC bytes whose error excerpt is printed puts no raw
// control byte on the terminal.
func TestSnapshotExcerptEscapesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "evil\x1b[2J.json")
	src := "{\"tasks\": [\n  {\"title\": \"\x1b]0;pwned\x07\x1b[31m\x00\u009b\", \"priority\": \"high\"}\n]}"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := stateCheck(t, bad)
	if code != 2 {
		t.Fatalf("assay state check = exit %d, stdout %q, stderr %q; want exit 2", code, out, errOut)
	}
	want := `      {"title": "\x1b]0;pwned\x07\x1b[31m\x00\u009b", "priority": "high"}`
	if !strings.Contains(errOut, want) {
		t.Errorf("assay state check stderr = %q, want the excerpt escaped: %q", errOut, want)
	}
	for _, s := range []string{out, errOut} {
		for _, c := range s {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c <= 0x9f {
				t.Fatalf("assay state check printed control character %U raw: %q", c, s)
			}
		}
	}
}
