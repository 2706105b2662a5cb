package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Environment of a writer child process (see TestWriterProcess).
const (
	childDBEnv     = "ASSAY_STORE_CHILD_DB"
	childPrefixEnv = "ASSAY_STORE_CHILD_PREFIX"
	childTurnsEnv  = "ASSAY_STORE_CHILD_TURNS"
)

// TestTwoProcessesOneSQLiteFile runs two copies of the test binary that each
// open the same SQLite file and write turns to the same run at the same
// time, one row and one small batch at a time; no row may be lost.
func TestTwoProcessesOneSQLiteFile(t *testing.T) {
	if os.Getenv(childDBEnv) != "" {
		t.Skip("running as a writer child")
	}
	const perChild = 150
	db := filepath.Join(t.TempDir(), "shared.db")
	// The children race to create the schema too.
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			childDBEnv+"="+db, childPrefixEnv+"="+fmt.Sprintf("p%d", i), childTurnsEnv+"="+strconv.Itoa(perChild))
		cmds[i] = cmd
	}
	outs := make([]chan []byte, len(cmds))
	for i, cmd := range cmds {
		outs[i] = make(chan []byte, 1)
		go func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				out = append(out, []byte("\nexit: "+err.Error())...)
			}
			outs[i] <- out
		}()
	}
	for i := range cmds {
		out := <-outs[i]
		if cmds[i].ProcessState == nil || !cmds[i].ProcessState.Success() {
			t.Fatalf("writer %d failed:\n%s", i, out)
		}
	}
	s := openStore(t, db)
	run, err := s.BeginRun(context.Background(), RunKey{Candidate: "shared", PackSHA256: "p", ScorerVersion: "v"}, false)
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.TurnsDone(context.Background(), run.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 2*perChild {
		t.Errorf("two writers stored %d turns, want %d", len(done), 2*perChild)
	}
	for i := range 2 {
		for j := range perChild {
			if _, ok := done[TurnKey{Label: fmt.Sprintf("p%d-%d", i, j), Epoch: 1}]; !ok {
				t.Errorf("turn p%d-%d is missing", i, j)
			}
		}
	}
}

// TestWriterProcess is the child of TestTwoProcessesOneSQLiteFile; it does
// nothing unless that test started it.
func TestWriterProcess(t *testing.T) {
	db := os.Getenv(childDBEnv)
	if db == "" {
		t.Skip("only runs as a child of TestTwoProcessesOneSQLiteFile")
	}
	prefix := os.Getenv(childPrefixEnv)
	n, err := strconv.Atoi(os.Getenv(childTurnsEnv))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := Open(ctx, db)
	if err != nil {
		t.Fatalf("Open(%q) = %v", db, err)
	}
	defer s.Close()
	run, err := s.BeginRun(ctx, RunKey{Candidate: "shared", PackSHA256: "p", ScorerVersion: "v"}, false)
	if err != nil {
		t.Fatalf("BeginRun() = %v", err)
	}
	for i := 0; i < n; {
		if i%10 == 0 && i+5 <= n {
			var batch []TurnRow
			for j := range 5 {
				batch = append(batch, TurnRow{RunID: run.ID, Label: fmt.Sprintf("%s-%d", prefix, i+j), Attempt: 1, Status: TurnScored})
			}
			if err := s.InsertTurns(ctx, batch); err != nil {
				t.Fatalf("InsertTurns() = %v", err)
			}
			i += 5
			continue
		}
		if err := s.InsertTurn(ctx, TurnRow{RunID: run.ID, Label: fmt.Sprintf("%s-%d", prefix, i), Attempt: 1, Status: TurnScored}); err != nil {
			t.Fatalf("InsertTurn() = %v", err)
		}
		if err := s.PutSnapshot(ctx, "shared-snapshot", []byte("{}")); err != nil {
			t.Fatalf("PutSnapshot() = %v", err)
		}
		i++
	}
}
