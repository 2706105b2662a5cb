package taskeval

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in            string
		wantTruncated bool
		wantPrefix    string // the kept text, when truncated
	}{
		{"empty", "", false, ""},
		{"499 ascii", strings.Repeat("a", 499), false, ""},
		{"500 ascii", strings.Repeat("a", 500), false, ""},
		{"501 ascii", strings.Repeat("a", 501), true, strings.Repeat("a", 487)},
		{"900 ascii", strings.Repeat("x", 900), true, strings.Repeat("x", 487)},
		{"499 multi-byte", strings.Repeat("é", 499), false, ""},
		{"500 multi-byte", strings.Repeat("日", 500), false, ""},
		{"501 multi-byte", strings.Repeat("日", 501), true, strings.Repeat("日", 487)},
		{"900 mixed", strings.Repeat("ab€😀", 225), true, strings.Repeat("ab€😀", 121) + "ab€"},
		{"500 emoji counts 500 runes", strings.Repeat("😀", 500), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := Excerpt(tt.in)
			if truncated != tt.wantTruncated {
				t.Fatalf("Excerpt(%d runes) truncated = %v, want %v", utf8.RuneCountInString(tt.in), truncated, tt.wantTruncated)
			}
			if !tt.wantTruncated {
				if got != tt.in {
					t.Errorf("Excerpt(%d runes) changed its input", utf8.RuneCountInString(tt.in))
				}
				return
			}
			if n := utf8.RuneCountInString(got); n != MaxExcerpt {
				t.Errorf("Excerpt(%d runes) has %d runes, want %d", utf8.RuneCountInString(tt.in), n, MaxExcerpt)
			}
			if want := tt.wantPrefix + "… [truncated]"; got != want {
				t.Errorf("Excerpt(%d runes) = %q, want %q", utf8.RuneCountInString(tt.in), got, want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Excerpt(%d runes) is not valid UTF-8", utf8.RuneCountInString(tt.in))
			}
		})
	}
	if n := utf8.RuneCountInString(TruncationMarker); n != 13 || !strings.HasPrefix(TruncationMarker, "\u2026") {
		t.Errorf("TruncationMarker = %q (%d runes), want 13 runes starting with U+2026", TruncationMarker, n)
	}
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// taskWith returns a task with n entries in every group, entry i at t0+i
// minutes (ts nil) or at ts(i).
func taskWith(n int, ts func(i int) time.Time) *Task {
	if ts == nil {
		ts = func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	}
	t := &Task{TaskID: "FN-7", Metadata: Metadata{Title: "title", Description: "desc", UpdatedAt: t0}}
	for i := 0; i < n; i++ {
		t.Commits = append(t.Commits, Commit{SHA: fmt.Sprintf("%07x", 0xa000000+i), Subject: fmt.Sprintf("c%d", i), Timestamp: ts(i)})
		t.Workflow = append(t.Workflow, WorkflowStep{Name: fmt.Sprintf("w%d", i), Status: StepPassed, CompletedAt: ts(i)})
		t.Reviews = append(t.Reviews, Review{Verdict: "approved", Summary: fmt.Sprintf("r%d", i), Timestamp: ts(i)})
		t.Documents = append(t.Documents, Document{Key: fmt.Sprintf("d%d", i), Content: "x", UpdatedAt: ts(i)})
		t.Activity = append(t.Activity, ActivityEntry{Action: fmt.Sprintf("a%d", i), Timestamp: ts(i)})
		t.AgentLogs = append(t.AgentLogs, AgentLog{Text: fmt.Sprintf("l%d", i), Timestamp: ts(i)})
		t.RunAudit = append(t.RunAudit, AuditEvent{MutationType: fmt.Sprintf("m%d", i), Timestamp: ts(i)})
	}
	return t
}

// ids returns the ids of a group.
func ids(es []Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// wantIDs is the ids of input entries from..to-1 of a group.
func wantIDs(src Source, from, to int) []string {
	out := []string{}
	for i := from; i < to; i++ {
		switch src {
		case SourceCommits:
			out = append(out, fmt.Sprintf("commit-%07x", 0xa000000+i))
		case SourceWorkflow:
			out = append(out, fmt.Sprintf("workflow-%d", i+1))
		case SourceReviews:
			out = append(out, fmt.Sprintf("review-%d", i+1))
		case SourceDocuments:
			out = append(out, fmt.Sprintf("doc-%d", i+1))
		case SourceTaskActivity:
			out = append(out, fmt.Sprintf("task-activity-%d", i+1))
		case SourceAgentLogs:
			out = append(out, fmt.Sprintf("agent-log-%d", i+1))
		case SourceRunAudit:
			out = append(out, fmt.Sprintf("run-audit-%d", i+1))
		}
	}
	return out
}

func TestBuildBundleCaps(t *testing.T) {
	t.Parallel()
	groups := SourceOrder()[1:]
	for _, size := range []string{"0", "1", "cap", "cap+1"} {
		for _, src := range groups {
			t.Run(size+"/"+string(src), func(t *testing.T) {
				n := map[string]int{"0": 0, "1": 1, "cap": src.Cap(), "cap+1": src.Cap() + 1}[size]
				b := BuildBundle(taskWith(n, nil), "er-1")
				got := ids(b.Group(src))
				keep := min(n, src.Cap())
				want := wantIDs(src, n-keep, n)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("BuildBundle(%d entries).%s ids mismatch (-want +got):\n%s", n, src, diff)
				}
				if err := ValidateBundle(b); err != nil {
					t.Errorf("ValidateBundle(BuildBundle(%d entries)) = %v, want nil", n, err)
				}
			})
		}
	}
}

func TestBuildBundleReference(t *testing.T) {
	t.Parallel()
	task := taskWith(30, nil)
	task.Documents = []Document{{Key: "spec", Content: strings.Repeat("d", 900), UpdatedAt: t0}}
	b := BuildBundle(task, "er-1")
	if len(b.AgentLogs) != 25 || b.AgentLogs[0].ID != "agent-log-6" || b.AgentLogs[24].ID != "agent-log-30" {
		t.Errorf("BuildBundle(30 agent logs) kept %v, want agent-log-6 (entry 5) .. agent-log-30 (entry 29)", ids(b.AgentLogs))
	}
	if b.AgentLogs[0].Excerpt != "l5" {
		t.Errorf("first kept agent log excerpt = %q, want %q", b.AgentLogs[0].Excerpt, "l5")
	}
	doc := b.Documents[0]
	if utf8.RuneCountInString(doc.Excerpt) != 500 || !strings.HasSuffix(doc.Excerpt, TruncationMarker) || !doc.Truncated {
		t.Errorf("900-character document: excerpt of %d runes, truncated %v, want 500 ending in the marker, true",
			utf8.RuneCountInString(doc.Excerpt), doc.Truncated)
	}
	if diff := cmp.Diff([]string{"task-metadata-1"}, ids(b.TaskMetadata)); diff != "" {
		t.Errorf("taskMetadata ids mismatch (-want +got):\n%s", diff)
	}
	if b.RunID != "er-1" || b.AgentLogs[0].RunID != "er-1" || b.AgentLogs[0].TaskID != "FN-7" {
		t.Errorf("BuildBundle ids: run %q entry run %q task %q, want er-1, er-1, FN-7", b.RunID, b.AgentLogs[0].RunID, b.AgentLogs[0].TaskID)
	}
}

func TestBuildBundleTimestamps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ts   func(i int) time.Time
		n    int
		want []string // agent log ids kept, in order
	}{
		{"equal timestamps keep input order, the last 25",
			func(int) time.Time { return t0 }, 27, wantIDs(SourceAgentLogs, 2, 27)},
		{"missing timestamps sort first and are dropped first",
			func(i int) time.Time {
				if i%2 == 0 {
					return time.Time{}
				}
				return t0.Add(time.Duration(i) * time.Minute)
			}, 30,
			// 15 missing (even entries) sort before the 15 timed: keep the last 10 missing and all 15 timed.
			append(idsOf(SourceAgentLogs, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28),
				idsOf(SourceAgentLogs, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29)...)},
		{"timestamps override input order",
			func(i int) time.Time { return t0.Add(-time.Duration(i) * time.Minute) }, 3,
			idsOf(SourceAgentLogs, 2, 1, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := BuildBundle(taskWith(tt.n, tt.ts), "")
			if diff := cmp.Diff(tt.want, ids(b.AgentLogs)); diff != "" {
				t.Errorf("BuildBundle().agentLogs ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func idsOf(src Source, idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, wantIDs(src, i, i+1)...)
	}
	return out
}

func TestBuildBundleBounds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("s", 200)
	task := &Task{TaskID: "FN-8", Commits: []Commit{{SHA: "abcdef1", Subject: long}},
		Activity: []ActivityEntry{{Action: strings.Repeat("é", 600)}}}
	b := BuildBundle(task, "")
	c := b.Commits[0]
	if c.Label != strings.Repeat("s", 160) || c.Excerpt != long || c.Truncated {
		t.Errorf("commit with a 200-character subject: label %d runes, excerpt %d runes, truncated %v; want 160, 200, false",
			utf8.RuneCountInString(c.Label), utf8.RuneCountInString(c.Excerpt), c.Truncated)
	}
	a := b.TaskActivity[0]
	if utf8.RuneCountInString(a.Label) != 500 || utf8.RuneCountInString(a.Excerpt) != 500 || !a.Truncated {
		t.Errorf("600-character activity: label %d, excerpt %d runes, truncated %v; want 500, 500, true",
			utf8.RuneCountInString(a.Label), utf8.RuneCountInString(a.Excerpt), a.Truncated)
	}
	// Empty groups marshal as [] and the groups appear in the fixed order.
	raw, err := json.Marshal(BuildBundle(&Task{TaskID: "FN-9"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	last := -1
	for _, src := range SourceOrder() {
		i := strings.Index(s, `"`+string(src)+`":[`)
		if i < 0 || i < last {
			t.Fatalf("json.Marshal(bundle) = %s: group %s missing or out of order", s, src)
		}
		last = i
	}
}

func TestValidateBundle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(b *Bundle)
		want   string // "" for valid
	}{
		{"built bundle is valid", func(b *Bundle) {}, ""},
		{"21 commits", func(b *Bundle) {
			b.Commits = BuildBundle(taskWith(20, nil), "").Commits
			b.Commits = append(b.Commits, Entry{ID: "commit-fffffff", Source: SourceCommits})
		}, "commits exceeds limit 20"},
		{"26 agent logs", func(b *Bundle) {
			for i := 0; i < 26; i++ {
				b.AgentLogs = append(b.AgentLogs, Entry{ID: fmt.Sprintf("x-%d", i), Source: SourceAgentLogs})
			}
		}, "agentLogs exceeds limit 25"},
		{"wrong source order", func(b *Bundle) {
			b.SourceOrder[0], b.SourceOrder[1] = b.SourceOrder[1], b.SourceOrder[0]
		}, "sourceOrder must be"},
		{"missing source order", func(b *Bundle) { b.SourceOrder = nil }, "sourceOrder must be"},
		{"entry in the wrong group", func(b *Bundle) { b.Reviews[0].Source = SourceDocuments }, `source is "documents"`},
		{"duplicate id", func(b *Bundle) { b.Reviews[0].ID = b.Documents[0].ID }, "duplicate id"},
		{"unbounded excerpt", func(b *Bundle) { b.Documents[0].Excerpt = strings.Repeat("x", 501) }, "excerpt of 501 characters exceeds 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := BuildBundle(taskWith(1, nil), "")
			tt.mutate(b)
			err := ValidateBundle(b)
			if tt.want == "" {
				if err != nil {
					t.Errorf("ValidateBundle() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ValidateBundle() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
