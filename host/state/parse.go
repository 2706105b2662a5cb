package state

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
)

// Diagnostic codes.
const (
	CodeRead         = "state.read"
	CodeSyntax       = "state.syntax"
	CodeType         = "state.type"
	CodeValue        = "state.value"
	CodeUnknownField = "state.unknown_field"
	CodeDuplicate    = "state.duplicate_field"
	CodeTooLarge     = "state.too_large"
)

// MaxFileSize is the largest snapshot file ReadFile reads, the same bound
// Capture puts on a response.
const MaxFileSize = maxBody

// MaxDiagnostics caps the diagnostics Parse returns, so that a snapshot with
// a million unknown fields gives a readable report.
const MaxDiagnostics = 100

// ReadFile reads and parses the snapshot at path. It returns the file's bytes
// (for diag.List.Render) with the diagnostics; the snapshot is nil when any
// diagnostic is an error.
func ReadFile(path string) (*companyos.Snapshot, []byte, diag.List) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, diag.List{diag.Errorf(diag.Pos{File: path}, CodeRead, "reading state snapshot: %v", err)}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, diag.List{diag.Errorf(diag.Pos{File: path}, CodeRead, "reading state snapshot: %v", err)}
	}
	if len(src) > MaxFileSize {
		return nil, nil, diag.List{diag.Errorf(diag.Pos{File: path, Line: 1, Col: 1}, CodeTooLarge,
			"the state snapshot is more than %d MiB; capture a smaller company or trim the snapshot", MaxFileSize>>20)}
	}
	s, l := Parse(path, src)
	return s, src, l
}

// Parse decodes a snapshot {"tasks":[...], "memory":[...], "captured_at":"..."}
// from src. Malformed JSON, a wrong type for a known field, or a list that is
// not a list are errors at their line:col; unknown and duplicate fields are
// warnings. Task and memory ids may be strings or numbers. "entries" (the
// memory API's key) is accepted for "memory". The snapshot is nil when any
// diagnostic is an error.
func Parse(file string, src []byte) (*companyos.Snapshot, diag.List) {
	d := &decoder{file: file, src: src}
	root, err := parseTree(src)
	if err != nil {
		se := err.(*syntaxError)
		return nil, diag.List{diag.Errorf(d.pos(se.off), CodeSyntax, "state snapshot is not valid JSON: %s", se.msg)}
	}
	snap := &companyos.Snapshot{}
	d.snapshot(root, snap)
	d.diags.Sort()
	list := d.diags.Cap(MaxDiagnostics)
	if list.HasErrors() {
		return nil, list
	}
	return snap, list
}

// decoder walks a parsed tree into the companyos model, collecting
// diagnostics.
type decoder struct {
	file  string
	src   []byte
	diags diag.List
	// lenient drops unknown- and duplicate-field warnings (for API responses,
	// which carry more fields than a snapshot keeps).
	lenient bool
}

func (d *decoder) pos(off int64) diag.Pos { return diag.OffsetPos(d.file, d.src, int(off)) }

func (d *decoder) errorf(n *node, code, format string, args ...any) {
	d.diags = append(d.diags, diag.Errorf(d.pos(n.off), code, format, args...))
}

func (d *decoder) typeErr(n *node, path, want string) {
	got := n.kind.String()
	if n.kind == kindString || n.kind == kindNumber || n.kind == kindBool {
		got += " " + short(n)
	}
	d.errorf(n, CodeType, "%s: want %s, got %s", path, want, got)
}

func short(n *node) string {
	switch n.kind {
	case kindString:
		s := n.text
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return strconv.Quote(s)
	case kindBool:
		return strconv.FormatBool(n.boolean)
	}
	return n.text
}

// fields calls set for each member of object n, warning about duplicates and
// keys set does not know (set returns false).
func (d *decoder) fields(n *node, path string, set func(key string, v *node, path string) bool) {
	seen := make(map[string]bool, len(n.members))
	for _, m := range n.members {
		p := join(path, m.key)
		if seen[m.key] && !d.lenient {
			d.diags = append(d.diags, diag.Warnf(d.pos(m.off), CodeDuplicate, "%s: duplicate field; the last one is used", p))
		}
		seen[m.key] = true
		if !set(m.key, m.val, p) && !d.lenient {
			d.diags = append(d.diags, diag.Warnf(d.pos(m.off), CodeUnknownField, "%s: unknown field, ignored", p))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) snapshot(n *node, s *companyos.Snapshot) {
	if n.kind != kindObject {
		d.typeErr(n, "state snapshot", `an object {"tasks": [...], "memory": [...]}`)
		return
	}
	d.fields(n, "", func(key string, v *node, path string) bool {
		switch key {
		case "tasks":
			s.Tasks = d.tasks(v, path)
		case "memory", "entries":
			s.Memory = d.memory(v, path)
		case "captured_at":
			s.CapturedAt = d.str(v, path)
			if s.CapturedAt != "" {
				if _, err := time.Parse(time.RFC3339, s.CapturedAt); err != nil {
					d.diags = append(d.diags, diag.Warnf(d.pos(v.off), CodeValue, "%s: %q is not an RFC 3339 time", path, s.CapturedAt))
				}
			}
		default:
			return false
		}
		return true
	})
}

// list returns the elements of an array (null is an empty list).
func (d *decoder) list(n *node, path string) []*node {
	switch n.kind {
	case kindNull:
		return nil
	case kindArray:
		return n.elems
	}
	d.typeErr(n, path, "a list")
	return nil
}

// objects decodes list n of objects, setting the fields of each with set; an
// element that is not an object is an error (want names what it should be)
// and is left out.
func objects[T any](d *decoder, n *node, path, want string, set func(t *T, key string, v *node, path string) bool) []T {
	elems := d.list(n, path)
	out := make([]T, 0, len(elems))
	for i, e := range elems {
		p := fmt.Sprintf("%s[%d]", path, i)
		if e.kind != kindObject {
			d.typeErr(e, p, want)
			continue
		}
		var t T
		d.fields(e, p, func(key string, v *node, path string) bool { return set(&t, key, v, path) })
		out = append(out, t)
	}
	return out
}

func (d *decoder) tasks(n *node, path string) []companyos.Task {
	return objects(d, n, path, "a task object", func(t *companyos.Task, key string, v *node, path string) bool {
		switch key {
		case "id":
			t.ID = d.id(v, path)
		case "title":
			t.Title = d.str(v, path)
		case "specification":
			t.Specification = d.str(v, path)
		case "state":
			t.State = d.str(v, path)
		case "owner_persona":
			t.OwnerPersona = d.str(v, path)
		case "checked_out_by":
			t.CheckedOutBy = d.str(v, path)
		case "priority":
			t.Priority = d.num(v, path)
		case "due_at":
			t.DueAt = d.str(v, path)
		case "created_at":
			t.CreatedAt = d.str(v, path)
		case "context_notes":
			t.ContextNotes = d.notes(v, path)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) notes(n *node, path string) []companyos.Note {
	return objects(d, n, path, "a note object {at, actor, text}", func(note *companyos.Note, key string, v *node, path string) bool {
		switch key {
		case "at":
			note.At = d.str(v, path)
		case "actor":
			note.Actor = d.str(v, path)
		case "text":
			note.Text = d.str(v, path)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) memory(n *node, path string) []companyos.MemoryEntry {
	return objects(d, n, path, "a memory entry object", func(m *companyos.MemoryEntry, key string, v *node, path string) bool {
		switch key {
		case "id":
			m.ID = d.id(v, path)
		case "scope":
			m.Scope = d.str(v, path)
		case "title":
			m.Title = d.str(v, path)
		case "body":
			m.Body = d.str(v, path)
		case "tags":
			m.Tags = d.strList(v, path)
		case "summary_l0":
			m.SummaryL0 = d.str(v, path)
		case "summary_l1":
			m.SummaryL1 = d.str(v, path)
		case "kind":
			m.Kind = d.str(v, path)
		case "created_at":
			m.CreatedAt = d.str(v, path)
		default:
			return false
		}
		return true
	})
}

// str reads a string; null is "".
func (d *decoder) str(n *node, path string) string {
	switch n.kind {
	case kindString:
		return n.text
	case kindNull:
		return ""
	}
	d.typeErr(n, path, "a string")
	return ""
}

// id reads an id given as a string or a number (kept as written).
func (d *decoder) id(n *node, path string) string {
	switch n.kind {
	case kindString, kindNumber:
		return n.text
	case kindNull:
		return ""
	}
	d.typeErr(n, path, "a string or a number")
	return ""
}

// num reads a number; null is nil.
func (d *decoder) num(n *node, path string) *float64 {
	switch n.kind {
	case kindNull:
		return nil
	case kindNumber:
		v, err := strconv.ParseFloat(n.text, 64)
		if err != nil {
			d.errorf(n, CodeValue, "%s: %s is out of range", path, n.text)
			return nil
		}
		return &v
	}
	d.typeErr(n, path, "a number")
	return nil
}

func (d *decoder) strList(n *node, path string) []string {
	elems := d.list(n, path)
	if elems == nil {
		return nil
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		if e.kind != kindString {
			d.typeErr(e, fmt.Sprintf("%s[%d]", path, i), "a string")
			continue
		}
		out = append(out, e.text)
	}
	return out
}
