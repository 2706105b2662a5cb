package verify

import (
	"bufio"
	"bytes"
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
)

// Diagnostic codes for run inputs.
const (
	codeRunMetrics  = "run.metrics"
	codeTurnsSyntax = "turns.syntax"
	codeTurnsField  = "turns.field"
	codeTurnsLabel  = "turns.duplicate_label"
)

// maxTurnLine bounds one line of a turns file (a turn with its whole trace inline).
const maxTurnLine = 64 << 20

// Input is one candidate's turns, read lazily: a TurnSpec says where a turn's
// trace and snapshots are, not what they hold.
type Input struct {
	Candidate string
	Turns     []TurnSpec
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

	StateBefore Part
	StateAfter  Part
}

// Part is a snapshot given as a file path or inline in a turns line; empty
// when absent.
type Part struct {
	Path   string
	inline bool
	Pos    diag.Pos
}

// Empty reports whether the part is absent.
func (p Part) Empty() bool { return p.Path == "" && !p.inline }

// metrics is one row of a candidate directory's results.json or one turns line.
type metrics struct {
	Label      string          `json:"label"`
	Candidate  string          `json:"candidate"`
	Persona    string          `json:"persona"`
	LatencyS   *float64        `json:"latency_s"`
	CostUSD    *float64        `json:"cost_usd"`
	StartedAt  string          `json:"started_at"`
	FinishedAt string          `json:"finished_at"`
	Trace      json.RawMessage `json:"trace"`
	TraceFile  string          `json:"trace_file"`
	Before     json.RawMessage `json:"state_before"`
	After      json.RawMessage `json:"state_after"`
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
	if src, err := os.ReadFile(mpath); err == nil {
		rows, ds := decodeMetrics(mpath, src)
		diags = append(diags, ds...)
		for _, r := range rows {
			byLabel[r.Label] = r
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading run metrics: %w", err)
	}
	in := &Input{Candidate: candidate}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".ndjson") {
			continue
		}
		label := strings.TrimSuffix(name, ".ndjson")
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

// decodeMetrics decodes results.json: an array of objects with at least label.
func decodeMetrics(file string, src []byte) ([]metrics, diag.List) {
	var raw []json.RawMessage
	if err := json.Unmarshal(src, &raw); err != nil {
		return nil, diag.List{jsonDiag(file, src, 0, codeRunMetrics, "results.json must be a JSON array of per-turn objects", err)}
	}
	var diags diag.List
	var rows []metrics
	// Offsets of the elements, for positions.
	offsets := elementOffsets(src)
	for i, r := range raw {
		var m metrics
		base := 0
		if i < len(offsets) {
			base = offsets[i]
		}
		if err := json.Unmarshal(r, &m); err != nil {
			diags = append(diags, jsonDiag(file, src, base, codeRunMetrics, fmt.Sprintf("entry %d", i), err))
			continue
		}
		if m.Label == "" {
			diags = append(diags, diag.Errorf(diag.OffsetPos(file, src, base), codeRunMetrics, "entry %d has no label", i))
			continue
		}
		if _, err := parseTime(m.StartedAt); err != nil {
			diags = append(diags, diag.Errorf(diag.OffsetPos(file, src, base), codeRunMetrics, "entry %d: started_at: %v", i, err))
		}
		if _, err := parseTime(m.FinishedAt); err != nil {
			diags = append(diags, diag.Errorf(diag.OffsetPos(file, src, base), codeRunMetrics, "entry %d: finished_at: %v", i, err))
		}
		rows = append(rows, m)
	}
	return rows, diags
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
// of the line as a diagnostic.
func decodeTurnLine(file, dir string, lineNo int, line []byte, defaultCandidate string) (*TurnSpec, diag.List) {
	pos := diag.Pos{File: file, Line: lineNo, Col: 1}
	var m metrics
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		return nil, diag.List{lineJSONDiag(pos, line, err)}
	}
	var diags diag.List
	fieldPos := func(name string) diag.Pos {
		if i := bytes.Index(line, []byte(`"`+name+`"`)); i >= 0 {
			return diag.Pos{File: file, Line: lineNo, Col: diag.OffsetPos("", line, i).Col}
		}
		return pos
	}
	if m.Label == "" {
		diags = append(diags, diag.Errorf(pos, codeTurnsField, "turn has no label"))
	}
	ts := &TurnSpec{Candidate: m.Candidate, Label: m.Label, Persona: m.Persona, LatencyS: m.LatencyS, CostUSD: m.CostUSD, Pos: pos}
	if ts.Candidate == "" {
		ts.Candidate = defaultCandidate
	}
	var err error
	if ts.StartedAt, err = parseTime(m.StartedAt); err != nil {
		diags = append(diags, diag.Errorf(fieldPos("started_at"), codeTurnsField, "started_at: %v", err))
	}
	if ts.FinishedAt, err = parseTime(m.FinishedAt); err != nil {
		diags = append(diags, diag.Errorf(fieldPos("finished_at"), codeTurnsField, "finished_at: %v", err))
	}
	hasInline := len(m.Trace) > 0 && string(m.Trace) != "null"
	switch {
	case hasInline && m.TraceFile != "":
		diags = append(diags, diag.Errorf(fieldPos("trace_file"), codeTurnsField, "give trace or trace_file, not both"))
	case hasInline:
		if m.Trace[0] != '[' {
			diags = append(diags, diag.Errorf(fieldPos("trace"), codeTurnsField, "trace must be an array of event objects"))
			break
		}
		ts.Pos = fieldPos("trace")
	case m.TraceFile != "":
		ts.TracePath = resolve(dir, m.TraceFile)
		ts.Pos = diag.Pos{File: ts.TracePath}
	default:
		diags = append(diags, diag.Errorf(pos, codeTurnsField, "turn %q has neither trace nor trace_file", m.Label))
	}
	for _, sp := range []struct {
		name string
		raw  json.RawMessage
		part *Part
	}{{"state_before", m.Before, &ts.StateBefore}, {"state_after", m.After, &ts.StateAfter}} {
		if len(sp.raw) == 0 || string(sp.raw) == "null" {
			continue
		}
		fp := fieldPos(sp.name)
		switch sp.raw[0] {
		case '"':
			var p string
			_ = json.Unmarshal(sp.raw, &p)
			p = resolve(dir, p)
			*sp.part = Part{Path: p, Pos: diag.Pos{File: p}}
		case '{':
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

// elementOffsets returns the byte offset of each top-level array element in src.
func elementOffsets(src []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(src))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []int
	for dec.More() {
		off := int(dec.InputOffset())
		// Skip the separator and white space to land on the element.
		for off < len(src) && (src[off] == ',' || src[off] == ' ' || src[off] == '\n' || src[off] == '\r' || src[off] == '\t') {
			off++
		}
		out = append(out, off)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return out
}

// jsonErrOffset is the offset of the byte a JSON decoding error points at
// (encoding/json reports the offset just past it), 0 when it says none.
func jsonErrOffset(err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return max(0, int(se.Offset)-1)
	case errors.As(err, &te):
		return max(0, int(te.Offset)-1)
	}
	return 0
}

// jsonDiag turns a JSON decoding error in src, from offset base, into a
// positioned diagnostic.
func jsonDiag(file string, src []byte, base int, code, what string, err error) diag.Diagnostic {
	return diag.Errorf(diag.OffsetPos(file, src, base+jsonErrOffset(err)), code, "%s: %v", what, err)
}

// lineJSONDiag positions a JSON error within one line.
func lineJSONDiag(pos diag.Pos, line []byte, err error) diag.Diagnostic {
	pos.Col = diag.OffsetPos("", line, jsonErrOffset(err)).Col
	return diag.Errorf(pos, codeTurnsSyntax, "not a valid turn: %v", err)
}
