package queue

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TestWorkerRefusesOtherScorers (issue 22 item 2): a job of another pack or
// scorer version is refused with ErrWrongScorers before anything is read or
// written (the worker has no store or pool here).
func TestWorkerRefusesOtherScorers(t *testing.T) {
	t.Parallel()
	w := &batchWorker{cfg: WorkerConfig{PackSHA256: "pack-a", ScorerVer: "version-1", Logger: hclog.NewNullLogger()}}
	for name, args := range map[string]BatchArgs{
		"other scorer version": {RunID: 1, PackSHA256: "pack-a", ScorerVersion: "version-2"},
		"other pack":           {RunID: 1, PackSHA256: "pack-b", ScorerVersion: "version-1"},
	} {
		t.Run(name, func(t *testing.T) {
			err := w.Work(context.Background(), &river.Job[BatchArgs]{JobRow: &rivertype.JobRow{ID: 7}, Args: args})
			if !errors.Is(err, ErrWrongScorers) {
				t.Errorf("Work(%+v) = %v, want ErrWrongScorers", args, err)
			}
		})
	}
	if Name("pack-a", "version-1") == Name("pack-a", "version-2") {
		t.Errorf("Name gives two scorer versions one queue")
	}
}
