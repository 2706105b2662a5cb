package verify

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// Diagnostic codes for run inputs.
const (
	codeRunMetrics  = "run.metrics"
	codeTurnsSyntax = "turns.syntax"
	codeTurnsField  = "turns.field"
	codeTurnsLabel  = "turns.duplicate_label"
	codeRunEpoch    = "run.epoch"

	codeRunMissingTrace = "run.missing_trace"
)

// maxResultsFile bounds a run directory's results.json.
const maxResultsFile = 64 << 20

// maxTurnLine bounds one line of a turns file (a turn with its whole trace inline).
const maxTurnLine = 64 << 20

// Input is one candidate's turns, read lazily: a TurnSpec says where a turn's
// trace and snapshots are, not what they hold.
type Input struct {
	Candidate string
	// Turns are the candidate's turns; nil for a candidate of a turns file
	// read by Run, whose turns stay in the file (src) until the candidate
	// is verified.
	Turns []TurnSpec
	src   *turnsSource
	// PolicyVersion and SkillVersion are the harness's, from a run
	// directory's run.json or the request; drift units (docs/evidence.md).
	PolicyVersion string
	SkillVersion  string
}

// TurnSpec says where one turn's parts are.
type TurnSpec struct {
	Candidate  string
	Label      string
	Epoch      int // which repetition of the task, from 1 (docs/run-input.md)
	Persona    string
	LatencyS   *float64
	CostUSD    *float64
	StartedAt  time.Time
	FinishedAt time.Time
	Pos        diag.Pos // where the turn was declared (trace file or turns line)

	// Root is the directory the turn's files must stay in: the run
	// directory or the turns file's directory; empty when they are not
	// confined (--allow-outside-paths, or paths named on the command line).
	Root string
	// realRoot is Root with its symbolic links resolved when the turns
	// were read, "" when it was not (then each file resolves it again).
	realRoot string

	TracePath string   // a trace file, or
	traceAt   diag.Pos // where TracePath was written (a turns line), for a refusal
	// inline loads a trace given inline when the turn is scored: a
	// turns-file line read again (lineRef), or a trace's OTLP spans written
	// as NDJSON (otlpTurn), so a run's traces are never all in memory as
	// NDJSON at once.
	inline inlineSource
	// traceSHA names a trace kept as evidence (docs/evidence.md): a turn
	// rescored from the database reads it from there, from the turn
	// traceTurn when it keeps it itself (store.OpenTrace; 0: a blob).
	traceSHA  string
	traceTurn int64

	StateBefore Part
	StateAfter  Part
}

// Part is a snapshot given as a file path or inline in a turns line; empty
// when absent.
type Part struct {
	Path   string
	inline bool
	stored string // the sha256 of a snapshot kept as evidence
	Pos    diag.Pos
	at     diag.Pos // where Path was written (a turns line), for a refusal
}

// refPos is where a refusal of the part's file is reported: where its path
// was written, else the file.
func (p Part) refPos() diag.Pos {
	if p.at != (diag.Pos{}) {
		return p.at
	}
	return p.Pos
}

// refPos is where a refusal of the turn's trace file is reported: where its
// path was written, else the file.
func (ts *TurnSpec) refPos() diag.Pos {
	if ts.traceAt != (diag.Pos{}) {
		return ts.traceAt
	}
	return ts.Pos
}

// Empty reports whether the part is absent.
func (p Part) Empty() bool { return p.Path == "" && !p.inline && p.stored == "" }

// metrics is one row of a candidate directory's results.json or one turns line.
type metrics struct {
	Label      string   `json:"label"`
	Candidate  string   `json:"candidate"`
	Persona    string   `json:"persona"`
	LatencyS   *float64 `json:"latency_s"`
	CostUSD    *float64 `json:"cost_usd"`
	StartedAt  string   `json:"started_at"`
	FinishedAt string   `json:"finished_at"`
	TraceFile  string   `json:"trace_file"`
	Epoch      *float64 `json:"epoch"` // absent: 1; else a positive integer (epochOf)
	// trace, state_before and state_after are read from the line's tree
	// (decodeTurnLine) and when the turn is scored (lineRef.load).
}

// ReadRunDir reads a harness candidate directory: DIR/results/<label>.ndjson
// or DIR/results/<label>.<epoch>.ndjson, the optional DIR/results.json
// metrics and DIR/state/<label>[.<epoch>].{before,after}.json
// (docs/run-input.md). candidate overrides the directory name. Problems in
// results.json and trace names are diagnostics; an unreadable directory is
// an error naming the path. Every file of the run must stay inside dir
// (docs/run-input.md), unless WithOutsidePaths(true) is given.
func ReadRunDir(dir, candidate string, opts ...ReadOption) (*Input, diag.List, error) {
	return ReadRunDirTasks(dir, candidate, nil, opts...)
}

// ReadRunDirTasks is ReadRunDir knowing the pack's task labels: a trace
// results/X.N.ndjson whose whole name X.N is a task (isTask) is epoch 1 of
// task X.N, not epoch N of X. A nil isTask reads every such name as an epoch.
func ReadRunDirTasks(dir, candidate string, isTask func(string) bool, opts ...ReadOption) (*Input, diag.List, error) {
	root := dir
	if readConfigOf(opts).allowOutside {
		root = ""
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("reading run directory: %s is not a directory", dir)
	}
	if candidate == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("reading run directory %s: %w", dir, err)
		}
		candidate = filepath.Base(abs)
	}
	resultsDir := filepath.Join(dir, "results")
	entries, err := os.ReadDir(resultsDir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading run directory: %w", err)
	}
	traces, diags := traceFiles(resultsDir, entries, isTask)
	byKey := map[store.TurnKey]metrics{}
	mpath := filepath.Join(dir, "results.json")
	src, err := readInput(mpath, root, maxResultsFile)
	switch {
	case errors.Is(err, errOutsideRun) || errors.Is(err, errNotRegular):
		diags = append(diags, diag.Errorf(diag.Pos{File: mpath}, inputCode(err, ""), "%v", err))
	case err == nil:
		rows, nodes, ds := decodeMetrics(mpath, src)
		diags = append(diags, ds...)
		for _, r := range rows {
			byKey[r.key()] = r
		}
		diags = append(diags, missingTraces(jsonpos.Source{File: mpath, Src: src}, resultsDir, rows, nodes, traces)...)
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("reading run metrics: %w", err)
	}
	in := &Input{Candidate: candidate}
	vs, ds, err := readRunVersions(dir, root)
	if err != nil {
		return nil, diags, err
	}
	diags = append(diags, ds...)
	in.PolicyVersion, in.SkillVersion = vs.PolicyVersion, vs.SkillVersion
	realRoot := resolveRoot(root)
	for _, tf := range traces {
		ts := TurnSpec{Candidate: candidate, Label: tf.label, Epoch: tf.epoch, Root: root, realRoot: realRoot, TracePath: tf.path, Pos: diag.Pos{File: tf.path}}
		if m, ok := byKey[store.TurnKey{Label: tf.label, Epoch: tf.epoch}]; ok {
			ts.Persona, ts.LatencyS, ts.CostUSD = m.Persona, m.LatencyS, m.CostUSD
			ts.StartedAt, _ = parseTime(m.StartedAt)
			ts.FinishedAt, _ = parseTime(m.FinishedAt)
		}
		ts.StateBefore = statePart(dir, tf, "before")
		ts.StateAfter = statePart(dir, tf, "after")
		in.Turns = append(in.Turns, ts)
	}
	sort.Slice(in.Turns, func(i, j int) bool {
		a, b := in.Turns[i], in.Turns[j]
		return a.Label < b.Label || (a.Label == b.Label && a.Epoch < b.Epoch)
	})
	return in, diags, nil
}

// key is the turn a metrics row is about (a row with a bad epoch is
// dropped before it is keyed).
func (m metrics) key() store.TurnKey {
	e, _ := epochOf(m.Epoch)
	return store.TurnKey{Label: m.Label, Epoch: e}
}

// epochOf is a row's epoch: 1 when absent; an error unless a whole number
// from 1 up.
func epochOf(v *float64) (int, error) {
	if v == nil {
		return 1, nil
	}
	if *v < 1 || *v != math.Trunc(*v) || *v > math.MaxInt32 {
		return 0, fmt.Errorf("epoch: want a whole number from 1 up, got %v", *v)
	}
	return int(*v), nil
}

// traceFile is one trace of a run directory's results/.
type traceFile struct {
	label    string
	epoch    int
	stem     string // the file name without .ndjson
	path     string
	numbered bool // the name carries the epoch
}

// traceFiles lists the traces in a run's results directory. Two traces of
// one epoch of a task (x.ndjson and x.1.ndjson) and epoch 0 are errors.
func traceFiles(resultsDir string, entries []os.DirEntry, isTask func(string) bool) ([]traceFile, diag.List) {
	var out []traceFile
	var diags diag.List
	seen := map[store.TurnKey]string{}
	for _, e := range entries {
		stem, ok := traceStem(e)
		if !ok {
			continue
		}
		path := filepath.Join(resultsDir, e.Name())
		tf := traceFile{label: stem, epoch: 1, stem: stem, path: path}
		if label, n, ok := splitEpoch(stem); ok && (isTask == nil || !isTask(stem)) {
			if n < 1 {
				diags = append(diags, diag.Errorf(diag.Pos{File: path}, codeRunEpoch, "trace %s: epoch %d: epochs count from 1", path, n))
				continue
			}
			tf.label, tf.epoch, tf.numbered = label, n, true
		}
		k := store.TurnKey{Label: tf.label, Epoch: tf.epoch}
		if prev, dup := seen[k]; dup {
			diags = append(diags, diag.Errorf(diag.Pos{File: path}, codeRunEpoch,
				"traces %s and %s are both epoch %d of turn %q; keep one", prev, path, tf.epoch, tf.label))
			continue
		}
		seen[k] = path
		out = append(out, tf)
	}
	return out, diags
}

// splitEpoch splits a trace name X.N (N decimal digits) into X and N.
func splitEpoch(stem string) (string, int, bool) {
	i := strings.LastIndexByte(stem, '.')
	if i <= 0 || i == len(stem)-1 {
		return "", 0, false
	}
	for _, c := range stem[i+1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.Atoi(stem[i+1:])
	if err != nil {
		return "", 0, false
	}
	return stem[:i], n, true
}

// statePart finds one snapshot of a turn: for a trace named with its epoch,
// state/<label>.<epoch>.<part>.json; else, or when that is absent,
// state/<label>.<part>.json, which serves the before part of every epoch
// and the after part of epoch 1 only (docs/run-input.md).
func statePart(dir string, tf traceFile, part string) Part {
	var paths []string
	if tf.numbered {
		paths = append(paths, filepath.Join(dir, "state", fmt.Sprintf("%s.%d.%s.json", tf.label, tf.epoch, part)))
	}
	if part == "before" || tf.epoch == 1 {
		paths = append(paths, filepath.Join(dir, "state", tf.label+"."+part+".json"))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return Part{Path: p, Pos: diag.Pos{File: p}}
		}
	}
	return Part{}
}

// traceName is the file name of a turn's trace: <label>.ndjson for epoch 1,
// else <label>.<epoch>.ndjson.
func traceName(k store.TurnKey) string {
	if k.Epoch <= 1 {
		return k.Label + ".ndjson"
	}
	return fmt.Sprintf("%s.%d.ndjson", k.Label, k.Epoch)
}

// missingTraces warns about every row of results.json whose trace file is
// absent, naming the nearest trace file that results.json does not list:
// such a turn is never scored, and a task of the pack without a trace
// counts as missing (docs/run-input.md).
func missingTraces(s jsonpos.Source, resultsDir string, rows []metrics, nodes []*jsonpos.Node, traces []traceFile) diag.List {
	have := map[store.TurnKey]bool{}
	for _, tf := range traces {
		have[store.TurnKey{Label: tf.label, Epoch: tf.epoch}] = true
	}
	listed := map[store.TurnKey]bool{}
	for _, r := range rows {
		listed[r.key()] = true
	}
	var unlisted []string
	stems := map[string]string{} // unlisted trace stem -> its file name
	for _, tf := range traces {
		if !listed[store.TurnKey{Label: tf.label, Epoch: tf.epoch}] {
			unlisted = append(unlisted, tf.stem)
			stems[tf.stem] = tf.stem + ".ndjson"
		}
	}
	var diags diag.List
	for i, r := range rows {
		k := r.key()
		if have[k] {
			continue
		}
		what := fmt.Sprintf("turn %q", r.Label)
		if k.Epoch > 1 {
			what = fmt.Sprintf("epoch %d of turn %q", k.Epoch, r.Label)
		}
		msg := fmt.Sprintf("results.json lists %s, but its trace %s does not exist; the turn is not scored",
			what, filepath.Join(resultsDir, traceName(k)))
		if near, ok := nearestLabel(strings.TrimSuffix(traceName(k), ".ndjson"), unlisted); ok {
			msg += fmt.Sprintf("; did you mean %q (%s)?", near, filepath.Join(resultsDir, stems[near]))
		}
		diags = append(diags, s.Warnf(valueOff(nodes[i], "label"), codeRunMissingTrace, "%s", msg))
	}
	return diags
}

// valueOff is the offset of the value of key in object n, or of n when
// the key is absent (or spelt in another case, which encoding/json accepts).
func valueOff(n *jsonpos.Node, key string) int {
	if m := n.Get(key); m != nil {
		return m.Value.Off
	}
	return n.Off
}

// traceStem is the name of a trace file in a run's results directory
// without .ndjson.
func traceStem(e os.DirEntry) (string, bool) {
	if e.IsDir() || !strings.HasSuffix(e.Name(), ".ndjson") {
		return "", false
	}
	return strings.TrimSuffix(e.Name(), ".ndjson"), true
}

// nearestLabel is the label of labels closest to label by edit distance,
// for a "did you mean"; ok is false when none is close (more than a third
// of label's length, at most 3, away). Ties go to the smaller label.
func nearestLabel(label string, labels []string) (nearest string, ok bool) {
	limit := max(1, min(3, len([]rune(label))/3))
	best := limit + 1
	for _, l := range labels {
		if d := diag.EditDistance(label, l); d < best || (d == best && l < nearest) {
			nearest, best = l, d
		}
	}
	return nearest, best <= limit
}

// didYouMean suggests the pack's task label nearest to label, for a turn
// named for no task: "; did you mean "x"?", or "" when none is close.
func (e *Engine) didYouMean(label string) string {
	labels := make([]string, 0, len(e.cfg.Pack.Tasks))
	for _, t := range e.cfg.Pack.Tasks {
		labels = append(labels, t.Label)
	}
	if near, ok := nearestLabel(label, labels); ok {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// decodeMetrics decodes results.json: an array of objects with at least
// label. Each row's node is returned with it, for positions.
func decodeMetrics(file string, src []byte) ([]metrics, []*jsonpos.Node, diag.List) {
	s := jsonpos.Source{File: file, Src: src}
	const want = "results.json must be a JSON array of per-turn objects"
	root, err := jsonpos.Parse(src, jsonpos.Options{BuildDepth: 2})
	if err != nil {
		return nil, nil, diag.List{s.Diag(codeRunMetrics, want, err)}
	}
	if root.Kind != jsonpos.Array {
		return nil, nil, diag.List{s.Errorf(root.Off, codeRunMetrics, "%s, got %s", want, root.Kind)}
	}
	var diags diag.List
	var rows []metrics
	var nodes []*jsonpos.Node
	for i, e := range root.Elems {
		var m metrics
		if err := jsonpos.DecodeNode(src, e, &m, jsonpos.Options{AllowUnknownFields: true}); err != nil {
			diags = append(diags, s.Diag(codeRunMetrics, fmt.Sprintf("entry %d", i), err))
			continue
		}
		if m.Label == "" {
			diags = append(diags, s.Errorf(e.Off, codeRunMetrics, "entry %d has no label", i))
			continue
		}
		for _, f := range []struct{ key, val string }{{"started_at", m.StartedAt}, {"finished_at", m.FinishedAt}} {
			if _, err := parseTime(f.val); err != nil {
				diags = append(diags, s.Errorf(valueOff(e, f.key), codeRunMetrics, "entry %d: %s: %v", i, f.key, err))
			}
		}
		if _, err := epochOf(m.Epoch); err != nil {
			diags = append(diags, s.Errorf(valueOff(e, "epoch"), codeRunMetrics, "entry %d: %v", i, err))
			continue
		}
		rows, nodes = append(rows, m), append(nodes, e)
	}
	return rows, nodes, diags
}

// ReadTurnsFile reads a turns file: one JSON turn a line. Turns are grouped
// by candidate (the line's candidate, else defaultCandidate, else the file's
// base name). Every bad line is a positioned diagnostic; the good lines are
// still returned. The paths in the lines must stay inside the turns file's
// directory (docs/run-input.md), unless WithOutsidePaths(true) is given.
func ReadTurnsFile(path, defaultCandidate string, opts ...ReadOption) ([]*Input, diag.List, error) {
	inputs, diags, err := indexTurnsFile(path, defaultCandidate, opts...)
	if err != nil {
		return nil, nil, err
	}
	// Decoded for the caller to keep: each turn's line is read again by
	// opening the file, never through a handle left open.
	for _, in := range inputs {
		if in.Turns, err = in.src.decode(in.Candidate, false); err != nil {
			break
		}
	}
	closeInputs(inputs)
	if err != nil {
		return nil, nil, err
	}
	for _, in := range inputs {
		in.src = nil
	}
	return inputs, diags, nil
}

// turnID is one turn of a turns file: a candidate's epoch of a task.
type turnID struct {
	candidate, label string
	epoch            int
}

// decodeTurnLine decodes one turns line into a TurnSpec, with every problem
// of the line as a diagnostic. The line's values are not built into a tree
// (an inline trace can be large); they are read again when the turn is scored.
func decodeTurnLine(file, dir string, lineNo int, line []byte, defaultCandidate string) (*TurnSpec, diag.List) {
	ts, _, ds := decodeTurn(file, dir, lineNo, line, defaultCandidate)
	return ts, ds
}

// decodeTurn is decodeTurnLine that also returns where the line's inline
// parts are (nil when the line's keys need encoding/json's own matching,
// plainKeys), so that they are not found by parsing the line again.
func decodeTurn(file, dir string, lineNo int, line []byte, defaultCandidate string) (*TurnSpec, *lineSpans, diag.List) {
	ts := new(TurnSpec)
	spans, ok, ds := decodeTurnTo(ts, file, dir, lineNo, line, defaultCandidate)
	if !ok {
		return nil, nil, ds
	}
	return ts, spans, ds
}

// decodeTurnTo is decodeTurn into *ts, which it overwrites whole; ok is
// false for a line that is not a valid turn (*ts is then not one). The
// index and a pass's reader decode into a TurnSpec of their own, instead
// of a new one a line (docs/performance.md, "Verifying many small turns").
func decodeTurnTo(ts *TurnSpec, file, dir string, lineNo int, line []byte, defaultCandidate string) (*lineSpans, bool, diag.List) {
	src := jsonpos.Source{File: file, Src: line, Line: lineNo}
	pos := diag.Pos{File: file, Line: lineNo, Col: 1}
	o := jsonpos.Options{BuildDepth: 1, AllowUnknownFields: true, Keys: lineKeys[:]}
	var m metrics
	root, err := jsonpos.Parse(line, o)
	plain := false
	if err == nil {
		// A plain line's metrics are read off the tree; any other, and any
		// value the tree alone cannot decode as encoding/json would, goes
		// through encoding/json, which says what is wrong.
		if plain = root.Kind == jsonpos.Object && plainKeys(root); !plain || !m.fromTree(root) {
			slow := new(metrics) // on the heap only on this path
			err = jsonpos.DecodeNode(line, root, slow, o)
			m = *slow
		}
	}
	if err != nil {
		code := codeTurnsSyntax
		if errors.Is(err, jsonpos.ErrType) {
			code = codeTurnsField
		}
		return nil, false, diag.List{src.Diag(code, "not a valid turn", err)}
	}
	var diags diag.List
	// member is the named member of the line's object, and where its key is.
	member := func(name string) (*jsonpos.Node, diag.Pos) {
		if mb := root.Get(name); mb != nil && mb.Value.Kind != jsonpos.Null {
			return mb.Value, src.Pos(mb.Off)
		}
		return nil, pos
	}
	if m.Label == "" {
		diags = append(diags, diag.Errorf(pos, codeTurnsField, "turn has no label"))
	}
	*ts = TurnSpec{Candidate: cmp.Or(m.Candidate, defaultCandidate), Label: m.Label, Epoch: 1, Persona: m.Persona, LatencyS: m.LatencyS, CostUSD: m.CostUSD, Pos: pos}
	if ts.Epoch, err = epochOf(m.Epoch); err != nil {
		_, ep := member("epoch")
		diags = append(diags, diag.Errorf(ep, codeTurnsField, "%v", err))
	}
	for _, f := range []struct {
		key, val string
		t        *time.Time
	}{{"started_at", m.StartedAt, &ts.StartedAt}, {"finished_at", m.FinishedAt, &ts.FinishedAt}} {
		if *f.t, err = parseTime(f.val); err != nil {
			_, fp := member(f.key)
			diags = append(diags, diag.Errorf(fp, codeTurnsField, "%s: %v", f.key, err))
		}
	}
	trace, tracePos := member("trace")
	_, fileKey := member("trace_file")
	switch {
	case trace != nil && m.TraceFile != "":
		diags = append(diags, diag.Errorf(fileKey, codeTurnsField, "give trace or trace_file, not both"))
	case trace != nil && trace.Kind != jsonpos.Array:
		diags = append(diags, diag.Errorf(tracePos, codeTurnsField, "trace must be an array of event objects"))
	case trace != nil:
		ts.Pos = tracePos
	case m.TraceFile != "":
		ts.TracePath = resolve(dir, m.TraceFile)
		ts.Pos, ts.traceAt = diag.Pos{File: ts.TracePath}, fileKey
	default:
		diags = append(diags, diag.Errorf(pos, codeTurnsField, "turn %q has neither trace nor trace_file", m.Label))
	}
	for _, sp := range []struct {
		name string
		part *Part
	}{{"state_before", &ts.StateBefore}, {"state_after", &ts.StateAfter}} {
		v, fp := member(sp.name)
		switch {
		case v == nil:
		case v.Kind == jsonpos.String:
			p := resolve(dir, v.Text)
			*sp.part = Part{Path: p, Pos: diag.Pos{File: p}, at: fp}
		case v.Kind == jsonpos.Object:
			*sp.part = Part{inline: true, Pos: fp}
		default:
			diags = append(diags, diag.Errorf(fp, codeTurnsField, "%s must be a snapshot object or a file path", sp.name))
		}
	}
	if diags.HasErrors() {
		return nil, false, diags
	}
	if !plain {
		return nil, true, diags
	}
	sp := &lineSpans{}
	for _, f := range []struct {
		name string
		span *[2]int
	}{{"trace", &sp.trace}, {"state_before", &sp.before}, {"state_after", &sp.after}} {
		if mb := root.Get(f.name); mb != nil {
			*f.span = [2]int{mb.Value.Off, mb.Value.End}
			if f.name == "trace" && mb.Value.Kind != jsonpos.Array {
				*f.span = [2]int{} // null: no events
			}
		}
	}
	return sp, true, diags
}

// lineKeys are the keys of a turns line that encoding/json matches to a
// field, metrics' and inlineParts'.
var lineKeys = [...]string{"label", "candidate", "persona", "latency_s", "cost_usd", "started_at", "finished_at",
	"trace_file", "epoch", "trace", "state_before", "state_after"}

// plainKeys reports whether the object's keys read the same by exact match
// as by encoding/json's case-insensitive one: no key of lineKeys repeated,
// and no other key another spelling of one of them.
func plainKeys(root *jsonpos.Node) bool {
	var seen uint32
	for i := range root.Members {
		key := root.Members[i].Key
		exact := false
		for k, name := range lineKeys {
			if key == name {
				if seen&(1<<k) != 0 {
					return false
				}
				seen |= 1 << k
				exact = true
				break
			}
		}
		if exact {
			continue
		}
		for _, name := range lineKeys {
			if strings.EqualFold(key, name) {
				return false
			}
		}
	}
	return true
}

// fromTree decodes the metrics of a plain line (plainKeys) from its tree,
// as encoding/json would: a string field takes a string and keeps its value
// on null, a number field takes a number and is nil on null. It reports
// false, having decoded part of it, for any value encoding/json would
// refuse (a wrong type, a number out of range), which the caller decodes
// with encoding/json for its error.
func (m *metrics) fromTree(root *jsonpos.Node) bool {
	str := func(v *jsonpos.Node, dst *string) bool {
		switch v.Kind {
		case jsonpos.String:
			*dst = v.Text
		case jsonpos.Null:
		default:
			return false
		}
		return true
	}
	num := func(v *jsonpos.Node, dst **float64) bool {
		switch v.Kind {
		case jsonpos.Number:
			f, err := strconv.ParseFloat(v.Text, 64)
			if err != nil {
				return false
			}
			*dst = &f
		case jsonpos.Null:
			*dst = nil
		default:
			return false
		}
		return true
	}
	for i := range root.Members {
		v := root.Members[i].Value
		ok := true
		switch root.Members[i].Key {
		case "label":
			ok = str(v, &m.Label)
		case "candidate":
			ok = str(v, &m.Candidate)
		case "persona":
			ok = str(v, &m.Persona)
		case "started_at":
			ok = str(v, &m.StartedAt)
		case "finished_at":
			ok = str(v, &m.FinishedAt)
		case "trace_file":
			ok = str(v, &m.TraceFile)
		case "latency_s":
			ok = num(v, &m.LatencyS)
		case "cost_usd":
			ok = num(v, &m.CostUSD)
		case "epoch":
			ok = num(v, &m.Epoch)
		}
		if !ok {
			return false
		}
	}
	return true
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// parseTime accepts RFC 3339 (with or without fractional seconds); empty is the zero time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time such as 2026-11-30T09:00:00Z, got %q", s)
	}
	return t, nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its newline, refusing lines over max bytes
// (the rest of such a line is skipped). n is the number of bytes consumed.
func readLine(r *bufio.Reader, max int) (line []byte, n int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if len(line)+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = r.ReadSlice('\n')
				n += len(chunk)
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, n, err
			}
			return nil, n, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return line, n, err
		}
		return bytes.TrimRight(line, "\r\n"), n, nil
	}
}

// inlineSource loads a turn's trace (as NDJSON) and inline snapshots.
type inlineSource interface {
	load() (traceNDJSON, before, after []byte, err error)
}

// lineRef locates one line of a turns file.
type lineRef struct {
	path   string
	offset int64
	n      int
	file   *turnsFile // the run's open file; nil: open path to read
}

// readAt reads len(buf) bytes at off of the turns file at path.
func readAt(path string, buf []byte, off int64) error {
	f, err := openInput(path, "")
	if err != nil {
		return fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	if _, err := f.ReadAt(buf, off); err != nil {
		return fmt.Errorf("reading turns file %s: %w", path, err)
	}
	return nil
}

// inlineParts are the heavy parts of a turns line, read when the turn is scored.
type inlineParts struct {
	Trace  []json.RawMessage `json:"trace"`
	Before json.RawMessage   `json:"state_before"`
	After  json.RawMessage   `json:"state_after"`
}

// lineSpans are where a plain turns line's inline parts are (decodeTurn):
// the byte ranges of its trace array and its snapshots, empty when absent.
type lineSpans struct {
	trace, before, after [2]int
}

// maxHeldLine bounds a turns line kept in memory from when it is decoded
// until its turn is prepared; a longer one is read again (lineRef).
const maxHeldLine = 16 << 10

// heldLine is a turns line read for a chunk of turns and kept until its
// turn is prepared, with where its parts are: loading it neither reads
// the file nor parses the line again (docs/performance.md, "Verifying
// many small turns"). Its bytes are dropped once loaded; a second load
// reads the line again through ref.
type heldLine struct {
	ref   lineRef
	line  []byte
	spans lineSpans
}

func (h *heldLine) load() (traceNDJSON, before, after []byte, err error) {
	line := h.line
	if line == nil {
		return h.ref.load()
	}
	h.line = nil
	part := func(sp [2]int) []byte {
		if sp[1] == 0 {
			return nil
		}
		return line[sp[0]:sp[1]:sp[1]]
	}
	var nd bytes.Buffer
	if t := part(h.spans.trace); t != nil {
		nd.Grow(len(t))
		eachElement(t, func(e []byte) { appendEvent(&nd, e) })
	}
	return nd.Bytes(), part(h.spans.before), part(h.spans.after), nil
}

// appendEvent writes one element of a turns line's trace to nd as an
// NDJSON line, compacted as encoding/json would.
func appendEvent(nd *bytes.Buffer, e []byte) {
	if err := json.Compact(nd, e); err != nil {
		nd.Write(e)
	}
	nd.WriteByte('\n')
}

// eachElement calls f with the bytes of each element of arr, a valid JSON
// array, as encoding/json gives them to a json.RawMessage: without the
// white space around them. The line was parsed whole already, so this only
// splits; jsonpos.Parse would build a node for every element, about four
// more allocations a turn in BenchmarkRunTurnsFile.
func eachElement(arr []byte, f func(elem []byte)) {
	depth, start, inString := 0, -1, false
	for i := 1; i < len(arr); i++ {
		c := arr[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}':
			depth--
		case ']':
			if depth == 0 {
				if start >= 0 {
					f(bytes.TrimRight(arr[start:i], " \t\r\n"))
				}
				return
			}
			depth--
		case ',':
			if depth == 0 {
				f(bytes.TrimRight(arr[start:i], " \t\r\n"))
				start = -1
				continue
			}
		}
		if start < 0 {
			start = i
		}
	}
}

// load reads the line again and returns its trace as NDJSON and its inline snapshots.
func (l *lineRef) load() (traceNDJSON, before, after []byte, err error) {
	buf := make([]byte, l.n)
	if l.file != nil {
		err = l.file.readAt(buf, l.offset)
	} else {
		err = readAt(l.path, buf, l.offset)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return inlinePartsOf(l.path, bytes.TrimRight(buf, "\r\n"))
}

// inlinePartsOf is a turns line's trace as NDJSON and its inline
// snapshots, decoded by encoding/json.
func inlinePartsOf(path string, line []byte) (traceNDJSON, before, after []byte, err error) {
	var parts inlineParts
	if err := json.Unmarshal(line, &parts); err != nil {
		return nil, nil, nil, fmt.Errorf("reading turns file %s: the file changed while it was read: %w", path, err)
	}
	var nd bytes.Buffer
	for _, e := range parts.Trace {
		appendEvent(&nd, e)
	}
	return nd.Bytes(), parts.Before, parts.After, nil
}
