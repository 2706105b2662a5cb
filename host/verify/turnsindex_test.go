package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// readTurnsFileEager is ReadTurnsFile as it was before the turns file was
// indexed: every turn's TurnSpec decoded and kept. The indexed reader must
// give the same inputs and diagnostics (TestIndexedTurnsFileMatchesEager).
func readTurnsFileEager(path, defaultCandidate string, opts ...ReadOption) ([]*Input, diag.List, error) {
	f, err := openInput(path, "")
	if err != nil {
		return nil, nil, fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	if defaultCandidate == "" {
		defaultCandidate = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	dir := filepath.Dir(path)
	root := dir
	if readConfigOf(opts).allowOutside {
		root = ""
	}
	var (
		diags  diag.List
		inputs []*Input
		index  = map[string]*Input{}
		seen   = map[turnID]diag.Pos{}
	)
	r := bufio.NewReaderSize(f, 64<<10)
	var offset int64
	for lineNo := 1; ; lineNo++ {
		line, n, err := readLine(r, maxTurnLine)
		start := offset
		offset += int64(n)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		pos := diag.Pos{File: path, Line: lineNo, Col: 1}
		if errors.Is(err, errLineTooLong) {
			diags = append(diags, diag.Errorf(pos, codeTurnsSyntax, "line longer than %d MiB", maxTurnLine>>20))
			continue
		} else if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("reading turns file %s: %w", path, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		ts, ds := decodeTurnLine(path, dir, lineNo, line, defaultCandidate)
		diags = append(diags, ds...)
		if ts != nil {
			ts.inline = &lineRef{path: path, offset: start, n: len(line)}
			key := turnID{ts.Candidate, ts.Label, ts.Epoch}
			ts.Root, ts.realRoot = root, resolveRoot(root)
			if first, dup := seen[key]; dup {
				epoch := ""
				if ts.Epoch > 1 {
					epoch = fmt.Sprintf(" in epoch %d", ts.Epoch)
				}
				diags = append(diags, diag.Errorf(pos, codeTurnsLabel, "candidate %q already has a turn for %q%s (line %d)", ts.Candidate, ts.Label, epoch, first.Line))
			} else {
				seen[key] = pos
				in := index[ts.Candidate]
				if in == nil {
					in = &Input{Candidate: ts.Candidate}
					index[ts.Candidate] = in
					inputs = append(inputs, in)
				}
				in.Turns = append(in.Turns, *ts)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return inputs, diags, nil
}

// turnLine is one good turns line of candidate c for task label.
func turnLine(c, label string, epoch int) string {
	ep := ""
	if epoch > 0 {
		ep = fmt.Sprintf(`,"epoch":%d`, epoch)
	}
	cand := ""
	if c != "" {
		cand = fmt.Sprintf(`"candidate":%q,`, c)
	}
	return fmt.Sprintf(`{%s"label":%q%s,"latency_s":1.5,"started_at":"2026-11-30T09:00:00Z","trace":[{"type":"done","reply":"ok","finalized":true}],"state_after":{"tickets":[]}}`,
		cand, label, ep)
}

// randomTurnsFile is a turns file of n lines from a few candidates, in runs
// of random length (so a candidate's lines come in several stretches), with
// bad lines, duplicates, epochs, blank lines and CRLF endings among them.
func randomTurnsFile(rng *rand.Rand, n int) string {
	var b strings.Builder
	cand := ""
	for i := 0; i < n; i++ {
		if i == 0 || rng.IntN(8) == 0 {
			cand = []string{"", "a", "b", "c", "d"}[rng.IntN(5)]
		}
		label := fmt.Sprintf("t%d", rng.IntN(12))
		switch k := rng.IntN(40); {
		case k == 0:
			b.WriteString("not json")
		case k == 1:
			b.WriteString(`{"label":"x","trace":[],"latency_s":"slow"}`)
		case k == 2:
			b.WriteString("   ")
		case k == 3:
			b.WriteString(`{"candidate":"b","trace":[]}`)
		case k < 8:
			b.WriteString(turnLine(cand, label, 1+rng.IntN(3)))
		default:
			b.WriteString(turnLine(cand, label, 0))
		}
		if i < n-1 || rng.IntN(2) == 0 {
			if rng.IntN(10) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestIndexedTurnsFileMatchesEager: the indexed turns file gives the
// inputs and diagnostics, in order, that decoding and keeping every turn
// gave: bad lines at their positions, duplicates naming the first line.
func TestIndexedTurnsFileMatchesEager(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"empty":           "",
		"blank lines":     "\n\n  \n",
		"no last newline": turnLine("a", "t1", 0) + "\n" + turnLine("a", "t2", 0),
		"interleaved": turnLine("a", "t1", 0) + "\n" + turnLine("b", "t1", 0) + "\n" + turnLine("a", "t2", 0) + "\n" +
			turnLine("b", "t2", 0) + "\n" + turnLine("a", "t1", 0) + "\n",
		"epochs": turnLine("a", "t1", 0) + "\n" + turnLine("a", "t1", 2) + "\n" + turnLine("a", "t1", 1) + "\n" +
			turnLine("a", "t1", 2) + "\n",
	}
	rng := rand.New(rand.NewPCG(16, 3))
	for i := range 40 {
		files[fmt.Sprintf("random %d", i)] = randomTurnsFile(rng, 20+rng.IntN(200))
	}
	for name, src := range files {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
		writeFile(t, path, src)
		want, wantDiags, err := readTurnsFileEager(path, "dflt")
		if err != nil {
			t.Fatal(err)
		}
		got, gotDiags, err := ReadTurnsFile(path, "dflt")
		if err != nil {
			t.Fatalf("%s: ReadTurnsFile = %v", name, err)
		}
		opt := cmp.AllowUnexported(Input{}, TurnSpec{}, Part{}, lineRef{})
		if diff := cmp.Diff(want, got, opt); diff != "" {
			t.Errorf("%s: ReadTurnsFile inputs (-eager +indexed):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantDiags.Error(), gotDiags.Error()); diff != "" {
			t.Errorf("%s: ReadTurnsFile diagnostics (-eager +indexed):\n%s", name, diff)
		}
		// Read lazily, a candidate's turns decode to the same specs.
		idx, idxDiags, err := indexTurnsFile(path, "dflt")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantDiags.Error(), idxDiags.Error()); diff != "" {
			t.Errorf("%s: indexTurnsFile diagnostics (-eager +indexed):\n%s", name, diff)
		}
		for i, in := range idx {
			if in.Turns != nil {
				t.Errorf("%s: candidate %s of the index holds its turns", name, in.Candidate)
			}
			specs, err := in.specs()
			if err != nil {
				t.Fatalf("%s: specs(%s) = %v", name, in.Candidate, err)
			}
			if diff := cmp.Diff(want[i].Turns, specs, opt, cmpopts.IgnoreFields(lineRef{}, "file")); diff != "" {
				t.Errorf("%s: specs(%s) (-eager +indexed):\n%s", name, in.Candidate, diff)
			}
			for _, ts := range specs {
				if ts.inline.(*lineRef).file == nil {
					t.Fatalf("%s: specs(%s): a turn's line is read again by opening the file", name, in.Candidate)
				}
			}
		}
		closeInputs(idx)
	}
}

// tenCandidates is a turns file of 10 candidates × tasks good turns, each
// candidate's lines together, with bad standing in for the line of task
// badTask of candidate badCand when not empty.
func tenCandidates(t *testing.T, tasks int, badCand, badTask int, bad string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	var b strings.Builder
	for c := range 10 {
		for k := range tasks {
			if c == badCand && k == badTask && bad != "" {
				b.WriteString(bad + "\n")
				continue
			}
			b.WriteString(turnLine(fmt.Sprintf("c%04d", c), fmt.Sprintf("t%d", k), 0) + "\n")
		}
	}
	writeFile(t, path, b.String())
	return path
}

// TestTurnsFileProblemsBeforeScoring: a bad line in the middle of
// candidate 7's turns, and a duplicate in candidate 9's, are reported with
// their lines, all at once, before anything is scored or even started.
func TestTurnsFileProblemsBeforeScoring(t *testing.T) {
	t.Parallel()
	path := tenCandidates(t, 20, 7, 10, `{"candidate":"c0007","label":"t10","trace":[],"latency_s":"slow"}`)
	src, _ := os.ReadFile(path)
	src = append(src, turnLine("c0009", "t3", 0)+"\n"...) // line 201, a duplicate of line 184
	writeFile(t, path, string(src))
	p := onePack([3]string{"t0", "s", "k"})
	sc := &scripted{script: map[scorer.ID]func(c *scorer.Case) *scorer.Result{"s": func(*scorer.Case) *scorer.Result { return &scorer.Result{Score: 1} }}}
	started := false
	var got []string
	_, err := Run(context.Background(), Request{
		Engine:      Config{Pack: p, Scorers: sc, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}},
		TurnsFile:   path,
		Start:       func(context.Context) error { started = true; return nil },
		Diagnostics: func(ds diag.List) { got = append(got, ds.Error()) },
	})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("Run = %v, want an *InputError", err)
	}
	want := []string{path + ":151:59: turns.field: not a valid turn: latency_s: want a number, got string\n" +
		path + `:201:1: turns.duplicate_label: candidate "c0009" already has a turn for "t3" (line 184)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run diagnostics (-want +got):\n%s", diff)
	}
	if started || len(sc.labels) > 0 {
		t.Errorf("Run started the scorers (%t) or scored %v before reporting the bad lines", started, sc.labels)
	}
}

// TestTurnsIndexHoldsNoTurn: indexing a turns file keeps a few bytes per
// candidate's stretch of lines, not a TurnSpec (456 bytes) per turn: a
// candidate whose lines are together is one segment, and the index of
// 50,000 turns holds well under 8 bytes a turn.
func TestTurnsIndexHoldsNoTurn(t *testing.T) {
	const tasks = 5000
	path := tenCandidates(t, tasks, -1, -1, "")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	idx, ds, err := indexTurnsFile(path, "")
	if err != nil || len(ds) > 0 {
		t.Fatalf("indexTurnsFile = %v, %v", ds, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	for _, in := range idx {
		if n := len(in.src.segs); n != 1 {
			t.Errorf("candidate %s: %d segments, want 1 (its lines are together)", in.Candidate, n)
		}
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if perTurn := float64(grown) / (10 * tasks); perTurn > 8 {
		t.Errorf("the index of %d turns holds %d bytes: %.1f a turn, want at most 8", 10*tasks, grown, perTurn)
	}
	runtime.KeepAlive(idx)
}

// constScorer scores every case 1 and keeps nothing.
type constScorer struct{}

func (constScorer) Score(_ context.Context, _ scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	for i := range out {
		out[i].Result = &scorer.Result{Score: 1}
	}
	return out
}

// TestRunKeepsNothingPerTurn: verifying a turns file keeps no state per
// turn once a candidate is done (docs/performance.md, "Flat memory"): the
// live heap at the last candidate grows with the candidates (their
// summaries) but not with their turns. Every turn's TurnSpec kept to the
// end of the run was 670 bytes a turn.
func TestRunKeepsNothingPerTurn(t *testing.T) {
	const tasks = 100
	small, large := liveAtLastCandidate(t, 10, tasks), liveAtLastCandidate(t, 50, tasks)
	perTurn := float64(large-small) / (40 * tasks)
	t.Logf("live heap at the last candidate: %d bytes at 10 candidates, %d at 50: %.1f a turn", small, large, perTurn)
	if perTurn > 100 {
		t.Errorf("the live heap at the last candidate grows by %.1f bytes a turn (%d at 10 candidates of %d turns, %d at 50), want at most 100",
			perTurn, small, tasks, large)
	}
}

// liveAtLastCandidate runs a verification of candidates × tasks turns
// (a constant scorer, nothing recorded) and returns how much the live heap
// grew from before the run to the last candidate's OnCandidate.
func liveAtLastCandidate(t *testing.T, candidates, tasks int) int64 {
	var specs [][3]string
	var b strings.Builder
	for k := range tasks {
		specs = append(specs, [3]string{fmt.Sprintf("t%d", k), "s", "k"})
	}
	for c := range candidates {
		for k := range tasks {
			b.WriteString(turnLine(fmt.Sprintf("c%04d", c), fmt.Sprintf("t%d", k), 0) + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "turns.jsonl")
	writeFile(t, path, b.String())
	b.Reset()
	p := onePack(specs...)
	var before, last runtime.MemStats
	n := 0
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := Run(context.Background(), Request{
		Engine:    Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}}},
		TurnsFile: path,
		OnCandidate: func(*Outcome, *CandidateReport) {
			if n++; n == candidates {
				runtime.GC()
				runtime.ReadMemStats(&last)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Candidates) != candidates || rep.Candidates[0].N != tasks {
		t.Fatalf("Run verified %d candidates (the first %d turns), want %d of %d", len(rep.Candidates), rep.Candidates[0].N, candidates, tasks)
	}
	return int64(last.HeapAlloc) - int64(before.HeapAlloc)
}

// TestTurnKeyIsInputKey: the input key built around the turn's metrics
// row is the one inputKey encodes whole, whatever the metrics hold.
func TestTurnKeyIsInputKey(t *testing.T) {
	t.Parallel()
	e := &Engine{}
	at := time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	nan, lat := math.NaN(), 2.5
	hex := strings.Repeat("ab12", 16)
	specs := []TurnSpec{
		{Candidate: "c", Label: "t"},
		{Candidate: `c<"&>`, Label: "t\u2028é\x01", Persona: "cto", LatencyS: &lat, CostUSD: &lat, StartedAt: at, FinishedAt: at},
		{Candidate: "c", Label: "t", LatencyS: &nan},
	}
	for _, shas := range [][4]string{{hex, hex, "", ""}, {hex, hex, hex, hex}, {"", "", "", ""}, {hex, "ZZ", `"`, hex}} {
		for i := range specs {
			ts := &specs[i]
			info := &taskInfo{key: sha256.Sum256([]byte(shas[0]))}
			want := e.inputKey(info, ts, shas[1], shas[2], shas[3])
			if got := e.turnKey(info, ts, shas[1], shas[2], shas[3], metricsRow(ts)); got != want {
				t.Errorf("turnKey(%+v, %q) = %q, want inputKey's %q", ts, shas, got, want)
			}
		}
	}
}

// TestTurnsFileChangedWhileRead: a candidate's lines that no longer read
// as they did when the file was indexed stop its verification with an
// error saying so, never a silently different turn.
func TestTurnsFileChangedWhileRead(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(string) string{
		"a line of another candidate": func(s string) string {
			return strings.Replace(s, `"candidate":"c0002","label":"t1"`, `"candidate":"c0003","label":"t1"`, 1)
		},
		"a line no longer valid": func(s string) string {
			return strings.Replace(s, `{"candidate":"c0002","label":"t1"`, `{"candidate":"c0002","label":7`, 1)
		},
		"the file cut short": func(s string) string { return s[:len(s)/2] },
	} {
		path := tenCandidates(t, 3, -1, -1, "")
		idx, ds, err := indexTurnsFile(path, "")
		if err != nil || len(ds) > 0 {
			t.Fatalf("indexTurnsFile = %v, %v", ds, err)
		}
		src, _ := os.ReadFile(path)
		writeFile(t, path, change(string(src)))
		specs, err := idx[2].specs()
		if !errors.Is(err, errTurnsChanged) {
			t.Errorf("%s: specs(c0002) = %d turns, %v; want an error saying the file changed", name, len(specs), err)
		}
		closeInputs(idx)
	}
}

// TestStreamedTurnsMatchGiven: a candidate of an indexed turns file,
// decoded a chunk at a time while it is verified, gives the outcome —
// results, diagnostics (unknown labels first, in the order read), summary
// — and the progress that the same turns decoded whole and given do:
// random files of interleaved candidates with blank lines, CRLF, epochs
// and labels that are not tasks, in chunks of 1 to 7 turns, so that chunks
// end inside and across segments. (One worker: which turn of a chunk
// reports a snapshot's diagnostics is the first to parse it.)
func TestStreamedTurnsMatchGiven(t *testing.T) {
	t.Parallel()
	p := onePack([3]string{"t0", "s", "k"}, [3]string{"t1", "s", "k"}, [3]string{"t2", "s", "k"}, [3]string{"t3", "s", "k"},
		[3]string{"t4", "s", "k"}, [3]string{"t5", "s", "k"}, [3]string{"t6", "s", "k"}, [3]string{"t7", "s", "k"})
	isTask := func(l string) bool { return p.Task(l) != nil }
	dir := t.TempDir()
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		var lines []string
		left := map[string][]string{}
		for _, c := range []string{"a", "b", "c"} {
			for _, k := range rng.Perm(12) {
				for ep := range 1 + rng.IntN(2) {
					left[c] = append(left[c], turnLine(c, fmt.Sprintf("t%d", k), ep+1))
				}
			}
		}
		for len(left) > 0 {
			c := []string{"a", "b", "c"}[rng.IntN(3)]
			for n := 1 + rng.IntN(6); n > 0 && len(left[c]) > 0; n-- {
				lines = append(lines, left[c][0])
				left[c] = left[c][1:]
				if rng.IntN(6) == 0 {
					lines = append(lines, "  ")
				}
			}
			if len(left[c]) == 0 {
				delete(left, c)
			}
		}
		end := "\n"
		if seed%3 == 0 {
			end = "\r\n"
		}
		path := filepath.Join(dir, fmt.Sprintf("turns%d.jsonl", seed))
		writeFile(t, path, strings.Join(lines, end)+end)

		chunk := 1 + seed%7
		verify := func(in *Input) (*Outcome, [][2]int) {
			var progress [][2]int
			e, err := New(Config{Pack: p, Scorers: constScorer{}, Descriptions: map[scorer.ID]scorer.Description{"s": {ID: "s"}},
				ChunkSize: chunk, BatchSize: 2, Workers: 1, Progress: func(done, total int) { progress = append(progress, [2]int{done, total}) }})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Verify(context.Background(), in, Options{})
			if err != nil {
				t.Fatalf("seed %d: Verify(%s) = %v", seed, in.Candidate, err)
			}
			return out, progress
		}
		given, ds, err := ReadTurnsFile(path, "")
		if err != nil || len(ds) > 0 {
			t.Fatalf("seed %d: ReadTurnsFile = %v, %v", seed, ds, err)
		}
		indexed, ds, err := indexTurnsFile(path, "", withTasks(isTask))
		if err != nil || len(ds) > 0 {
			t.Fatalf("seed %d: indexTurnsFile = %v, %v", seed, ds, err)
		}
		for i, in := range indexed {
			if in.src.tasks < 0 || in.Candidate != given[i].Candidate {
				t.Fatalf("seed %d: indexed candidate %s without a count of its tasks' turns", seed, in.Candidate)
			}
			streamed, sp := verify(in)
			whole, wp := verify(given[i])
			if diff := cmp.Diff(whole, streamed, cmp.AllowUnexported(TurnResult{})); diff != "" {
				t.Errorf("seed %d, candidate %s, chunks of %d: streamed outcome differs (-given +streamed):\n%s", seed, in.Candidate, chunk, diff)
			}
			if diff := cmp.Diff(wp, sp); diff != "" {
				t.Errorf("seed %d, candidate %s: streamed progress differs (-given +streamed):\n%s", seed, in.Candidate, diff)
			}
			if len(whole.Diagnostics) == 0 || len(whole.Results) == 0 {
				t.Errorf("seed %d: %d diagnostics, %d results; want unknown labels and results", seed, len(whole.Diagnostics), len(whole.Results))
			}
		}
		closeInputs(indexed)
	}
}

// indexView is what an index gives Run of each candidate: its name, its
// file as the passes read it, its stretches of lines and its counts.
type indexView struct {
	Candidate, Path, Dir, Root, Default string
	Size                                int64
	Segs                                []segment
	Turns, Tasks                        int
}

func viewIndex(ins []*Input) []indexView {
	var out []indexView
	for _, in := range ins {
		f := in.src.file
		out = append(out, indexView{Candidate: in.Candidate, Path: f.path, Dir: f.dir, Root: f.root, Default: f.defaultCandidate,
			Size: f.size, Segs: in.src.segs, Turns: in.src.turns, Tasks: in.src.tasks})
	}
	return out
}

// TestTurnsIndexAheadIsIndex: a turns file indexed ahead, its tasks
// counted once they are known, gives Run what indexing it with the tasks
// gives — the same candidates, lines, counts of turns and of turns of the
// pack's tasks (duplicates and bad lines not counted), and diagnostics —
// for random files with bad lines, duplicates and epochs, over task sets
// of none, some and all of the labels (and labels past a 512-label block).
func TestTurnsIndexAheadIsIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 16))
	files := map[string]string{"empty": "", "blank lines": "\n\n  \n"}
	for i := range 30 {
		files[fmt.Sprintf("random %d", i)] = randomTurnsFile(rng, 20+rng.IntN(200))
	}
	var wide strings.Builder // more labels than one block of the turn set
	for i := range 1500 {
		fmt.Fprintf(&wide, "%s\n", turnLine([]string{"a", "b"}[i%2], fmt.Sprintf("t%d", i%700), i%3))
	}
	files["wide"] = wide.String()
	taskSets := map[string]func(string) bool{
		"none": func(string) bool { return false },
		"all":  func(string) bool { return true },
		"odd":  func(l string) bool { return len(l) > 1 && (l[len(l)-1]-'0')%2 == 1 },
		"t1":   func(l string) bool { return strings.HasPrefix(l, "t1") },
	}
	for name, src := range files {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
		writeFile(t, path, src)
		for cand, allow := range map[string]bool{"": false, "dflt": true} {
			for tsName, isTask := range taskSets {
				want, wantDiags, err := indexTurnsFile(path, cand, WithOutsidePaths(allow), withTasks(isTask))
				if err != nil {
					t.Fatal(err)
				}
				ahead := IndexTurnsAhead(path, cand, allow)
				req := Request{TurnsFile: path, Candidate: cand, AllowOutsidePaths: allow}
				if !ahead.of(&req) {
					t.Fatalf("%s: the index ahead is not of its own request", name)
				}
				got, gotDiags, err := ahead.take(isTask)
				if err != nil {
					t.Fatalf("%s: take = %v", name, err)
				}
				if ahead.of(&req) {
					t.Errorf("%s: an index taken is offered again", name)
				}
				if diff := cmp.Diff(viewIndex(want), viewIndex(got), cmp.AllowUnexported(segment{})); diff != "" {
					t.Errorf("%s, candidate %q, tasks %s: inputs (-indexed with tasks +ahead):\n%s", name, cand, tsName, diff)
				}
				if diff := cmp.Diff(wantDiags.Error(), gotDiags.Error()); diff != "" {
					t.Errorf("%s: diagnostics (-indexed with tasks +ahead):\n%s", name, diff)
				}
				ahead.Close()
				closeInputs(want)
				closeInputs(got)
			}
		}
	}
}

// TestTurnsIndexAheadOtherRequest: Run indexes the file itself when the
// index ahead is of another file, candidate or path rule; an index ahead
// of a file that cannot be read gives Run the error indexing gives; and
// Close stops an index nobody took.
func TestTurnsIndexAheadOtherRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "turns.jsonl")
	writeFile(t, path, turnLine("a", "t1", 0)+"\n")
	req := Request{TurnsFile: path, Candidate: "c"}
	for _, ahead := range []*TurnsIndex{
		IndexTurnsAhead(filepath.Join(dir, "other.jsonl"), "c", false),
		IndexTurnsAhead(path, "d", false),
		IndexTurnsAhead(path, "c", true),
	} {
		if ahead.of(&req) {
			t.Errorf("an index of %s, candidate %q, outside paths %v is taken for %+v", ahead.path, ahead.candidate, ahead.allowOutside, req)
		}
		ahead.Close()
	}
	missing := filepath.Join(dir, "missing.jsonl")
	_, _, want := indexTurnsFile(missing, "")
	ahead := IndexTurnsAhead(missing, "", false)
	if _, _, got := ahead.take(func(string) bool { return true }); got == nil || got.Error() != want.Error() {
		t.Errorf("take of a missing file = %v, want %v", got, want)
	}
	ahead.Close()
	big := filepath.Join(dir, "big.jsonl")
	var b strings.Builder
	for i := range 20000 {
		b.WriteString(turnLine("a", fmt.Sprintf("t%d", i), 0) + "\n")
	}
	writeFile(t, big, b.String())
	ahead = IndexTurnsAhead(big, "", false)
	ahead.Close() // stops it, or waits for it to end; the file is closed either way
	if ahead.ix != nil {
		t.Errorf("Close left the index ahead's inputs open")
	}
}
