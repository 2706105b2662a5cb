package pack

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/diag"
)

// A large pack is mostly its tasks block, and its yaml.Node tree is many
// times the size of its text. So that loading a pack costs memory in
// proportion to one task, not to the whole pack, the loader reads a pack
// whose tasks are a plain block sequence task by task: the rest of the file
// (the skeleton: the tasks' lines left blank, so that every line keeps its
// number) is parsed once, and the tasks' lines are parsed (a group of
// splitGroup tasks to a parser call), checked and decoded apart from the rest,
// their trees dropped as soon as each task is decoded.
//
// The split is only taken when it is certain to read the pack exactly as the
// whole document is read (TestSplitSameAsWhole compares the two): it needs a
// top-level "tasks:" key with nothing after it on its line, items that all
// start with "-" at one indentation, every other line of the block more
// indented than the items (or blank, or a comment), and no document marker or
// tab in an indentation anywhere. The parts are checked again once parsed
// (decodeSplit, decoder.parseTasks); when anything is off — a syntax
// error, an anchor or alias, a tasks key that is not where it was found — the
// whole document is read instead, which reports every problem as it always did.

// taskSplit is where a pack's tasks are in its source.
type taskSplit struct {
	keyLine  int     // the line of "tasks:"
	indent   int     // the column of each item's "-", 0-based
	chunks   []chunk // one per task, in order
	skeleton []byte  // the source with the chunks' lines left empty
}

// chunk is one task's lines: src[start:end], starting at line (a pack is
// at most MaxSize bytes).
type chunk struct {
	start, end int32
	line       int32
}

// splitTasks finds the tasks of src, or reports that they cannot be read
// one by one.
func splitTasks(src []byte) (*taskSplit, bool) {
	if hasDocMarker(src) {
		return nil, false
	}
	sp := &taskSplit{indent: -1}
	inBlock := false
	open := -1 // start of the current chunk, or -1
	openLine := 0
	closeChunk := func(at int) {
		if open >= 0 {
			sp.chunks = append(sp.chunks, chunk{start: int32(open), end: int32(at), line: int32(openLine)})
			open = -1
		}
	}
	line := 0
	for i := 0; i < len(src); {
		line++
		end := len(src)
		if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		text := bytes.TrimRight(src[i:end], "\r\n")
		ind := 0
		for ind < len(text) && text[ind] == ' ' {
			ind++
		}
		if ind < len(text) && text[ind] == '\t' {
			return nil, false // a tab in the indentation: the whole document reports it
		}
		blank := ind == len(text)
		if inBlock && (blank || text[ind] == '#') {
			i = end
			continue // a comment or blank line stays with what it follows
		}
		if inBlock {
			switch {
			case sp.indent < 0:
				if !isItem(text, ind) {
					return nil, false
				}
				sp.indent = ind
				open, openLine = i, line
				i = end
				continue
			case ind == sp.indent && isItem(text, ind):
				closeChunk(i)
				open, openLine = i, line
				i = end
				continue
			case ind > sp.indent:
				i = end
				continue
			case ind != 0:
				return nil, false // between the mapping's keys and the items
			}
			closeChunk(i)
			inBlock = false
		}
		if isTasksKey(text) {
			if sp.keyLine != 0 {
				return nil, false
			}
			sp.keyLine, inBlock = line, true
		}
		i = end
	}
	closeChunk(len(src))
	if sp.keyLine == 0 || len(sp.chunks) == 0 {
		return nil, false
	}
	sp.skeleton = blankChunks(src, sp.chunks)
	return sp, true
}

// isItem reports whether text has a block sequence item's "-" at column ind.
func isItem(text []byte, ind int) bool {
	return ind < len(text) && text[ind] == '-' && (ind+1 == len(text) || text[ind+1] == ' ')
}

// isTasksKey reports whether the line is "tasks:" at column 1 with nothing
// after it but blanks and a comment.
func isTasksKey(text []byte) bool {
	rest, ok := bytes.CutPrefix(text, []byte("tasks:"))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] != ' ' {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// blankChunks copies src with the chunks' lines emptied, their line breaks
// kept.
func blankChunks(src []byte, chunks []chunk) []byte {
	out := make([]byte, 0, len(src)-int(chunks[len(chunks)-1].end)+int(chunks[0].start)+len(chunks)*8)
	var prev int32
	for _, ch := range chunks {
		out = append(out, src[prev:ch.start]...)
		for _, b := range src[ch.start:ch.end] {
			if b == '\n' {
				out = append(out, '\n')
			}
		}
		prev = ch.end
	}
	return append(out, src[prev:]...)
}

// parsedTask is one task's lines parsed, built and validated against the
// task schema, ready to decode.
type parsedTask struct {
	item   *node
	diags  diag.List // the builder's
	schema error     // the task schema's verdict
	ok     bool      // false: the split cannot be trusted (parseTasks)
}

// splitGroup is how many tasks are parsed by one call of the YAML parser,
// whose set-up costs as much as a task; splitAhead is how many groups may
// be parsed ahead of the decoding (64 tasks).
const (
	splitGroup = 16
	splitAhead = 4
)

// decodeTasks decodes the tasks of the split in order, each parsed, built,
// decoded and validated against the task schema, then dropped. Parsing and
// validating (most of the work) run on up to GOMAXPROCS goroutines (no
// more than splitAhead), each taking the next group of tasks as soon as it
// is done with one, at most splitAhead groups ahead of the decoding,
// which is sequential: it takes the groups in order and reports in task
// order. (A batch of groups parsed together, then decoded while the next
// batch parsed, left a core idle at every batch's end: docs/performance.md,
// "Verifying many small turns".)
func (d *decoder) decodeTasks(p *Pack, personas map[string]bool, labels map[string]labelUse) {
	chunks := d.split.chunks
	groups := (len(chunks) + splitGroup - 1) / splitGroup
	ahead := min(splitAhead, groups)
	slots := make([]parsedGroup, ahead)
	for i := range slots {
		slots[i] = parsedGroup{tasks: make([]parsedTask, splitGroup), ready: make(chan struct{}, 1)}
	}
	// A token of free is a slot no group holds: a worker takes one before
	// it takes the next group, and the decoding gives it back once the
	// group is decoded. So the groups taken and not yet decoded are at most
	// ahead consecutive ones, each in a slot of its own (group g in slot
	// g % ahead).
	free := make(chan struct{}, ahead)
	for range ahead {
		free <- struct{}{}
	}
	stop := make(chan struct{})
	var taken atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for range max(1, min(runtime.GOMAXPROCS(0), ahead)) { // a worker more than the slots would wait
		wg.Go(func() {
			for {
				select {
				case <-free:
				case <-stop:
					return
				}
				g := int(taken.Add(1) - 1)
				if g >= groups {
					return
				}
				s := &slots[g%ahead]
				from := g * splitGroup
				d.parseTasks(s.tasks[:min(splitGroup, len(chunks)-from)], from)
				s.ready <- struct{}{}
			}
		})
	}
	loc := []string{"tasks", ""}
	for g := range groups {
		s := &slots[g%ahead]
		<-s.ready
		from := g * splitGroup
		cur := s.tasks[:min(splitGroup, len(chunks)-from)]
		for j := range cur {
			i := from + j
			pt := cur[j]
			cur[j] = parsedTask{}
			if !pt.ok {
				d.splitFailed = true
				continue
			}
			if d.splitFailed {
				continue
			}
			for _, dg := range pt.diags {
				d.c.add(dg, "")
			}
			if t := d.task(pt.item, i, personas, p.Personas, labels); t != nil {
				d.keep(p, t)
			}
			loc[1] = strconv.Itoa(i)
			reportSchema(pt.schema, pt.item, loc, d)
		}
		if d.splitFailed {
			return
		}
		free <- struct{}{}
	}
}

// parsedGroup is a group of tasks parsed ahead of the decoding: ready has
// a value once they are.
type parsedGroup struct {
	tasks []parsedTask
	ready chan struct{}
}

// parseTasks parses the lines of the tasks from chunk from on, one into
// each of out, with one call of the YAML parser: they must be exactly
// len(out) sequence items at the split's indentation, without anchors or
// aliases (else every out is left not ok). Each is built (by fastSeq when
// it can read them, else by yaml.v3 and the builder) and validated against
// the task schema. It only reads d.
func (d *decoder) parseTasks(out []parsedTask, from int) {
	// out is a slot that held an earlier group: every return below that
	// gives up leaves it not ok, not that group's tasks.
	clear(out)
	first, last := d.split.chunks[from], d.split.chunks[from+len(out)-1]
	text := d.src[first.start:last.end]
	lineOff := int(first.line) - 1
	if items, ok := fastSeq(text, d.split.indent, &d.file, lineOff); ok {
		if len(items) != len(out) {
			return
		}
		for j, item := range items {
			out[j] = parsedTask{item: item, schema: validateFast(d.schema.split.item, d.schema.split.fastItem, item), ok: true}
		}
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != len(out) || seq.Line != 1 || seq.Column != d.split.indent+1 ||
		seq.Anchor != "" || seq.ShortTag() != "!!seq" {
		return
	}
	for j, y := range seq.Content {
		c := &collector{}
		b := newBuilder(d.file, c)
		b.lineOff = lineOff
		item := b.build(y)
		if b.anchored || b.stopped {
			clear(out)
			return
		}
		out[j] = parsedTask{item: item, diags: c.list, schema: validateFast(d.schema.split.item, d.schema.split.fastItem, item), ok: true}
	}
}
