package verify

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// Diagnostic codes for run inputs.
const (
	codeRunMetrics  = "run.metrics"
	codeTurnsSyntax = "turns.syntax"
	codeTurnsField  = "turns.field"
	codeTurnsLabel  = "turns.duplicate_label"

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
	Turns     []TurnSpec
	// PolicyVersion and SkillVersion are the harness's, from a run
	// directory's run.json or the request; drift units (docs/evidence.md).
	PolicyVersion string
	SkillVersion  string
}

// TurnSpec says where one turn's parts are.
type TurnSpec struct {
	Candidate  string
	Label      string
	Persona    string
	LatencyS   *float64
	CostUSD    *float64
	StartedAt  time.Time
	FinishedAt time.Time
	Pos        diag.Pos // where the turn was declared (trace file or turns line)

	TracePath string // a trace file, or
	// line locates a turns-file line whose "trace" array and inline
	// snapshots are read again when the turn is scored, so a run's traces
	// are never all in memory at once.
	line *lineRef
	// traceSHA names a trace kept as evidence (docs/evidence.md): a turn
	// rescored from the database reads it from there.
	traceSHA string

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
	// trace, state_before and state_after are read from the line's tree
	// (decodeTurnLine) and when the turn is scored (lineRef.load).
}

// ReadRunDir reads a harness candidate directory: DIR/results/<label>.ndjson,
// the optional DIR/results.json metrics and DIR/state/<label>.{before,after}.json.
// candidate overrides the directory name. Problems in results.json are
// diagnostics; an unreadable directory is an error naming the path.
func ReadRunDir(dir, candidate string) (*Input, diag.List, error) {
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
	var diags diag.List
	byLabel := map[string]metrics{}
	mpath := filepath.Join(dir, "results.json")
	src, err := jsonpos.ReadFile(mpath, maxResultsFile)
	switch {
	case err == nil:
		rows, nodes, ds := decodeMetrics(mpath, src)
		diags = append(diags, ds...)
		for _, r := range rows {
			byLabel[r.Label] = r
		}
		diags = append(diags, missingTraces(jsonpos.Source{File: mpath, Src: src}, resultsDir, rows, nodes, entries)...)
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("reading run metrics: %w", err)
	}
	in := &Input{Candidate: candidate}
	vs, err := readRunVersions(dir)
	if err != nil {
		return nil, diags, err
	}
	in.PolicyVersion, in.SkillVersion = vs.PolicyVersion, vs.SkillVersion
	for _, e := range entries {
		label, ok := traceLabel(e)
		if !ok {
			continue
		}
		name := e.Name()
		path := filepath.Join(resultsDir, name)
		ts := TurnSpec{Candidate: candidate, Label: label, TracePath: path, Pos: diag.Pos{File: path}}
		if m, ok := byLabel[label]; ok {
			ts.Persona, ts.LatencyS, ts.CostUSD = m.Persona, m.LatencyS, m.CostUSD
			ts.StartedAt, _ = parseTime(m.StartedAt)
			ts.FinishedAt, _ = parseTime(m.FinishedAt)
		}
		for _, sp := range []struct {
			part   *Part
			suffix string
		}{{&ts.StateBefore, ".before.json"}, {&ts.StateAfter, ".after.json"}} {
			p := filepath.Join(dir, "state", label+sp.suffix)
			if _, err := os.Stat(p); err == nil {
				*sp.part = Part{Path: p, Pos: diag.Pos{File: p}}
			}
		}
		in.Turns = append(in.Turns, ts)
	}
	sort.Slice(in.Turns, func(i, j int) bool { return in.Turns[i].Label < in.Turns[j].Label })
	return in, diags, nil
}

// missingTraces warns about every row of results.json whose trace file is
// absent, naming the nearest trace file that results.json does not list:
// such a turn is never scored, and a task of the pack without a trace
// counts as missing (docs/run-input.md).
func missingTraces(s jsonpos.Source, resultsDir string, rows []metrics, nodes []*jsonpos.Node, entries []os.DirEntry) diag.List {
	traces := map[string]bool{}
	for _, e := range entries {
		if label, ok := traceLabel(e); ok {
			traces[label] = true
		}
	}
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.Label] = true
	}
	var unlisted []string
	for label := range traces {
		if !listed[label] {
			unlisted = append(unlisted, label)
		}
	}
	var diags diag.List
	for i, r := range rows {
		if traces[r.Label] {
			continue
		}
		msg := fmt.Sprintf("results.json lists turn %q, but its trace %s does not exist; the turn is not scored",
			r.Label, filepath.Join(resultsDir, r.Label+".ndjson"))
		if near, ok := nearestLabel(r.Label, unlisted); ok {
			msg += fmt.Sprintf("; did you mean %q (%s)?", near, filepath.Join(resultsDir, near+".ndjson"))
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

// traceLabel is the label of a trace file in a run's results directory.
func traceLabel(e os.DirEntry) (string, bool) {
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
		rows, nodes = append(rows, m), append(nodes, e)
	}
	return rows, nodes, diags
}

// ReadTurnsFile reads a turns file: one JSON turn a line. Turns are grouped
// by candidate (the line's candidate, else defaultCandidate, else the file's
// base name). Every bad line is a positioned diagnostic; the good lines are
// still returned.
func ReadTurnsFile(path, defaultCandidate string) ([]*Input, diag.List, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	if defaultCandidate == "" {
		defaultCandidate = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	dir := filepath.Dir(path)
	var (
		diags  diag.List
		inputs []*Input
		index  = map[string]*Input{}
		seen   = map[[2]string]diag.Pos{}
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
			ts.line = &lineRef{path: path, offset: start, n: len(line)}
			key := [2]string{ts.Candidate, ts.Label}
			if first, dup := seen[key]; dup {
				diags = append(diags, diag.Errorf(pos, codeTurnsLabel, "candidate %q already has a turn for %q (line %d)", ts.Candidate, ts.Label, first.Line))
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

// decodeTurnLine decodes one turns line into a TurnSpec, with every problem
// of the line as a diagnostic. The line's values are not built into a tree
// (an inline trace can be large); they are read again when the turn is scored.
func decodeTurnLine(file, dir string, lineNo int, line []byte, defaultCandidate string) (*TurnSpec, diag.List) {
	src := jsonpos.Source{File: file, Src: line, Line: lineNo}
	pos := diag.Pos{File: file, Line: lineNo, Col: 1}
	o := jsonpos.Options{BuildDepth: 1, AllowUnknownFields: true}
	var m metrics
	root, err := jsonpos.Parse(line, o)
	if err == nil {
		err = jsonpos.DecodeNode(line, root, &m, o)
	}
	if err != nil {
		code := codeTurnsSyntax
		if errors.Is(err, jsonpos.ErrType) {
			code = codeTurnsField
		}
		return nil, diag.List{src.Diag(code, "not a valid turn", err)}
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
	ts := &TurnSpec{Candidate: cmp.Or(m.Candidate, defaultCandidate), Label: m.Label, Persona: m.Persona, LatencyS: m.LatencyS, CostUSD: m.CostUSD, Pos: pos}
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
		ts.Pos = diag.Pos{File: ts.TracePath}
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
			*sp.part = Part{Path: p, Pos: diag.Pos{File: p}}
		case v.Kind == jsonpos.Object:
			*sp.part = Part{inline: true, Pos: fp}
		default:
			diags = append(diags, diag.Errorf(fp, codeTurnsField, "%s must be a snapshot object or a file path", sp.name))
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return ts, diags
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

// lineRef locates one line of a turns file.
type lineRef struct {
	path   string
	offset int64
	n      int
}

// inlineParts are the heavy parts of a turns line, read when the turn is scored.
type inlineParts struct {
	Trace  []json.RawMessage `json:"trace"`
	Before json.RawMessage   `json:"state_before"`
	After  json.RawMessage   `json:"state_after"`
}

// load reads the line again and returns its trace as NDJSON and its inline snapshots.
func (l *lineRef) load() (traceNDJSON, before, after []byte, err error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	buf := make([]byte, l.n)
	if _, err := f.ReadAt(buf, l.offset); err != nil {
		return nil, nil, nil, fmt.Errorf("reading turns file %s: %w", l.path, err)
	}
	var parts inlineParts
	if err := json.Unmarshal(bytes.TrimRight(buf, "\r\n"), &parts); err != nil {
		return nil, nil, nil, fmt.Errorf("reading turns file %s: the file changed while it was read: %w", l.path, err)
	}
	var nd bytes.Buffer
	for _, e := range parts.Trace {
		if err := json.Compact(&nd, e); err != nil {
			nd.Write(e)
		}
		nd.WriteByte('\n')
	}
	return nd.Bytes(), parts.Before, parts.After, nil
}
