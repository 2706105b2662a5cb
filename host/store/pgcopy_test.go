package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/host/store/storetest"
)

// TestCopyReader: the COPY data of a chunk is the same stream however
// small the driver's reads are: the header, every row of every statement
// in order, and the trailer, once each.
func TestCopyReader(t *testing.T) {
	run := &Run{ID: 7, Attempt: 1}
	turns, blobs := recordChunk(run, 0, 300)
	now := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	stmts := append(pgBlobStatements(blobs, now), pgTurnStatements(turns, now)...)
	read := func(st []pgStatement, size int) []byte {
		var out bytes.Buffer
		r := &copyReader{stmts: st}
		p := make([]byte, size)
		for {
			n, err := r.Read(p)
			out.Write(p[:n])
			if err == io.EOF {
				return out.Bytes()
			}
			if err != nil {
				t.Fatalf("Read() = %v", err)
			}
		}
	}
	for _, st := range [][]pgStatement{stmts[:1], stmts[1:]} {
		whole := read(st, 1<<24)
		var want []byte
		want = append(want, pgCopyHeader...)
		for _, s := range st {
			for i := range s.copy.n {
				want = s.copy.row(want, i)
			}
		}
		want = binary.BigEndian.AppendUint16(want, 0xffff)
		if !bytes.Equal(whole, want) {
			t.Fatalf("%s: one read = %d bytes, want %d", st[0].copy.sql, len(whole), len(want))
		}
		for _, size := range []int{1, 7, 1000, 65531} {
			if got := read(st, size); !bytes.Equal(got, want) {
				t.Errorf("%s: reads of %d bytes = %d bytes, differing from one read", st[0].copy.sql, size, len(got))
			}
		}
	}
}

// TestPostgresCopyStoresWhatInsertsStore: the same turns, evidence and
// pack tasks written by COPY into one schema and by the ON CONFLICT
// inserts into another read back byte for byte the same, every column
// (NULL scores, empty JSON, unicode, created_at to the microsecond, the
// default encoding, an empty blob).
func TestPostgresCopyStoresWhatInsertsStore(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	dump := func(s *Store) map[string][]string {
		out := map[string][]string{}
		for table, q := range map[string]string{
			"turns": `SELECT row_to_json(t)::text FROM (SELECT ` + turnColumns + ` FROM company_eval_turns) t ORDER BY 1`,
			"blobs": `SELECT row_to_json(b)::text FROM (SELECT sha256, kind, encoding, size, data, created_at FROM company_eval_blobs) b ORDER BY 1`,
			"packs": `SELECT row_to_json(p)::text FROM (SELECT pack_sha256, company, label, scorer, weight, slice_tags, created_at FROM company_eval_packs) p ORDER BY 1`,
		} {
			rows, err := s.db.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					t.Fatal(err)
				}
				out[table] = append(out[table], row)
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	var dumps []map[string][]string
	for _, form := range []string{"copy", "upsert"} {
		s := openStore(t, storetest.Postgres(t))
		s.now = func() time.Time { return now }
		if form == "upsert" {
			for tb := range pgTables {
				s.pgConflicted[tb].Store(true)
			}
		}
		run := beginRun(t, s)
		turns, blobs := recordChunk(run, 0, 50)
		score := math.Inf(-1)
		turns = append(turns, TurnRow{RunID: run.ID, Label: "ünïcödé ✓ 'q' \"dq\" \\", Attempt: 1, Status: TurnMissing},
			TurnRow{RunID: run.ID, Label: "edge", Attempt: 2, Epoch: 3, Revision: math.MaxInt32, Status: TurnScored,
				ProcessScore: &score, Checks: []byte(`[]`), Result: []byte(`{"emoji":"🦀"}`), InputKey: "ключ",
				Trace: []byte("{\"type\":\"done\"}\n\x00\xff")})
		blobs = append(blobs, Blob{SHA256: strings.Repeat("ab", 32), Kind: BlobTrace, Size: 0, Data: []byte{}},
			Blob{SHA256: "not-hex", Kind: BlobMetrics, Encoding: EncodingIdentity, Size: 3, Data: []byte("abc")})
		if err := s.RecordTurns(ctx, blobs, turns); err != nil {
			t.Fatalf("%s: RecordTurns() = %v", form, err)
		}
		tasks := []PackTask{{PackSHA256: "p", Company: "acme", Label: "a", Scorer: "composite", Weight: 0.1},
			{PackSHA256: "p", Label: "b ✓", Scorer: "answer_keywords", Weight: -2.5, SliceTags: []string{"x", "ÿ"}}}
		if err := s.UpsertPackTasks(ctx, tasks); err != nil {
			t.Fatalf("%s: UpsertPackTasks() = %v", form, err)
		}
		dumps = append(dumps, dump(s))
	}
	if len(dumps[0]["turns"]) != 52 || len(dumps[0]["blobs"]) != 77 || len(dumps[0]["packs"]) != 2 {
		t.Fatalf("COPY stored %d turns, %d blobs, %d tasks; want 52, 77, 2",
			len(dumps[0]["turns"]), len(dumps[0]["blobs"]), len(dumps[0]["packs"]))
	}
	if diff := cmp.Diff(dumps[1], dumps[0]); diff != "" {
		t.Errorf("stored by COPY (+) against by INSERT … ON CONFLICT (-):\n%s", diff)
	}
}

// TestPostgresCopyFallsBack: a COPY that meets a stored key (a second
// store on the same database recording a chunk again, with new rows in
// it) keeps nothing of itself and the chunk is stored again with ON
// CONFLICT: the stored rows are kept, the new ones added, none twice. A
// value out of its column's range is not sent by COPY: the server refuses
// it as an INSERT's, and nothing of the chunk is stored.
func TestPostgresCopyFallsBack(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.Postgres(t)
	first := openStore(t, dsn)
	run := beginRun(t, first)
	stored, storedBlobs := recordChunk(run, 0, 100)
	if err := first.RecordTurns(ctx, storedBlobs, stored); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(s *Store, turns []TurnRow, blobs []Blob) error{ // one connection: the fallback runs on the one the COPY failed on
		"evidence stored": func(s *Store, turns []TurnRow, blobs []Blob) error {
			return s.RecordTurns(ctx, append(blobs, storedBlobs[:3]...), turns)
		},
		"turns stored": func(s *Store, turns []TurnRow, blobs []Blob) error {
			if err := s.RecordTurns(ctx, blobs, nil); err != nil {
				return err
			}
			return s.RecordTurns(ctx, nil, append(turns, stored[:3]...))
		},
	} {
		s := openStore(t, dsn)
		s.db.SetMaxOpenConns(1)
		from := 100
		if name == "turns stored" {
			from = 200
		}
		turns, blobs := recordChunk(run, from, 100)
		if err := write(s, turns, blobs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !s.pgConflicted[pgBlobs].Load() && !s.pgConflicted[pgTurns].Load() {
			t.Errorf("%s: no table marked conflicted: the COPY did not meet the stored key", name)
		}
	}
	all, _ := recordChunk(run, 0, 300)
	if diff := cmp.Diff(turnKeys(all), storedTurns(t, first, run), ignoreTurnIDs); diff != "" {
		t.Errorf("stored turns (-want +got):\n%s", diff)
	}
	if st, err := first.EvidenceStats(ctx); err != nil || st.Blobs != 450 { // 300 traces, 150 metrics rows (recordChunk)
		t.Errorf("EvidenceStats() = %+v, %v; want 450 blobs, each stored once", st, err)
	}

	s := openStore(t, dsn)
	turns, blobs := recordChunk(run, 300, 10)
	turns[5].Attempt = math.MaxInt32 + 1
	err := s.RecordTurns(ctx, blobs, turns)
	if err == nil || !strings.Contains(err.Error(), "store turns") || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("RecordTurns(attempt 2^31) = %v, want the server's out of range", err)
	}
	if st, err := s.EvidenceStats(ctx); err != nil || st.Blobs != 450 {
		t.Errorf("EvidenceStats() = %+v, %v after the refused chunk; want the 450 stored before", st, err)
	}
}

// TestPostgresCopyFailureKeepsTheConnection: a chunk whose first COPY
// fails (evidence the server refuses) while its turns are still being
// sent, or whose second does (a turn of no run), keeps nothing, names the
// table that failed, and leaves the one connection of the pool in step
// with the server: the next chunk on it is stored.
func TestPostgresCopyFailureKeepsTheConnection(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, storetest.Postgres(t))
	s.db.SetMaxOpenConns(1)
	run := beginRun(t, s)
	turns, blobs := recordChunk(run, 0, 2000)
	padded := slices.Clone(turns)
	for i := range padded { // 20 MB of turns: more than the socket holds, still being sent when the evidence fails
		padded[i].Result = fmt.Appendf(nil, `{"i":%d,"pad":%q}`, i, strings.Repeat("x", 10000))
	}
	blobs[1].Kind = "bad \xff utf-8"
	err := s.RecordTurns(ctx, blobs, padded)
	if err == nil || !strings.HasPrefix(err.Error(), "store evidence: ") {
		t.Fatalf("RecordTurns(invalid blob kind) = %v, want a store evidence error", err)
	}
	if got := storedTurns(t, s, run); len(got) != 0 {
		t.Errorf("%d turns stored after the failed chunk, want 0", len(got))
	}
	blobs[1].Kind = BlobMetrics
	turns[1500].RunID = run.ID + 1000 // the evidence goes in, then a turn of no run fails its COPY
	err = s.RecordTurns(ctx, blobs, turns)
	if err == nil || !strings.HasPrefix(err.Error(), "store turns: ") {
		t.Fatalf("RecordTurns(turn of no run) = %v, want a store turns error", err)
	}
	if st, err := s.EvidenceStats(ctx); err != nil || st.Blobs != 0 {
		t.Errorf("EvidenceStats() = %+v, %v after the failed chunk; want no blobs", st, err)
	}
	turns[1500].RunID = run.ID
	if err := s.RecordTurns(ctx, blobs, turns); err != nil {
		t.Fatalf("RecordTurns(after a failed chunk) = %v", err)
	}
	if diff := cmp.Diff(turnKeys(turns), storedTurns(t, s, run), ignoreTurnIDs); diff != "" {
		t.Errorf("stored turns (-want +got):\n%s", diff)
	}
}
