package state

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
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

// MaxFileSize is the largest snapshot Parse accepts and ReadFile reads
// (docs/run-input.md, "Limits"): parsing takes about fifteen times the
// snapshot's size at its peak, so a snapshot at the limit verifies within
// the host's memory budget. A larger one is a CodeTooLarge error, refused
// before it is read.
const MaxFileSize = 16 << 20

// MaxDiagnostics caps the diagnostics Parse returns, so that a snapshot with
// a million unknown fields gives a readable report.
const MaxDiagnostics = 100

// ReadFile reads and parses the snapshot at path. It returns the file's bytes
// (for diag.List.Render) with the diagnostics; the snapshot is nil when any
// diagnostic is an error.
func ReadFile(path string) (*companyos.Snapshot, []byte, diag.List) {
	src, err := jsonpos.ReadFile(path, MaxFileSize)
	if errors.Is(err, jsonpos.ErrTooLarge) {
		return nil, nil, diag.List{TooLarge(path, -1)}
	}
	if err != nil {
		return nil, nil, diag.List{diag.Errorf(diag.Pos{File: path}, CodeRead, "reading state snapshot: %v", err)}
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
	if len(src) > MaxFileSize {
		return nil, diag.List{TooLarge(file, int64(len(src)))}
	}
	d := &decoder{src: jsonpos.Source{File: file, Src: src}}
	root, err := jsonpos.Parse(src, jsonpos.Options{})
	if err != nil {
		return nil, diag.List{d.src.Diag(CodeSyntax, "state snapshot is not valid JSON", err)}
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

// TooLarge is the CodeTooLarge error of a snapshot of size bytes (negative
// when only known to be over the limit).
func TooLarge(file string, size int64) diag.Diagnostic {
	what := fmt.Sprintf("more than %d MiB", MaxFileSize>>20)
	if size >= 0 {
		what = fmt.Sprintf("%.1f MiB", float64(size)/(1<<20))
	}
	return diag.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, CodeTooLarge,
		"the state snapshot is %s, over the limit of %d MiB; it is not read; capture a smaller company or trim the snapshot",
		what, MaxFileSize>>20)
}

// decoder walks a parsed tree into the companyos model, collecting
// diagnostics.
type decoder struct {
	src   jsonpos.Source
	diags diag.List
	// lenient drops unknown- and duplicate-field warnings (for API responses,
	// which carry more fields than a snapshot keeps).
	lenient bool
}

func (d *decoder) errorf(n *jsonpos.Node, code, format string, args ...any) {
	d.diags = append(d.diags, diag.Errorf(d.src.Pos(n.Off), code, format, args...))
}

func (d *decoder) typeErr(n *jsonpos.Node, path, want string) {
	d.errorf(n, CodeType, "%s: want %s, got %s", path, want, n.Short())
}

// fields calls set for each member of object n, warning about duplicates and
// keys set does not know (set returns false).
func (d *decoder) fields(n *jsonpos.Node, path string, set func(key string, v *jsonpos.Node, path string) bool) {
	seen := make(map[string]bool, len(n.Members))
	for _, m := range n.Members {
		p := jsonpos.Join(path, m.Key)
		if seen[m.Key] && !d.lenient {
			d.diags = append(d.diags, diag.Warnf(d.src.Pos(m.Off), CodeDuplicate, "%s: duplicate field; the last one is used", p))
		}
		seen[m.Key] = true
		if !set(m.Key, m.Value, p) && !d.lenient {
			d.diags = append(d.diags, diag.Warnf(d.src.Pos(m.Off), CodeUnknownField, "%s: unknown field, ignored", p))
		}
	}
}

func (d *decoder) snapshot(n *jsonpos.Node, s *companyos.Snapshot) {
	if n.Kind != jsonpos.Object {
		d.typeErr(n, "state snapshot", `an object {"tasks": [...], "memory": [...]}`)
		return
	}
	d.fields(n, "", func(key string, v *jsonpos.Node, path string) bool {
		switch key {
		case "tasks":
			s.Tasks = d.tasks(v, path)
		case "memory", "entries":
			s.Memory = d.memory(v, path)
		case "captured_at":
			s.CapturedAt = d.str(v, path)
			if s.CapturedAt != "" {
				if _, err := time.Parse(time.RFC3339, s.CapturedAt); err != nil {
					d.diags = append(d.diags, diag.Warnf(d.src.Pos(v.Off), CodeValue, "%s: %q is not an RFC 3339 time", path, s.CapturedAt))
				}
			}
		default:
			return false
		}
		return true
	})
}

// list returns the elements of an array (null is an empty list).
func (d *decoder) list(n *jsonpos.Node, path string) []*jsonpos.Node {
	switch n.Kind {
	case jsonpos.Null:
		return nil
	case jsonpos.Array:
		return n.Elems
	}
	d.typeErr(n, path, "a list")
	return nil
}

// objects decodes list n of objects, setting the fields of each with set; an
// element that is not an object is an error (want names what it should be)
// and is left out.
func objects[T any](d *decoder, n *jsonpos.Node, path, want string, set func(t *T, key string, v *jsonpos.Node, path string) bool) []T {
	elems := d.list(n, path)
	out := make([]T, 0, len(elems))
	for i, e := range elems {
		p := fmt.Sprintf("%s[%d]", path, i)
		if e.Kind != jsonpos.Object {
			d.typeErr(e, p, want)
			continue
		}
		var t T
		d.fields(e, p, func(key string, v *jsonpos.Node, path string) bool { return set(&t, key, v, path) })
		out = append(out, t)
	}
	return out
}

func (d *decoder) tasks(n *jsonpos.Node, path string) []companyos.Task {
	return objects(d, n, path, "a task object", func(t *companyos.Task, key string, v *jsonpos.Node, path string) bool {
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

func (d *decoder) notes(n *jsonpos.Node, path string) []companyos.Note {
	return objects(d, n, path, "a note object {at, actor, text}", func(note *companyos.Note, key string, v *jsonpos.Node, path string) bool {
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

func (d *decoder) memory(n *jsonpos.Node, path string) []companyos.MemoryEntry {
	return objects(d, n, path, "a memory entry object", func(m *companyos.MemoryEntry, key string, v *jsonpos.Node, path string) bool {
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
func (d *decoder) str(n *jsonpos.Node, path string) string {
	switch n.Kind {
	case jsonpos.String:
		return n.Text
	case jsonpos.Null:
		return ""
	}
	d.typeErr(n, path, "a string")
	return ""
}

// id reads an id given as a string or a number (kept as written).
func (d *decoder) id(n *jsonpos.Node, path string) string {
	switch n.Kind {
	case jsonpos.String, jsonpos.Number:
		return n.Text
	case jsonpos.Null:
		return ""
	}
	d.typeErr(n, path, "a string or a number")
	return ""
}

// num reads a number; null is nil.
func (d *decoder) num(n *jsonpos.Node, path string) *float64 {
	switch n.Kind {
	case jsonpos.Null:
		return nil
	case jsonpos.Number:
		v, err := strconv.ParseFloat(n.Text, 64)
		if err != nil {
			d.errorf(n, CodeValue, "%s: %s is out of range", path, n.Text)
			return nil
		}
		return &v
	}
	d.typeErr(n, path, "a number")
	return nil
}

func (d *decoder) strList(n *jsonpos.Node, path string) []string {
	elems := d.list(n, path)
	if elems == nil {
		return nil
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		if e.Kind != jsonpos.String {
			d.typeErr(e, fmt.Sprintf("%s[%d]", path, i), "a string")
			continue
		}
		out = append(out, e.Text)
	}
	return out
}
