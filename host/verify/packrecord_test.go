package verify

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
)

// TestRunRecordsPackFirst: Run stores the pack's tasks while the scorers
// start (docs/storage.md, "Recording"), and before any candidate: when the
// database refuses a task, Run fails naming it and no run is begun; when
// the scorers cannot start, no run is begun either. The engine is built
// while the scorers start: when it cannot be built no run is begun, and
// when the scorers cannot start either, theirs is the error reported.
func TestRunRecordsPackFirst(t *testing.T) {
	errStart := errors.New("the scorers did not start")
	tests := []struct {
		name    string
		enum    []string // the database's scorer CHECK; nil leaves the built-in set
		start   error
		wantErr string
		wantIs  error
		runs    int
		noEng   bool // the engine cannot be built: a task's scorer is not installed
	}{
		{name: "recorded", runs: 1},
		{name: "a task refused", enum: []string{"composite", "memory_grounding"},
			wantErr: `task "task_create_release_blocker"`, wantIs: store.ErrScorerNotInEnum},
		{name: "scorers do not start", start: errStart, wantIs: errStart},
		{name: "no engine", noEng: true, wantErr: "is not installed"},
		{name: "no engine and scorers do not start", noEng: true, start: errStart, wantIs: errStart},
	}
	for _, b := range storetest.Backends(t) {
		for _, tt := range tests {
			t.Run(b.Name+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				st := openStore(t, b.DSN(t))
				if tt.enum != nil {
					if err := st.SyncScorerEnum(ctx, tt.enum); err != nil {
						t.Fatal(err)
					}
				}
				req := exampleRequest(t, newLocal(), "../../examples/runs/candidate-a")
				req.Engine.Store = st
				if tt.noEng {
					descs := maps.Clone(req.Engine.Descriptions)
					delete(descs, req.Engine.Pack.Tasks[0].Scorer)
					req.Engine.Descriptions = descs
				}
				started := false
				req.Start = func(context.Context) error { started = true; return tt.start }
				_, runErr := Run(ctx, req)
				err := runErr
				switch {
				case tt.wantErr != "" && err == nil:
					t.Fatalf("Run() = nil, want an error naming %s", tt.wantErr)
				case tt.wantIs == nil && tt.wantErr == "" && err != nil:
					t.Fatalf("Run() = %v", err)
				case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
					t.Fatalf("Run() = %v, want an error wrapping %v", err, tt.wantIs)
				case err != nil && !strings.Contains(err.Error(), tt.wantErr):
					t.Errorf("Run() = %v, want it to name %s", err, tt.wantErr)
				}
				if !started {
					t.Errorf("Run() did not start the scorers")
				}
				p := req.Engine.Pack
				runs, err := st.Runs(ctx, p.SHA256)
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != tt.runs {
					t.Errorf("runs recorded = %d, want %d", len(runs), tt.runs)
				}
				if runErr != nil {
					return
				}
				tasks, err := st.PackTasks(ctx, p.SHA256)
				if err != nil {
					t.Fatal(err)
				}
				if len(tasks) != len(p.Tasks) {
					t.Errorf("pack tasks recorded = %d, want the pack's %d", len(tasks), len(p.Tasks))
				}
			})
		}
	}
}
