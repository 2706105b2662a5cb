package taskeval

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/excerpt"
)

// Source names one evidence group.
type Source string

// The evidence groups, in their fixed order.
const (
	SourceTaskMetadata Source = "taskMetadata"
	SourceCommits      Source = "commits"
	SourceWorkflow     Source = "workflow"
	SourceReviews      Source = "reviews"
	SourceDocuments    Source = "documents"
	SourceTaskActivity Source = "taskActivity"
	SourceAgentLogs    Source = "agentLogs"
	SourceRunAudit     Source = "runAudit"
)

// SourceOrder returns the evidence groups in their fixed order.
func SourceOrder() []Source {
	return []Source{SourceTaskMetadata, SourceCommits, SourceWorkflow, SourceReviews,
		SourceDocuments, SourceTaskActivity, SourceAgentLogs, SourceRunAudit}
}

// Cap is the most entries a group may hold: 20 commits, 25 of anything else.
func (s Source) Cap() int {
	if s == SourceCommits {
		return 20
	}
	return 25
}

// Excerpt bounds (package excerpt holds the rule, shared with verify).
const (
	MaxExcerpt       = excerpt.Max // runes in a stored excerpt, marker included
	MaxCommitSubject = 160         // runes in a commit subject (cut without a marker)
	TruncationMarker = excerpt.Marker
)

// Excerpt bounds s for storage with excerpt.Bound: a string of more than
// MaxExcerpt runes becomes its first 487 runes followed by TruncationMarker
// (13 runes, starting with U+2026), exactly 500 runes, and truncated is
// true; a shorter one is returned unchanged.
//
// Lengths are counted in runes (Unicode code points). The reference
// implementation counts UTF-16 code units, so the two differ only for text
// outside the Basic Multilingual Plane (emoji and the like), which counts
// once here and twice there; a rune is never split.
func Excerpt(s string) (bounded string, truncated bool) { return excerpt.Bound(s) }

// Entry is one piece of evidence. ID is what an AI evaluator cites.
type Entry struct {
	ID        string            `json:"id"`
	Source    Source            `json:"source"`
	Label     string            `json:"label"`
	TaskID    string            `json:"taskId"`
	RunID     string            `json:"runId,omitempty"`
	Timestamp string            `json:"timestamp,omitempty"` // RFC 3339, empty when unknown
	Excerpt   string            `json:"excerpt,omitempty"`
	Truncated bool              `json:"truncated,omitempty"`
	Refs      map[string]string `json:"refs,omitempty"` // drill-down fields: sha, status, documentKey, ...
}

// Bundle is the bounded evidence an AI evaluator sees and a result stores.
// Its groups marshal in the fixed source order.
type Bundle struct {
	TaskID       string   `json:"taskId"`
	RunID        string   `json:"runId,omitempty"`
	SourceOrder  []Source `json:"sourceOrder"`
	TaskMetadata []Entry  `json:"taskMetadata"`
	Commits      []Entry  `json:"commits"`
	Workflow     []Entry  `json:"workflow"`
	Reviews      []Entry  `json:"reviews"`
	Documents    []Entry  `json:"documents"`
	TaskActivity []Entry  `json:"taskActivity"`
	AgentLogs    []Entry  `json:"agentLogs"`
	RunAudit     []Entry  `json:"runAudit"`
}

// Group returns the entries of source s.
func (b *Bundle) Group(s Source) []Entry {
	switch s {
	case SourceTaskMetadata:
		return b.TaskMetadata
	case SourceCommits:
		return b.Commits
	case SourceWorkflow:
		return b.Workflow
	case SourceReviews:
		return b.Reviews
	case SourceDocuments:
		return b.Documents
	case SourceTaskActivity:
		return b.TaskActivity
	case SourceAgentLogs:
		return b.AgentLogs
	case SourceRunAudit:
		return b.RunAudit
	}
	return nil
}

// IDs returns the set of entry ids in the bundle.
func (b *Bundle) IDs() map[string]bool {
	ids := map[string]bool{}
	for _, s := range SourceOrder() {
		for _, e := range b.Group(s) {
			ids[e.ID] = true
		}
	}
	return ids
}

// SetRunID stamps runID on the bundle and every entry.
func (b *Bundle) SetRunID(runID string) {
	b.RunID = runID
	for _, g := range [][]Entry{b.TaskMetadata, b.Commits, b.Workflow, b.Reviews,
		b.Documents, b.TaskActivity, b.AgentLogs, b.RunAudit} {
		for i := range g {
			g[i].RunID = runID
		}
	}
}

// item is an entry before selection, with its parsed timestamp.
type item struct {
	at    time.Time
	entry Entry
}

// BuildBundle collects the evidence of t. Entry ids come from the input
// order (commit-<sha>, workflow-<n>, review-<n>, doc-<n>, task-activity-<n>,
// agent-log-<n>, run-audit-<n>, task-metadata-1, n counting from 1); each
// group is sorted by (timestamp, id), a missing timestamp sorting first and
// ids with the same prefix comparing their number, and the most recent
// Cap() entries are kept. Excerpts and labels are bounded with Excerpt,
// commit subjects cut to MaxCommitSubject runes.
func BuildBundle(t *Task, runID string) *Bundle {
	b := &Bundle{TaskID: t.TaskID, RunID: runID, SourceOrder: SourceOrder()}
	mk := func(src Source, id, label string, at time.Time, text string, refs map[string]string) item {
		e := Entry{ID: id, Source: src, TaskID: t.TaskID, RunID: runID}
		e.Label, _ = Excerpt(label)
		e.Excerpt, e.Truncated = Excerpt(text)
		if !at.IsZero() {
			e.Timestamp = at.UTC().Format(time.RFC3339Nano)
		}
		for k, v := range refs {
			if v == "" {
				delete(refs, k)
				continue
			}
			refs[k], _ = Excerpt(v)
		}
		if len(refs) > 0 {
			e.Refs = refs
		}
		return item{at: at, entry: e}
	}

	label := t.Metadata.Title
	if label == "" {
		label = t.TaskID
	}
	b.TaskMetadata = keepRecent(SourceTaskMetadata, []item{mk(SourceTaskMetadata, "task-metadata-1", label,
		t.Metadata.UpdatedAt, t.Metadata.Description, map[string]string{
			"status": t.Status, "mergeCommitSha": t.MergeCommitSHA, "prUrl": t.Metadata.PRURL,
		})})

	var items []item
	for _, c := range t.Commits {
		subject := excerpt.Cut(c.Subject, MaxCommitSubject)
		text := c.Message
		if text == "" {
			text = c.Subject
		}
		e := mk(SourceCommits, "commit-"+c.SHA, subject, c.Timestamp, text,
			map[string]string{"sha": c.SHA, "author": c.Author})
		e.entry.Label = subject
		items = append(items, e)
	}
	b.Commits = keepRecent(SourceCommits, items)

	items = nil
	for i, w := range t.Workflow {
		at := w.CompletedAt
		if at.IsZero() {
			at = w.StartedAt
		}
		items = append(items, mk(SourceWorkflow, "workflow-"+strconv.Itoa(i+1), w.Name, at, w.Output,
			map[string]string{"stepId": w.ID, "stepName": w.Name, "status": w.Status}))
	}
	b.Workflow = keepRecent(SourceWorkflow, items)

	items = nil
	for i, r := range t.Reviews {
		l := r.Reviewer
		if l == "" {
			l = "review"
		}
		items = append(items, mk(SourceReviews, "review-"+strconv.Itoa(i+1), l, r.Timestamp, r.Summary,
			map[string]string{"verdict": r.Verdict, "reviewer": r.Reviewer}))
	}
	b.Reviews = keepRecent(SourceReviews, items)

	items = nil
	for i, d := range t.Documents {
		refs := map[string]string{"documentKey": d.Key, "author": d.Author}
		if d.Revision > 0 {
			refs["revision"] = strconv.Itoa(d.Revision)
		}
		items = append(items, mk(SourceDocuments, "doc-"+strconv.Itoa(i+1), d.Key, d.UpdatedAt, d.Content, refs))
	}
	b.Documents = keepRecent(SourceDocuments, items)

	items = nil
	for i, a := range t.Activity {
		text := a.Action
		if a.Outcome != "" {
			text += " — " + a.Outcome
		}
		items = append(items, mk(SourceTaskActivity, "task-activity-"+strconv.Itoa(i+1), a.Action, a.Timestamp, text, nil))
	}
	b.TaskActivity = keepRecent(SourceTaskActivity, items)

	items = nil
	for i, l := range t.AgentLogs {
		text := l.Text
		if l.Detail != "" {
			text += " — " + l.Detail
		}
		items = append(items, mk(SourceAgentLogs, "agent-log-"+strconv.Itoa(i+1), l.Type, l.Timestamp, text,
			map[string]string{"agent": l.Agent, "type": l.Type}))
	}
	b.AgentLogs = keepRecent(SourceAgentLogs, items)

	items = nil
	for i, ev := range t.RunAudit {
		items = append(items, mk(SourceRunAudit, "run-audit-"+strconv.Itoa(i+1), ev.MutationType, ev.Timestamp,
			strings.TrimSpace(ev.MutationType+" "+ev.Target),
			map[string]string{"eventId": ev.ID, "domain": ev.Domain, "mutationType": ev.MutationType, "target": ev.Target}))
	}
	b.RunAudit = keepRecent(SourceRunAudit, items)
	return b
}

// keepRecent sorts items by (timestamp, id) and keeps the last src.Cap().
// The result is never nil, so an empty group marshals as [].
func keepRecent(src Source, items []item) []Entry {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return idLess(a.entry.ID, b.entry.ID)
	})
	if n := src.Cap(); len(items) > n {
		items = items[len(items)-n:]
	}
	out := make([]Entry, len(items))
	for i, it := range items {
		out[i] = it.entry
	}
	return out
}

// idLess orders ids; ids sharing a prefix and ending in a number compare the
// number, so agent-log-9 comes before agent-log-10 (input order).
func idLess(a, b string) bool {
	pa, na, oka := splitNum(a)
	pb, nb, okb := splitNum(b)
	if oka && okb && pa == pb && na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(id string) (prefix string, n int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return "", 0, false
	}
	return id[:i+1], n, true
}

// ErrInvalidBundle is wrapped by every ValidateBundle error.
var ErrInvalidBundle = errors.New("invalid evidence bundle")

// ValidateBundle checks a bundle before it is stored: the source order must
// be the fixed one, no group may exceed its cap, every entry must belong to
// its group, have an id unique in the bundle, and carry an excerpt of at
// most MaxExcerpt runes. Nothing is cut: a bundle that breaks a rule is
// rejected, with every problem listed.
func ValidateBundle(b *Bundle) error {
	if b == nil {
		return fmt.Errorf("%w: missing", ErrInvalidBundle)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidBundle}, args...)...))
	}
	want := SourceOrder()
	if !slices.Equal(b.SourceOrder, want) {
		bad("sourceOrder must be %v, got %v", want, b.SourceOrder)
	}
	seen := map[string]bool{}
	for _, s := range want {
		g := b.Group(s)
		if len(g) > s.Cap() {
			bad("%s exceeds limit %d (%d entries)", s, s.Cap(), len(g))
		}
		for i, e := range g {
			switch {
			case e.ID == "":
				bad("%s[%d]: missing id", s, i)
			case seen[e.ID]:
				bad("%s[%d]: duplicate id %q", s, i, e.ID)
			}
			seen[e.ID] = true
			if e.Source != s {
				bad("%s[%d] (%s): source is %q", s, i, e.ID, e.Source)
			}
			if n := utf8.RuneCountInString(e.Excerpt); n > MaxExcerpt {
				bad("%s[%d] (%s): excerpt of %d characters exceeds %d", s, i, e.ID, n, MaxExcerpt)
			}
		}
	}
	return errors.Join(errs...)
}
