package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/host/store/storetest"
)

var ignoreTurnIDs = cmpopts.IgnoreFields(TurnRow{}, "ID", "CreatedAt")

// rawBlob is a blob stored as it is (identity), keyed by its sha256.
func rawBlob(kind string, data []byte) Blob {
	sum := sha256.Sum256(data)
	return Blob{SHA256: hex.EncodeToString(sum[:]), Kind: kind, Encoding: EncodingIdentity, Size: int64(len(data)), Data: data}
}

// recordChunk returns n turns of run with the values verify records, the
// scores and the JSON varying with i, and their trace blobs; every other
// turn keeps its metrics row itself, as verify records them, and the others
// have it as a blob, as a queued run's evidence and turns recorded before
// migration 012 do.
func recordChunk(run *Run, from, n int) ([]TurnRow, []Blob) {
	var turns []TurnRow
	var blobs []Blob
	for i := from; i < from+n; i++ {
		trace := rawBlob(BlobTrace, fmt.Appendf(nil, `{"type":"final_answer","payload":{"message":"antwort %d ✓"}}`, i))
		metrics := rawBlob(BlobMetrics, fmt.Appendf(nil, `{"latency_s":%d}`, i))
		score := float64(i%7) / 7
		t := TurnRow{RunID: run.ID, Label: fmt.Sprintf("task-%05d", i), Epoch: 1 + i%2, Attempt: run.Attempt, Revision: 1 + i%3,
			InputKey: fmt.Sprintf("key-%d", i), Status: TurnScored, ProcessScore: &score, KPIScore: &score, TurnScore: &score,
			Checks: fmt.Appendf(nil, `[{"name":"c%d","score":%g}]`, i, score), FailureTags: []byte(`["slow"]`),
			ScorerID: "answer_keywords", ScorerSHA256: "abc", Result: fmt.Appendf(nil, `{"label":"task-%05d","n":%d}`, i, i),
			TraceSHA256: trace.SHA256, MetricsSHA256: metrics.SHA256}
		if i%5 == 0 { // unscored: no KPI or turn score
			t.Status, t.KPIScore, t.TurnScore = TurnUnscored, nil, nil
		}
		blobs = append(blobs, trace)
		if i%2 == 0 {
			t.Metrics = metrics.Data
		} else {
			blobs = append(blobs, metrics)
		}
		turns = append(turns, t)
	}
	return turns, blobs
}

// storedTurns reads every revision of a run's attempt, keyed by label,
// epoch and revision.
func storedTurns(tb testing.TB, s *Store, run *Run) map[string]TurnRow {
	tb.Helper()
	all, err := s.turns(context.Background(), run.ID, run.Attempt, "")
	if err != nil {
		tb.Fatalf("read turns: %v", err)
	}
	out := map[string]TurnRow{}
	for _, t := range all {
		out[fmt.Sprintf("%s/%d/%d", t.Label, t.Epoch, t.Revision)] = t
	}
	return out
}

func turnKeys(turns []TurnRow) map[string]TurnRow {
	out := map[string]TurnRow{}
	for _, t := range turns {
		k := fmt.Sprintf("%s/%d/%d", t.Label, max(t.Epoch, 1), max(t.Revision, 1))
		if _, dup := out[k]; !dup {
			out[k] = t
		}
	}
	return out
}

// TestRecordTurns: a chunk of turns and their evidence reads back exactly:
// NULL scores, unicode, empty JSON (stored as its default), epoch and
// revision 0 (stored as 1), multi-megabyte blobs, identity and gzip
// encodings, and more rows and bytes than one statement holds.
func TestRecordTurns(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			turns, blobs := recordChunk(run, 0, 1100)
			score := 0.25
			odd := []TurnRow{
				{RunID: run.ID, Label: "missing", Attempt: 1, Status: TurnMissing},
				{RunID: run.ID, Label: "ünïcödé ✓ 日本語 'q' \"dq\" \\ ?", Epoch: 3, Attempt: 1, Revision: 2, InputKey: "ключ",
					Status: TurnScored, ProcessScore: &score, Checks: []byte(`[{"detail":"naïve — ✓ \u00e9"}]`), FailureTags: []byte(`[]`),
					ScorerID: "tool_sequence", StateBeforeSHA256: "before", StateAfterSHA256: "after", Result: []byte(`{"emoji":"🦀"}`)},
			}
			turns = append(odd, turns...)
			for range 2 { // 10 MB in all: more than one Postgres batch carries
				big := make([]byte, 5<<20)
				rand.Read(big)
				blobs = append(blobs, rawBlob(BlobSnapshot, big))
			}
			blobs = append(blobs, gzipBlob(t, BlobTrace, bytes.Repeat([]byte("trace line ✓\n"), 1000)))
			if err := s.RecordTurns(ctx, blobs, turns); err != nil {
				t.Fatalf("RecordTurns() = %v", err)
			}
			want := turnKeys(turns)
			for k, w := range want {
				w.Epoch, w.Revision = max(w.Epoch, 1), max(w.Revision, 1)
				if w.Checks == nil {
					w.Checks = []byte("[]")
				}
				if w.FailureTags == nil {
					w.FailureTags = []byte("[]")
				}
				if w.Result == nil {
					w.Result = []byte("{}")
				}
				want[k] = w
			}
			if diff := cmp.Diff(want, storedTurns(t, s, run), ignoreTurnIDs); diff != "" {
				t.Errorf("stored turns (-want +got):\n%s", diff)
			}
			shas := make([]string, len(blobs))
			for i, bl := range blobs {
				shas[i] = bl.SHA256
			}
			got, err := s.ReadBlobs(ctx, shas)
			if err != nil {
				t.Fatalf("ReadBlobs() = %v", err)
			}
			if len(got) != len(blobs) {
				t.Errorf("ReadBlobs() = %d blobs, want %d", len(got), len(blobs))
			}
			for _, bl := range blobs[:len(blobs)-1] { // the last one is gzip
				if !bytes.Equal(got[bl.SHA256], bl.Data) {
					t.Errorf("blob %s: read %d bytes, want the %d stored", shortSHA(bl.SHA256), len(got[bl.SHA256]), len(bl.Data))
				}
			}
			if g := got[blobs[len(blobs)-1].SHA256]; !bytes.Equal(g, bytes.Repeat([]byte("trace line ✓\n"), 1000)) {
				t.Errorf("gzip blob read back as %d bytes", len(g))
			}
		})
	}
}

// TestRecordTurnsResume: recording turns or evidence already stored (a
// resumed run, a retried chunk, the same key twice in one chunk) skips
// them and keeps what was stored first.
func TestRecordTurnsResume(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			first, firstBlobs := recordChunk(run, 0, 300)
			if err := s.RecordTurns(ctx, firstBlobs, first); err != nil {
				t.Fatalf("RecordTurns(first) = %v", err)
			}
			again, againBlobs := recordChunk(run, 200, 300) // 200..299 are stored already
			for i := range again {
				again[i].Status, again[i].InputKey = TurnMissing, "changed"
			}
			again = append(again, again[150]) // the same key twice in one chunk: the first is kept
			again[len(again)-1].InputKey = "second"
			if err := s.RecordTurns(ctx, append(againBlobs, firstBlobs...), again); err != nil {
				t.Fatalf("RecordTurns(again) = %v", err)
			}
			if err := s.RecordTurns(ctx, firstBlobs, first); err != nil {
				t.Fatalf("RecordTurns(first, again) = %v", err)
			}
			want := turnKeys(first)
			for k, v := range turnKeys(again) {
				if _, ok := want[k]; !ok {
					want[k] = v
				}
			}
			if diff := cmp.Diff(want, storedTurns(t, s, run), ignoreTurnIDs); diff != "" {
				t.Errorf("stored turns (-want +got):\n%s", diff)
			}
			st, err := s.EvidenceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(500 + 250); st.Blobs != want { // 500 traces, the odd turns' 250 metrics rows
				t.Errorf("EvidenceStats().Blobs = %d, want %d (each stored once)", st.Blobs, want)
			}
		})
	}
}

// TestRecordTurnsAtomic: a chunk that fails part way (a turn of a run that
// does not exist, after hundreds of good rows and megabytes of evidence)
// records nothing of the chunk, and an invalid turn is refused before
// anything is written.
func TestRecordTurnsAtomic(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			run := beginRun(t, s)
			for name, size := range map[string]int{"small": 10, "large": 3 << 20} {
				turns, blobs := recordChunk(run, 0, 600)
				for range 3 {
					big := make([]byte, size)
					rand.Read(big)
					blobs = append(blobs, rawBlob(BlobSnapshot, big))
				}
				bad := turns[0]
				bad.RunID, bad.Label = run.ID+1000, "orphan"
				turns = append(turns[:400:400], append([]TurnRow{bad}, turns[400:]...)...)
				if err := s.RecordTurns(ctx, blobs, turns); err == nil {
					t.Fatalf("%s: RecordTurns(turn of no run) = nil, want an error", name)
				}
				turns[400].RunID, turns[400].Status = run.ID, "done"
				if err := s.RecordTurns(ctx, blobs, turns); err == nil || !strings.Contains(err.Error(), `status "done"`) {
					t.Fatalf("%s: RecordTurns(status done) = %v, want the status refused", name, err)
				}
				if got := storedTurns(t, s, run); len(got) != 0 {
					t.Errorf("%s: %d turns stored after a failed chunk, want 0", name, len(got))
				}
				if st, err := s.EvidenceStats(ctx); err != nil || st.Blobs != 0 {
					t.Errorf("%s: EvidenceStats() = %+v, %v after a failed chunk; want no blobs", name, st, err)
				}
			}
			if err := s.RecordTurns(ctx, []Blob{{Kind: BlobTrace, Data: []byte("x")}}, nil); err == nil {
				t.Errorf("RecordTurns(blob without sha256) = nil, want an error")
			}
		})
	}
}

// TestUpsertPackTasksMany: many tasks in one call, a label given twice (the
// last wins), tasks stored again with new values (updated), and a scorer
// the enum does not allow, part way through, named in the error with
// nothing of that call stored.
func TestUpsertPackTasksMany(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			var tasks []PackTask
			for i := range 2500 {
				tasks = append(tasks, PackTask{PackSHA256: "pack", Company: "acme", Label: fmt.Sprintf("tâsk-%04d", i),
					Scorer: builtinIDs[i%len(builtinIDs)], Weight: float64(i%4) + 0.5})
			}
			tasks[7].SliceTags = []string{"billing", "ünï"}
			tasks = append(tasks, PackTask{PackSHA256: "pack", Company: "acme", Label: "tâsk-0003", Scorer: "composite", Weight: 9,
				SliceTags: []string{"last"}})
			if err := s.UpsertPackTasks(ctx, tasks); err != nil {
				t.Fatalf("UpsertPackTasks() = %v", err)
			}
			want := map[string]PackTask{}
			for _, task := range tasks {
				if task.SliceTags == nil {
					task.SliceTags = []string{}
				}
				want[task.Label] = task
			}
			check := func(when string) {
				t.Helper()
				got, err := s.PackTasks(ctx, "pack")
				if err != nil {
					t.Fatalf("%s: PackTasks() = %v", when, err)
				}
				gotMap := map[string]PackTask{}
				for _, task := range got {
					gotMap[task.Label] = task
				}
				if diff := cmp.Diff(want, gotMap); diff != "" {
					t.Errorf("%s: PackTasks() (-want +got):\n%s", when, diff)
				}
			}
			check("first")
			for i := range tasks[:100] {
				tasks[i].Weight, tasks[i].Company = 7, "other"
				task := tasks[i]
				if task.SliceTags == nil {
					task.SliceTags = []string{}
				}
				want[task.Label] = task
			}
			want["tâsk-0003"] = PackTask{PackSHA256: "pack", Company: "acme", Label: "tâsk-0003", Scorer: "composite", Weight: 9, SliceTags: []string{"last"}}
			if err := s.UpsertPackTasks(ctx, tasks); err != nil {
				t.Fatalf("UpsertPackTasks(again) = %v", err)
			}
			check("again")

			bad := append([]PackTask{}, tasks[:1500]...)
			for i := range bad {
				bad[i].Weight = 100
			}
			bad[1200].Scorer = "acme_invoice"
			err := s.UpsertPackTasks(ctx, bad)
			wantErr := `store pack task "tâsk-1200": scorer "acme_invoice": ` + ErrScorerNotInEnum.Error()
			if !errors.Is(err, ErrScorerNotInEnum) || !strings.HasPrefix(err.Error(), wantErr) {
				t.Fatalf("UpsertPackTasks(acme_invoice) = %v, want %q...", err, wantErr)
			}
			check("after the refused call")
		})
	}
}

// TestPostgresPlainInsertsFirst: Postgres writes new rows with plain
// inserts; a write that meets a stored key is run again with ON CONFLICT,
// keeping what was stored and adding the rest, and that table's writes
// use ON CONFLICT from then on, the other tables' still plain.
func TestPostgresPlainInsertsFirst(t *testing.T) {
	s := openStore(t, storetest.Postgres(t))
	ctx := context.Background()
	conflicted := func() []pgTable {
		var out []pgTable
		for tb := range pgTables {
			if s.pgConflicted[tb].Load() {
				out = append(out, tb)
			}
		}
		return out
	}
	run := beginRun(t, s)
	tasks := []PackTask{{PackSHA256: "p", Label: "a", Scorer: "composite", Weight: 1}, {PackSHA256: "p", Label: "b", Scorer: "composite", Weight: 1}}
	first, firstBlobs := recordChunk(run, 0, 100)
	second, secondBlobs := recordChunk(run, 100, 100)
	steps := []struct {
		name  string
		write func() error
		want  []pgTable
	}{
		{"new rows", func() error {
			if err := s.UpsertPackTasks(ctx, tasks); err != nil {
				return err
			}
			return s.RecordTurns(ctx, firstBlobs, first)
		}, nil},
		{"evidence stored already, new turns", func() error { return s.RecordTurns(ctx, append(secondBlobs, firstBlobs[:10]...), second) },
			[]pgTable{pgBlobs}},
		{"turns stored already", func() error { return s.RecordTurns(ctx, nil, first[:10]) }, []pgTable{pgTurns, pgBlobs}},
		{"pack tasks stored already, one changed", func() error {
			tasks[1].Weight = 2
			return s.UpsertPackTasks(ctx, tasks)
		}, []pgTable{pgTurns, pgBlobs, pgPacks}},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, conflicted()); diff != "" {
			t.Errorf("%s: tables written with ON CONFLICT (-want +got):\n%s", st.name, diff)
		}
	}
	if diff := cmp.Diff(turnKeys(append(first, second...)), storedTurns(t, s, run), ignoreTurnIDs); diff != "" {
		t.Errorf("stored turns (-want +got):\n%s", diff)
	}
	if st, err := s.EvidenceStats(ctx); err != nil || st.Blobs != 300 { // 200 traces, 100 metrics rows (recordChunk)
		t.Errorf("EvidenceStats() = %+v, %v; want 300 blobs, each stored once", st, err)
	}
	got, err := s.PackTasks(ctx, "p")
	if err != nil || len(got) != 2 || got[1].Weight != 2 {
		t.Errorf("PackTasks() = %+v, %v; want b updated to weight 2", got, err)
	}
}

// TestRecordTurnsBindsRowsAsAlone: a chunk's rows bind the values they
// share with the row before as the same interface values (rowBoxes); every
// column of every row, its SQLite type included, is what the row stores
// written alone. The rows repeat and change each shared column's value in
// turn (run, attempt, status, each score with nil, 0 and -0, checks and
// failure tags with empty ones, scorer, snapshots, revision, epoch). It
// fails if a value bound for one row is bound for another.
func TestRecordTurnsBindsRowsAsAlone(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, storetest.SQLite(t))
	chunk := beginRun(t, s)
	alone, err := s.BeginRun(ctx, RunKey{Candidate: "alone", PackSHA256: "p", ScorerVersion: "v"}, false)
	if err != nil {
		t.Fatal(err)
	}
	zero, negZero, half, one := 0.0, math.Copysign(0, -1), 0.5, 1.0
	scores := []*float64{&half, &half, nil, &one, &zero, &negZero, &negZero, &one, nil, nil, &half}
	texts := [][]byte{[]byte(`[{"n":1}]`), []byte(`[{"n":1}]`), nil, []byte(`[]`), []byte(`[{"n":2}]`), nil, nil, []byte(`[{"n":1}]`)}
	strs := []string{"a", "a", "", "b", "b", "a", "", ""}
	statuses := []string{TurnScored, TurnScored, TurnUnscored, TurnMissing, TurnScored}
	var rows []TurnRow
	for i := range 60 {
		rows = append(rows, TurnRow{Label: fmt.Sprintf("t%02d", i), Epoch: i % 3, Revision: i / 7 % 3, InputKey: fmt.Sprintf("k%d", i%4),
			Status: statuses[i%len(statuses)], ProcessScore: scores[i%len(scores)], KPIScore: scores[(i+3)%len(scores)],
			TurnScore: scores[i/2%len(scores)], Checks: texts[i%len(texts)], FailureTags: texts[(i+5)%len(texts)],
			ScorerID: strs[i%len(strs)], ScorerSHA256: strs[(i+1)%len(strs)], StateBeforeSHA256: strs[i/3%len(strs)],
			StateAfterSHA256: strs[(i+2)%len(strs)], Result: texts[(i+1)%len(texts)], TraceSHA256: strs[i%5],
			MetricsSHA256: strs[i%6], Metrics: texts[i%3]})
	}
	for i := range rows {
		r := rows[i]
		r.RunID, r.Attempt = alone.ID, alone.Attempt
		if err := s.InsertTurn(ctx, r); err != nil {
			t.Fatal(err)
		}
		rows[i].RunID, rows[i].Attempt = chunk.ID, chunk.Attempt
	}
	if err := s.RecordTurns(ctx, nil, rows); err != nil {
		t.Fatal(err)
	}
	read := func(run *Run) []string {
		var cols []string
		for _, c := range strings.Split(turnColumns, ",") {
			if c = strings.TrimSpace(c); c != "run_id" && c != "created_at" {
				cols = append(cols, "typeof("+c+")", "quote("+c+")")
			}
		}
		q := `SELECT ` + strings.Join(cols, " || ' ' || ") + ` FROM company_eval_turns WHERE run_id = ? ORDER BY label, epoch, revision`
		rs, err := s.db.QueryContext(ctx, q, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var v string
			if err := rs.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	want, got := read(alone), read(chunk)
	if len(want) != len(rows) {
		t.Fatalf("%d rows written alone, want %d", len(want), len(rows))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows recorded in one chunk (-alone +chunk):\n%s", diff)
	}
}
