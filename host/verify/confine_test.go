package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/assay-eval/assay/pkg/diag"
)

const confinedLabel = "task_create_release_blocker"

// confinedRequest verifies one turns file or run directory of the fixture
// pack in-process, with nothing recorded.
func confinedRequest(t *testing.T, turnsFile string, runs ...string) Request {
	t.Helper()
	l := newLocal()
	p, set := loadFixturePack(t, l)
	return Request{Engine: Config{Pack: p, Scorers: l, Descriptions: l.descriptions(), CEL: set, ScorerVersion: "v"},
		TurnsFile: turnsFile, Runs: runs}
}

// fixtureFile is a fixture of the confined task: its good trace or a snapshot.
func fixtureFile(t *testing.T, kind string) []byte {
	t.Helper()
	p := filepath.Join(fixtures, "traces", confinedLabel+".good.ndjson")
	if kind != "trace" {
		p = filepath.Join(fixtures, "state", confinedLabel+"."+kind+".json")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyConfined runs req with a deadline (a refused FIFO or device must
// never hang) and returns the report's error diagnostics and how many turns
// were unscored.
func verifyConfined(t *testing.T, req Request) (diag.List, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, req)
	if err != nil {
		t.Fatalf("Run() = %v, want a report", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run() took %v; a refused input must be refused quickly", d)
	}
	unscored := 0
	for _, c := range rep.Candidates {
		unscored += c.Summary.Unscored
	}
	return rep.Diagnostics.Errors(), unscored
}

// TestRunInputPathsStayInsideTheRun covers issue 14 item 3 for a turns
// file: a trace_file or snapshot path that leaves the turns file's directory
// (.., an absolute path, a symbolic link) or that is not a regular file (a
// FIFO, a device) is refused: a positioned error, the turn unscored, exit 2;
// --allow-outside-paths lets a path leave, never a non-regular file in.
func TestRunInputPathsStayInsideTheRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		field, value string // the turns line's field holding a path, and the path ("OUT" is the outside directory)
		allowOutside bool
		wantCode     string // "" when the turn is scored
	}{
		{"dot-dot trace", "trace_file", "../OUTNAME/secret.ndjson", false, codeOutsideRun},
		{"absolute trace", "trace_file", "OUT/secret.ndjson", false, codeOutsideRun},
		{"etc shadow", "trace_file", "../../../../../../../../etc/shadow", false, codeOutsideRun},
		{"proc environ", "trace_file", "/proc/self/environ", false, codeOutsideRun},
		{"symlink out trace", "trace_file", "link.ndjson", false, codeOutsideRun},
		{"symlink out snapshot", "state_after", "link.after.json", false, codeOutsideRun},
		{"dot-dot snapshot", "state_before", "../OUTNAME/secret.before.json", false, codeOutsideRun},
		{"symlink inside is read", "trace_file", "inner.ndjson", false, ""},
		{"outside allowed", "trace_file", "../OUTNAME/secret.ndjson", true, ""},
		{"fifo trace", "trace_file", "fifo.ndjson", false, codeNotRegular},
		{"fifo snapshot", "state_after", "fifo.ndjson", false, codeNotRegular},
		{"dev zero", "trace_file", "/dev/zero", true, codeNotRegular},
		{"dev urandom snapshot", "state_before", "/dev/urandom", true, codeNotRegular},
		{"symlink to dev zero", "trace_file", "zero.ndjson", true, codeNotRegular},
		{"directory", "trace_file", "sub", false, codeNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			out, dir := filepath.Join(root, "outside"), filepath.Join(root, "run")
			for _, d := range []string{out, dir, filepath.Join(dir, "sub")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(out, "secret.ndjson"), string(fixtureFile(t, "trace")))
			writeFile(t, filepath.Join(out, "secret.before.json"), string(fixtureFile(t, "before")))
			writeFile(t, filepath.Join(dir, "trace.ndjson"), string(fixtureFile(t, "trace")))
			for link, target := range map[string]string{"link.ndjson": "../outside/secret.ndjson",
				"link.after.json": filepath.Join(out, "secret.before.json"), "inner.ndjson": "sub/../trace.ndjson",
				"zero.ndjson": "/dev/zero"} {
				if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo.ndjson"), 0o644); err != nil {
				t.Fatal(err)
			}
			line := map[string]any{"label": confinedLabel, "trace_file": "trace.ndjson"}
			value := strings.ReplaceAll(strings.ReplaceAll(tt.value, "OUTNAME", "outside"), "OUT", out)
			line[tt.field] = value
			b, _ := json.Marshal(line)
			turns := filepath.Join(dir, "turns.jsonl")
			writeFile(t, turns, string(b)+"\n")
			req := confinedRequest(t, turns)
			req.AllowOutsidePaths = tt.allowOutside
			errs, unscored := verifyConfined(t, req)
			if tt.wantCode == "" {
				if len(errs) != 0 || unscored != 0 {
					t.Fatalf("verify %s=%q: errors %v, %d unscored; want the turn scored", tt.field, value, errs, unscored)
				}
				return
			}
			if len(errs) != 1 || errs[0].Code != tt.wantCode || unscored != 1 {
				t.Fatalf("verify %s=%q: errors %v, %d unscored; want one %s and the turn unscored", tt.field, value, errs, unscored, tt.wantCode)
			}
			if errs[0].Pos.File != turns || errs[0].Pos.Line != 1 {
				t.Errorf("refusal at %v, want at the turns line %s:1", errs[0].Pos, turns)
			}
		})
	}
}

// TestRunDirPathsStayInsideTheRun covers issue 14 item 3 for a run
// directory: a trace, snapshot or results.json that is a symbolic link
// leaving the directory, or that is not a regular file, is refused.
func TestRunDirPathsStayInsideTheRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		file, target string // a file of the run made a symbolic link to target ("" for a FIFO)
		allowOutside bool
		wantCode     string
		wantRunError bool // the run is not read at all (results.json)
	}{
		{"trace symlink out", "results/" + confinedLabel + ".ndjson", "OUT/secret.ndjson", false, codeOutsideRun, false},
		{"results dir symlink out", "results", "OUT", false, codeOutsideRun, false},
		{"snapshot symlink out", "state/" + confinedLabel + ".after.json", "OUT/secret.after.json", false, codeOutsideRun, false},
		{"state dir symlink out", "state", "OUT/state", false, codeOutsideRun, false},
		{"trace symlink out allowed", "results/" + confinedLabel + ".ndjson", "OUT/secret.ndjson", true, "", false},
		{"trace fifo", "results/" + confinedLabel + ".ndjson", "", false, codeNotRegular, false},
		{"snapshot fifo", "state/" + confinedLabel + ".before.json", "", false, codeNotRegular, false},
		{"snapshot dev urandom", "state/" + confinedLabel + ".before.json", "/dev/urandom", true, codeNotRegular, false},
		{"results.json symlink out", "results.json", "OUT/results.json", false, codeOutsideRun, true},
		{"results.json fifo", "results.json", "", false, codeNotRegular, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			out, dir := filepath.Join(root, "outside"), filepath.Join(root, "cand")
			for _, d := range []string{out, filepath.Join(out, "state"), filepath.Join(dir, "results"), filepath.Join(dir, "state")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			trace, after := fixtureFile(t, "trace"), fixtureFile(t, "good.after")
			writeFile(t, filepath.Join(out, "secret.ndjson"), string(trace))
			writeFile(t, filepath.Join(out, confinedLabel+".ndjson"), string(trace))
			writeFile(t, filepath.Join(out, "secret.after.json"), string(after))
			writeFile(t, filepath.Join(out, "state", confinedLabel+".after.json"), string(after))
			writeFile(t, filepath.Join(out, "results.json"), `[{"label": "`+confinedLabel+`"}]`)
			writeFile(t, filepath.Join(dir, "results", confinedLabel+".ndjson"), string(trace))
			writeFile(t, filepath.Join(dir, "state", confinedLabel+".after.json"), string(after))
			p := filepath.Join(dir, tt.file)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			var err error
			if tt.target == "" {
				err = syscall.Mkfifo(p, 0o644)
			} else {
				err = os.Symlink(strings.ReplaceAll(tt.target, "OUT", out), p)
			}
			if err != nil {
				t.Fatal(err)
			}
			req := confinedRequest(t, "", dir)
			req.AllowOutsidePaths = tt.allowOutside
			if tt.wantRunError {
				_, ds, err := ReadRunDir(dir, "", WithOutsidePaths(tt.allowOutside))
				if err != nil || len(ds.Errors()) != 1 || ds.Errors()[0].Code != tt.wantCode || ds.Errors()[0].Pos.File != p {
					t.Fatalf("ReadRunDir = %v, %v; want one %s at %s", ds, err, tt.wantCode, p)
				}
				return
			}
			errs, unscored := verifyConfined(t, req)
			if tt.wantCode == "" {
				if len(errs) != 0 || unscored != 0 {
					t.Fatalf("verify: errors %v, %d unscored; want the turn scored", errs, unscored)
				}
				return
			}
			if len(errs) != 1 || errs[0].Code != tt.wantCode || unscored != 1 {
				t.Fatalf("verify: errors %v, %d unscored; want one %s and the turn unscored", errs, unscored, tt.wantCode)
			}
		})
	}
}
