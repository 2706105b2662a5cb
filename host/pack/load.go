package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/assay-eval/assay/pkg/diag"
)

// Load reads the pack at path and checks it (see Parse). A file over MaxSize
// is refused before it is read.
func Load(path string, opts Options) (*Pack, diag.List) {
	src, list := read(path)
	if list != nil {
		return nil, list
	}
	return Parse(path, src, opts)
}

// Summary is what Validate tells of a valid pack.
type Summary struct {
	SHA256 string
	Tasks  int
}

// Validate checks the pack at path as Load does, with the same diagnostics,
// but without holding its tasks when every check in opts.Checks is a
// TaskChecker: each task is checked as it is decoded, then dropped. The
// summary is nil when any diagnostic is an error.
func Validate(path string, opts Options) (*Summary, diag.List) {
	return validate(path, opts, offHeapMin)
}

// validate is Validate, reading a pack of at least offHeap bytes off the
// heap when it can.
func validate(path string, opts Options, offHeap int) (*Summary, diag.List) {
	// When the tasks are streamed nothing Validate returns or hands the
	// checks shares the source's memory, so a large one is kept off the heap
	// and freed on return (readOffHeap).
	if !streams(opts.Checks) {
		offHeap = -1
	}
	src, free, list := readSource(path, offHeap)
	if list != nil {
		return nil, list
	}
	defer free()
	p, tasks, list, _ := parseWith(path, src, opts, true, true)
	if p == nil {
		return nil, list
	}
	return &Summary{SHA256: p.SHA256, Tasks: tasks}, list
}

// read reads the pack at path, refusing a file over MaxSize before reading it.
func read(path string) ([]byte, diag.List) {
	src, _, list := readSource(path, -1)
	return src, list
}

// offHeapMin is the smallest pack Validate reads off the heap: below it the
// heap's share is small and the mapping's system calls are not worth it.
const offHeapMin = 1 << 20

// readSource is read; a regular file of at least offHeap bytes (when that
// is not negative) is read outside the Go heap (readOffHeap). free releases
// the source, which must not be used after; it is a no-op for one on the
// heap, and is set whenever the list is nil.
func readSource(path string, offHeap int) (src []byte, free func(), list diag.List) {
	start := diag.Pos{File: path, Line: 1, Col: 1}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, readErr(path, err)
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if fi.Size() > MaxSize {
			return nil, nil, diag.List{tooLarge(start, fi.Size())}
		}
		size = fi.Size()
	}
	if offHeap >= 0 && size >= int64(offHeap) {
		if src, free, ok := readOffHeap(f, int(size)); ok {
			return src, free, nil
		}
		// Not possible, or the file changed size: read it as always.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, readErr(path, err)
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+512))
	_, err = buf.ReadFrom(io.LimitReader(f, MaxSize+1))
	src = buf.Bytes()
	if err != nil {
		return nil, nil, readErr(path, err)
	}
	if len(src) > MaxSize {
		return nil, nil, diag.List{tooLarge(start, int64(len(src)))}
	}
	return src, func() {}, nil
}

// readErr reports that the pack at path could not be read.
func readErr(path string, err error) diag.List {
	return diag.List{diag.Errorf(diag.Pos{File: path}, CodeIO, "reading pack: %v", unwrapPath(err))}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func tooLarge(pos diag.Pos, size int64) diag.Diagnostic {
	what := fmt.Sprintf("more than %d MiB", MaxSize>>20)
	if size > MaxSize+1 {
		what = fmt.Sprintf("%.1f MiB", float64(size)/(1<<20))
	}
	return diag.Errorf(pos, CodeTooLarge, "the pack is %s; the limit is %d MiB", what, MaxSize>>20)
}

// Parse checks the pack in src (read from file, which names it in
// diagnostics): YAML syntax, the JSON schema (opts.Schema, else the embedded
// one), the load rules of docs/pack.md, the KPI keys against opts.Scorers when set, and
// opts.Checks on whatever decoded, even when other parts of the pack have
// errors. Every problem is returned, sorted and capped at MaxDiagnostics; the
// pack is nil when any of them is an error. Only a YAML syntax error (or an
// empty, oversized or mis-encoded file) stops the checking early.
func Parse(file string, src []byte, opts Options) (*Pack, diag.List) {
	p, _, list, _ := parseWith(file, src, opts, true, false)
	return p, list
}

// parseWith is Parse, reading the pack task by task when split is set and
// the pack allows it (split.go), and checking the tasks as they are decoded
// without keeping them when stream is set and the checks allow it (the pack
// then has no tasks; tasks is how many decoded). didSplit reports whether
// the pack was read task by task.
func parseWith(file string, src []byte, opts Options, split, stream bool) (p *Pack, tasks int, list diag.List, didSplit bool) {
	c := &collector{}
	p, tasks, didSplit = parse(file, src, opts, c, split, stream)
	list = c.list
	list.Sort()
	list = list.Cap(MaxDiagnostics)
	if list.HasErrors() {
		return nil, 0, list, didSplit
	}
	return p, tasks, list, didSplit
}

func parse(file string, src []byte, opts Options, c *collector, split, stream bool) (*Pack, int, bool) {
	start := diag.Pos{File: file, Line: 1, Col: 1}
	if len(src) > MaxSize {
		c.add(tooLarge(start, int64(len(src))), "")
		return nil, 0, false
	}
	if len(bytes.TrimSpace(src)) == 0 {
		c.add(diag.Errorf(start, CodeEmpty, "the pack is empty; want a YAML mapping with company, personas, tasks and scoring"), "")
		return nil, 0, false
	}
	if d, ok := checkEncoding(file, src); !ok {
		c.add(d, "")
		return nil, 0, false
	}
	// The hash is taken beside the decoding, which does not change src.
	var sum [sha256.Size]byte
	var hashed sync.WaitGroup
	hashed.Go(func() { sum = sha256.Sum256(src) })
	defer hashed.Wait() // src may be freed once parse returns
	schema := opts.Schema
	if schema == nil {
		schema = EmbeddedSchema()
	}
	var p *Pack
	var ts *taskStream
	if split {
		ts = newTaskStream(opts.Checks, stream)
		p = decodeSplit(file, src, schema, opts, c, ts)
	}
	didSplit := p != nil
	if p == nil {
		// A stream a failed split fed is dropped with what it found.
		ts = newTaskStream(opts.Checks, stream)
		if p = decodeWhole(file, src, schema, opts, c, ts); p == nil {
			return nil, 0, false
		}
	}
	hashed.Wait()
	p.Path, p.SHA256 = file, hex.EncodeToString(sum[:])
	if ts == nil {
		p.Source = src // not for the streamed checks: the source may be freed when Validate returns
	}
	// The checks run whatever else is wrong, on what decoded, so that one
	// run reports every problem (docs/cli.md, "Every pack problem at once").
	tasks := len(p.Tasks)
	if ts == nil {
		for _, chk := range opts.Checks {
			for _, dg := range chk.CheckPack(p) {
				c.add(dg, "")
			}
		}
	} else {
		tasks = ts.tasks
		ts.finish(p, c)
	}
	if c.hasErrors() {
		return nil, 0, didSplit
	}
	return p, tasks, didSplit
}

// decodeWhole reads the pack as one YAML document: its syntax, its
// structure, the load rules and the schema. It returns nil when the YAML did
// not parse (or its aliases were refused), having reported why.
func decodeWhole(file string, src []byte, schema *Schema, opts Options, c *collector, ts *taskStream) *Pack {
	doc, ok := parseYAML(file, src, c)
	if !ok {
		return nil
	}
	b := newBuilder(file, c)
	root := b.build(doc)
	if b.stopped {
		return nil
	}
	d := &decoder{file: file, src: src, schema: schema, opts: opts, c: c, stream: ts}
	p := d.pack(root)
	validateSchema(schema, root, d)
	return p
}

// decodeSplit is decodeWhole task by task (split.go), with its diagnostics
// added to c; it returns nil, having added nothing, when the pack cannot be
// read that way.
func decodeSplit(file string, src []byte, schema *Schema, opts Options, c *collector, ts *taskStream) *Pack {
	if schema.split == nil {
		return nil
	}
	sp, ok := splitTasks(src)
	if !ok {
		return nil
	}
	sc := &collector{}
	var doc yaml.Node
	if err := yaml.Unmarshal(sp.skeleton, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil
	}
	b := newBuilder(file, sc)
	root := b.build(&doc)
	if b.anchored || b.stopped || root.kind != kMap {
		return nil
	}
	tk, tv := root.get("tasks")
	if tk == nil || tk.pos().Line != sp.keyLine || tk.pos().Col != 1 || tv.kind != kNull || !tv.yscal || tv.value() != "" {
		return nil
	}
	seq := &node{kind: kSeq, at: newAt(&file, int(sp.chunks[0].line), sp.indent+1), size: 1}
	for i := range root.keys {
		if root.items[i] == tv {
			root.items[i] = seq
		}
	}
	d := &decoder{file: file, src: src, schema: schema, opts: opts, c: sc, split: sp, splitSeq: seq, stream: ts}
	p := d.pack(root)
	if d.splitFailed {
		return nil
	}
	rest := root.jsonValue(true).(map[string]any)
	rest["tasks"] = make([]any, len(sp.chunks))
	validateNode(schema.split.rest, root, rest, nil, d)
	c.list, c.seen, c.typed = append(c.list, sc.list...), sc.seen, sc.typed
	return p
}

// checkEncoding finds the first byte that is not UTF-8, or a control
// character YAML does not allow.
func checkEncoding(file string, src []byte) (diag.Diagnostic, bool) {
	line, col := 1, 1
	for i := 0; i < len(src); {
		if b := src[i]; b >= 0x20 && b < 0x7f || b == '\t' || b == '\r' { // the usual case
			col++
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		pos := diag.Pos{File: file, Line: line, Col: col}
		switch {
		case r == utf8.RuneError && size <= 1:
			return diag.Errorf(pos, CodeEncoding, "byte 0x%02x is not UTF-8; save the pack as UTF-8", src[i]), false
		case r == '\n':
			line, col = line+1, 0
		case r < 0x20 && r != '\t' && r != '\r', r == 0x7f, r >= 0x80 && r <= 0x9f && r != 0x85:
			return diag.Errorf(pos, CodeEncoding, "control character U+%04X is not allowed in YAML", r), false
		case r == 0xFEFF && i > 0:
			return diag.Errorf(pos, CodeEncoding, "a byte order mark (U+FEFF) is only allowed at the start"), false
		}
		col++
		i += size
	}
	return diag.Diagnostic{}, true
}

// parseYAML decodes exactly one YAML document.
func parseYAML(file string, src []byte, c *collector) (*yaml.Node, bool) {
	if !hasDocMarker(src) {
		// One document for sure: parse the bytes directly, which is faster
		// than the streaming decoder.
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil {
			c.add(syntaxDiag(file, src, err), "")
			return nil, false
		}
		if doc.Kind == 0 || len(doc.Content) == 0 {
			c.add(diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, CodeEmpty,
				"the pack has no YAML document (only comments?); want a mapping with company, personas, tasks and scoring"), "")
			return nil, false
		}
		return &doc, true
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			c.add(diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, CodeEmpty,
				"the pack has no YAML document (only comments?); want a mapping with company, personas, tasks and scoring"), "")
			return nil, false
		}
		c.add(syntaxDiag(file, src, err), "")
		return nil, false
	}
	var next yaml.Node
	err := dec.Decode(&next)
	switch {
	case errors.Is(err, io.EOF):
		return &doc, true
	case err != nil:
		c.add(syntaxDiag(file, src, err), "")
	default:
		line := next.Line
		if m := docMarkerBefore(src, next.Line); m > 0 {
			line = m
		}
		c.add(diag.Errorf(diag.Pos{File: file, Line: line, Col: 1}, CodeSyntax,
			"a pack is one YAML document; a second one starts here"), "")
	}
	return nil, false
}

// hasDocMarker reports whether a line starts with a document marker (---
// or ...), the only way a YAML stream holds more than one document.
func hasDocMarker(src []byte) bool {
	for i := 0; i < len(src); {
		if bytes.HasPrefix(src[i:], []byte("---")) || bytes.HasPrefix(src[i:], []byte("...")) {
			return true
		}
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			return false
		}
		i += j + 1
	}
	return false
}

// docMarkerBefore returns the line (<= line) of the nearest "---" marker, or 0.
func docMarkerBefore(src []byte, line int) int {
	lines := bytes.Split(src, []byte("\n"))
	for l := min(line, len(lines)); l >= 1; l-- {
		t := bytes.TrimRight(lines[l-1], "\r")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) || bytes.HasPrefix(t, []byte("---\t")) {
			return l
		}
	}
	return 0
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the yaml.v3 parser (not scanner) errors: their line is
// that of the enclosing block's start, counted from 0.
var parserProblems = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntaxDiag positions a yaml.v3 error as well as its message allows: yaml.v3
// reports a line (sometimes that of the enclosing block) but no column, so the
// column is that of the character the message names, or of the line's first
// non-blank one.
func syntaxDiag(file string, src []byte, err error) diag.Diagnostic {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		for _, p := range parserProblems {
			if msg == p {
				line++ // yaml.v3 prints these lines counted from 0
				break
			}
		}
	}
	if l, ok := blockProblemLine(src, line, msg); ok && l != line {
		line = l
		msg += " (this line is indented unlike the keys or items of the block above it)"
	}
	lines := strings.Split(string(src), "\n")
	if line > len(lines) {
		line = len(lines)
	}
	if line < 1 {
		line = 1
	}
	text := strings.TrimRight(lines[line-1], "\r")
	col := 1
	if tl, tc, ok := tabIndent(lines, line); ok && (strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab")) {
		line, col = tl, tc
		msg += " (a tab in the indentation; YAML indents with spaces only)"
	} else {
		col = problemColumn(msg, []rune(text))
		if strings.Contains(msg, "unexpected end of stream") {
			msg += " (an unclosed quote or bracket?)"
		}
	}
	return diag.Errorf(diag.Pos{File: file, Line: line, Col: col}, CodeSyntax, "invalid YAML: %s", msg)
}

// blockProblems are the parser errors of a block mapping or sequence: yaml.v3
// reports them at the line where that block starts, however far below the
// token it stumbled on (a mis-indented key) is.
var blockProblems = []string{
	"did not find expected key",
	"did not find expected '-' indicator",
}

// blockProblemLine finds the line of the token a block problem (msg, reported
// at line from) is about: the shortest prefix of src, cut at the end of a line
// at or after from, that fails with the same message at the same line ends
// with that token's line. Cutting a block structure short is valid YAML, so
// the prefixes before the token parse; a binary search needs few parses.
func blockProblemLine(src []byte, from int, msg string) (int, bool) {
	if !slices.Contains(blockProblems, msg) {
		return 0, false
	}
	ends := lineEnds(src)
	if from < 1 || from > len(ends) {
		return 0, false
	}
	fails := func(line int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(src[:ends[line-1]], &n)
		if err == nil {
			return false
		}
		m := yamlLineErr.FindStringSubmatch(err.Error())
		return m != nil && m[2] == msg && m[1] == strconv.Itoa(from-1)
	}
	lo, hi := from, len(ends) // fails(hi) holds: it is the whole of src
	if !fails(hi) {
		return 0, false
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, true
}

// lineEnds returns, for each line of src, the offset just past it (its
// newline included).
func lineEnds(src []byte) []int {
	var ends []int
	for i, b := range src {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(src) > 0 && src[len(src)-1] != '\n' {
		ends = append(ends, len(src))
	}
	return ends
}

// tabIndent finds a tab in the indentation of line (1-based) or, failing
// that, of the nearest line after it.
func tabIndent(lines []string, line int) (int, int, bool) {
	for l := line; l <= len(lines) && l < line+3; l++ {
		for i, r := range []rune(lines[l-1]) {
			if r == '\t' {
				return l, i + 1, true
			}
			if r != ' ' {
				break
			}
		}
	}
	return 0, 0, false
}

// problemColumn guesses the column of the problem a yaml.v3 message names on
// a line: the stray colon, the reserved indicator, else the first non-blank.
func problemColumn(msg string, line []rune) int {
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		for i := len(line) - 1; i >= 0; i-- {
			if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
				return i + 1
			}
		}
	case strings.Contains(msg, "cannot start any token"):
		for i, r := range line {
			if r == '@' || r == '`' {
				return i + 1
			}
		}
	}
	for i, r := range line {
		if r != ' ' && r != '\t' {
			return i + 1
		}
	}
	return 1
}
