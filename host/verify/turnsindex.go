package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	mathbits "math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/assay-eval/assay/pkg/diag"
)

// A turns file is read twice (docs/performance.md, "Flat memory"). The
// first pass, indexTurnsFile, decodes and checks every line, so every
// problem of the file is reported before anything is scored, but keeps of
// the good lines only where each candidate's lines are: a segment per
// stretch of consecutive lines of one candidate. The second pass, when a
// candidate's turns are verified, decodes that candidate's segments again
// into TurnSpecs a chunk at a time (specReader, Engine.Verify's turnStream;
// Input.specs decodes them whole), dropped once the chunk is recorded.
// Memory therefore grows with the candidates, not with the turns.

// errTurnsChanged is a turns file that no longer reads as it did when it
// was indexed.
var errTurnsChanged = errors.New("the file changed while it was read")

// turnsFile is what the candidates of one indexed turns file share.
type turnsFile struct {
	path, dir        string
	root             string // the directory the turns' files must stay in; empty when not confined
	realRoot         string // root resolved when the file was indexed (resolveRoot)
	defaultCandidate string
	size             int64 // the file's size when indexed

	// f is the file, opened once for every read of a run (each turn's line
	// is read again when it is scored) and closed when the run ends.
	mu     sync.Mutex
	f      *os.File
	closed bool
}

// file is the open turns file; after close, a new handle the caller closes.
func (tf *turnsFile) file() (f *os.File, own bool, err error) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.closed {
		f, err = openInput(tf.path, "")
		return f, true, err
	}
	if tf.f == nil {
		if tf.f, err = openInput(tf.path, ""); err != nil {
			return nil, false, err
		}
	}
	return tf.f, false, nil
}

// readAt reads len(buf) bytes at off.
func (tf *turnsFile) readAt(buf []byte, off int64) error {
	f, own, err := tf.file()
	if err != nil {
		return fmt.Errorf("reading turns file: %w", err)
	}
	if own {
		defer f.Close()
	}
	if _, err := f.ReadAt(buf, off); err != nil {
		return fmt.Errorf("reading turns file %s: %w", tf.path, err)
	}
	return nil
}

// close closes the file; a read after it opens the file again.
func (tf *turnsFile) close() {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.f != nil {
		tf.f.Close()
		tf.f = nil
	}
	tf.closed = true
}

// closeInputs closes the turns files the inputs were indexed from.
func closeInputs(inputs []*Input) {
	for _, in := range inputs {
		if in.src != nil {
			in.src.file.close()
		}
	}
}

// turnsSource is one candidate's good lines in an indexed turns file.
type turnsSource struct {
	file  *turnsFile
	segs  []segment
	turns int
	// tasks is how many of the turns are of the pack's tasks; -1 when the
	// index was not told the tasks (withTasks).
	tasks int
}

// segment is a stretch of lines of a turns file, from the line at off
// (numbered line) up to end, every non-blank one a good turn of one
// candidate.
type segment struct {
	off, end int64
	line     int
	turns    int
}

// specs is the candidate's turns: Turns, or for a candidate of an indexed
// turns file its lines decoded again, in a new slice for the caller to drop.
// A line that no longer decodes to the turn it was is errTurnsChanged.
func (in *Input) specs() ([]TurnSpec, error) {
	if in.src == nil {
		return in.Turns, nil
	}
	return in.src.decode(in.Candidate, true)
}

// decode reads the candidate's segments again. With shared, each turn's
// line is read again through the run's open file when it is scored;
// otherwise by opening the file.
func (s *turnsSource) decode(candidate string, shared bool) ([]TurnSpec, error) {
	r, err := s.reader(candidate, shared)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.next(s.turns)
}

// specReader decodes a candidate's segments again, a few turns at a time.
type specReader struct {
	src       *turnsSource
	candidate string
	f         *os.File
	own       bool
	ref       *turnsFile // the file each turn's line is read again through; nil: opened by path
	// hold keeps each plain line of at most maxHeldLine bytes with its
	// turn (heldLine), for a caller that drops the turns chunk by chunk.
	hold   bool
	r      *bufio.Reader
	seg    int   // the segment being read
	offset int64 // where its next line starts; -1 before it is started
	lineNo int
	n      int // turns read of the segment
}

// reader starts reading the candidate's segments; decode documents shared.
func (s *turnsSource) reader(candidate string, shared bool) (*specReader, error) {
	tf := s.file
	f, own, err := tf.file()
	if err != nil {
		return nil, fmt.Errorf("reading turns file: %w", err)
	}
	sr := &specReader{src: s, candidate: candidate, f: f, own: own, offset: -1}
	if shared {
		sr.ref = tf
	}
	if st, err := f.Stat(); err != nil || st.Size() < tf.size {
		sr.close()
		return nil, fmt.Errorf("reading turns file %s: %w (it is shorter than when it was read)", tf.path, errTurnsChanged)
	}
	return sr, nil
}

func (sr *specReader) close() {
	if sr.own {
		sr.f.Close()
	}
}

// next decodes up to max more turns, in the file's order; none when every
// segment is read. A line that no longer decodes to the turn it was is
// errTurnsChanged.
func (sr *specReader) next(max int) ([]TurnSpec, error) {
	tf := sr.src.file
	out := make([]TurnSpec, 0, min(max, sr.src.turns))
	for len(out) < max && sr.seg < len(sr.src.segs) {
		sg := sr.src.segs[sr.seg]
		if sr.offset < 0 {
			sec := io.NewSectionReader(sr.f, sg.off, sg.end-sg.off)
			if sr.r == nil {
				sr.r = bufio.NewReaderSize(sec, 64<<10)
			} else {
				sr.r.Reset(sec)
			}
			sr.offset, sr.lineNo, sr.n = sg.off, sg.line, 0
		}
		for ; len(out) < max && sr.offset < sg.end; sr.lineNo++ {
			line, size, err := readLine(sr.r, maxTurnLine)
			start := sr.offset
			sr.offset += int64(size)
			if err != nil && !errors.Is(err, io.EOF) || size == 0 {
				return nil, fmt.Errorf("reading turns file %s: line %d: %w (%v)", tf.path, sr.lineNo, errTurnsChanged, err)
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			out = append(out, TurnSpec{})
			ts := &out[len(out)-1]
			spans, ok, ds := decodeTurnTo(ts, tf.path, tf.dir, sr.lineNo, line, tf.defaultCandidate)
			if !ok || ts.Candidate != sr.candidate {
				return nil, fmt.Errorf("reading turns file %s: line %d: %w: %v", tf.path, sr.lineNo, errTurnsChanged, ds)
			}
			ref := lineRef{path: tf.path, offset: start, n: len(line), file: sr.ref}
			if sr.hold && spans != nil && len(line) <= maxHeldLine {
				ts.inline = &heldLine{ref: ref, line: line, spans: *spans}
			} else {
				ts.inline = &ref
			}
			ts.Root, ts.realRoot = tf.root, tf.realRoot
			sr.n++
		}
		if sr.offset < sg.end {
			break // max turns read, mid-segment
		}
		if sr.n != sg.turns {
			return nil, fmt.Errorf("reading turns file %s: lines %d on: %w", tf.path, sg.line, errTurnsChanged)
		}
		sr.seg, sr.offset = sr.seg+1, -1
	}
	return out, nil
}

// indexTurnsFile reads a turns file once, checking every line, and returns
// its candidates (in the order they first appear) with their turns left in
// the file; ReadTurnsFile documents the rest.
func indexTurnsFile(path, defaultCandidate string, opts ...ReadOption) ([]*Input, diag.List, error) {
	ix, err := indexTurns(path, defaultCandidate, readConfigOf(opts), nil)
	if err != nil {
		return nil, nil, err
	}
	return ix.inputs, ix.diags, nil
}

// errIndexStopped is indexTurns' error when stop was set.
var errIndexStopped = errors.New("indexing the turns file: stopped")

// indexTurns is indexTurnsFile's work; it returns the indexer, whose
// labels and seen turns TurnsIndex counts the tasks with. It gives up with
// errIndexStopped once stop, when not nil, is set.
func indexTurns(path, defaultCandidate string, cfg readConfig, stop *atomic.Bool) (*indexer, error) {
	f, err := openInput(path, "")
	if err != nil {
		return nil, fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	if defaultCandidate == "" {
		defaultCandidate = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	tf := &turnsFile{path: path, dir: filepath.Dir(path), defaultCandidate: defaultCandidate}
	tf.root = tf.dir
	if cfg.allowOutside {
		tf.root = ""
	}
	tf.realRoot = resolveRoot(tf.root)
	ix := &indexer{file: tf, byName: map[string]*Input{}, labels: map[string]uint32{}, seen: turnSet{}, isTask: cfg.isTask}
	r := bufio.NewReaderSize(f, 64<<10)
	var offset int64
	var scratch TurnSpec // each line's turn, while it is indexed
	for lineNo := 1; ; lineNo++ {
		if stop != nil && stop.Load() {
			return nil, errIndexStopped
		}
		line, n, err := readLine(r, maxTurnLine)
		start := offset
		offset += int64(n)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		pos := diag.Pos{File: path, Line: lineNo, Col: 1}
		if errors.Is(err, errLineTooLong) {
			ix.diags = append(ix.diags, diag.Errorf(pos, codeTurnsSyntax, "line longer than %d MiB", maxTurnLine>>20))
			ix.last = nil
			continue
		} else if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading turns file %s: %w", path, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if ix.last != nil {
				ix.last.end = offset
			}
			if errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		_, ok, ds := decodeTurnTo(&scratch, path, tf.dir, lineNo, line, defaultCandidate)
		ix.diags = append(ix.diags, ds...)
		if ok {
			ix.add(&scratch, pos, start, offset)
		} else {
			ix.add(nil, pos, start, offset)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	tf.size = offset
	if err := ix.firstLines(); err != nil {
		return nil, err
	}
	return ix, nil
}

// countTasks sets each candidate's count of turns of the pack's tasks
// (turnsSource.tasks) from the turns seen, as add counts them when the
// indexer is told the tasks: a turn is counted once, duplicates and bad
// lines never.
func (ix *indexer) countTasks(isTask func(string) bool) {
	task := make([]uint64, (len(ix.labels)+63)/64) // a bit a label number, as turnSet numbers them
	for label, n := range ix.labels {
		if isTask(label) {
			task[n>>6] |= 1 << (n & 63)
		}
	}
	for _, in := range ix.inputs {
		in.src.tasks = 0
	}
	for k, b := range ix.seen {
		for w, bits := range b {
			if i := int(k.block)<<3 + w; i < len(task) {
				k.src.tasks += mathbits.OnesCount64(bits & task[i])
			}
		}
	}
}

// TurnsIndex is a turns file indexed ahead of Run, while the pack loads
// (`assay verify --turns`): the file is read and checked as Run would, and
// each candidate's turns of the pack's tasks are counted once Run knows
// them. Give it to Run as Request.TurnsIndex; Close it in any case.
type TurnsIndex struct {
	path, candidate string
	allowOutside    bool
	stop            atomic.Bool
	done            chan struct{}
	ix              *indexer // set before done is closed, with err
	err             error
	taken           bool
}

// IndexTurnsAhead starts indexing the turns file at path in the
// background, for a Request whose TurnsFile, Candidate and
// AllowOutsidePaths are path, candidate and allowOutside.
func IndexTurnsAhead(path, candidate string, allowOutside bool) *TurnsIndex {
	t := &TurnsIndex{path: path, candidate: candidate, allowOutside: allowOutside, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.ix, t.err = indexTurns(path, candidate, readConfig{allowOutside: allowOutside}, &t.stop)
	}()
	return t
}

// of reports whether t indexes the turns file req names, as req reads it.
func (t *TurnsIndex) of(req *Request) bool {
	return t != nil && !t.taken && t.path == req.TurnsFile && t.candidate == req.Candidate && t.allowOutside == req.AllowOutsidePaths
}

// take waits for the index and gives what indexTurnsFile would have with
// withTasks(isTask); the inputs are then the caller's to close.
func (t *TurnsIndex) take(isTask func(string) bool) ([]*Input, diag.List, error) {
	<-t.done
	t.taken = true
	if t.err != nil {
		return nil, nil, t.err
	}
	ix := t.ix
	t.ix = nil
	ix.countTasks(isTask)
	return ix.inputs, ix.diags, nil
}

// Close stops the indexing if it is still running, waits for it to end
// and, unless Run took the index, closes its file.
func (t *TurnsIndex) Close() {
	if t == nil {
		return
	}
	t.stop.Store(true)
	<-t.done
	if !t.taken && t.ix != nil {
		closeInputs(t.ix.inputs)
		t.ix = nil
	}
}

// indexer is indexTurnsFile's state.
type indexer struct {
	file   *turnsFile
	inputs []*Input
	byName map[string]*Input
	diags  diag.List
	last   *segment // the segment the previous good line is in; nil after a bad line
	isTask func(string) bool

	// labels numbers each label read, so that seen holds a bit per turn.
	labels map[string]uint32
	seen   turnSet
	// dups are the duplicate turns, each with its diagnostic's index in
	// diags: the line of the turn's first occurrence is filled in once the
	// file is read (firstLines).
	dups []dupTurn
}

type dupTurn struct {
	id   turnID
	diag int
}

// add indexes one decoded line (ts nil: a bad line) spanning [start, end).
func (ix *indexer) add(ts *TurnSpec, pos diag.Pos, start, end int64) {
	if ts == nil {
		ix.last = nil
		return
	}
	in := ix.byName[ts.Candidate]
	if in == nil {
		in = &Input{Candidate: ts.Candidate, src: &turnsSource{file: ix.file, tasks: -1}}
		if ix.isTask != nil {
			in.src.tasks = 0
		}
		ix.byName[ts.Candidate] = in
		ix.inputs = append(ix.inputs, in)
	}
	label, ok := ix.labels[ts.Label]
	if !ok {
		label = uint32(len(ix.labels))
		ix.labels[ts.Label] = label
	}
	if !ix.seen.add(in.src, ts.Epoch, label) {
		epoch := ""
		if ts.Epoch > 1 {
			epoch = fmt.Sprintf(" in epoch %d", ts.Epoch)
		}
		ix.dups = append(ix.dups, dupTurn{id: turnID{ts.Candidate, ts.Label, ts.Epoch}, diag: len(ix.diags)})
		ix.diags = append(ix.diags, diag.Errorf(pos, codeTurnsLabel, "candidate %q already has a turn for %q%s", ts.Candidate, ts.Label, epoch))
		ix.last = nil
		return
	}
	src := in.src
	if ix.last == nil || len(src.segs) == 0 || ix.last != &src.segs[len(src.segs)-1] {
		src.segs = append(src.segs, segment{off: start, line: pos.Line})
	}
	ix.last = &src.segs[len(src.segs)-1]
	ix.last.end = end
	ix.last.turns++
	src.turns++
	if ix.isTask != nil && ix.isTask(ts.Label) {
		src.tasks++
	}
}

// firstLines completes each duplicate's diagnostic with the line of the
// turn's first occurrence, reading the file again up to the last duplicate
// (only a file with duplicates is read again).
func (ix *indexer) firstLines() error {
	if len(ix.dups) == 0 {
		return nil
	}
	first := make(map[turnID]int, len(ix.dups))
	for _, d := range ix.dups {
		first[d.id] = 0
	}
	lastLine := ix.diags[ix.dups[len(ix.dups)-1].diag].Pos.Line
	tf := ix.file
	f, err := openInput(tf.path, "")
	if err != nil {
		return fmt.Errorf("reading turns file: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for lineNo := 1; lineNo < lastLine; lineNo++ {
		line, _, err := readLine(r, maxTurnLine)
		if err != nil && !errors.Is(err, errLineTooLong) {
			return fmt.Errorf("reading turns file %s: line %d: %w (%v)", tf.path, lineNo, errTurnsChanged, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ts, _ := decodeTurnLine(tf.path, tf.dir, lineNo, line, tf.defaultCandidate)
		if ts == nil {
			continue
		}
		id := turnID{ts.Candidate, ts.Label, ts.Epoch}
		if l, ok := first[id]; ok && l == 0 {
			first[id] = lineNo
		}
	}
	for _, d := range ix.dups {
		ix.diags[d.diag].Message += fmt.Sprintf(" (line %d)", first[d.id])
	}
	return nil
}

// turnSet is a set of turns (candidate, epoch, label number), a bit each,
// in blocks of 512 labels: a file of C candidates answering T tasks holds
// about C×T/8 bytes.
type turnSet map[turnBlock]*[8]uint64

type turnBlock struct {
	src   *turnsSource
	epoch int
	block uint32
}

// add adds a turn and reports whether it was new.
func (s turnSet) add(src *turnsSource, epoch int, label uint32) bool {
	k := turnBlock{src: src, epoch: epoch, block: label >> 9}
	b := s[k]
	if b == nil {
		b = new([8]uint64)
		s[k] = b
	}
	w, bit := (label>>6)&7, uint64(1)<<(label&63)
	if b[w]&bit != 0 {
		return false
	}
	b[w] |= bit
	return true
}
