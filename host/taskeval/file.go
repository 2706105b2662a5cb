package taskeval

import (
	"regexp"
	"strings"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// File is a decoded task-eval input file: one finished task, optionally
// with deterministic scores computed elsewhere and an AI answer.
type File struct {
	Task Task
	// Deterministic is set when the file gives deterministicScores; it
	// replaces the scores computed from the task's signals.
	Deterministic Scores
	// AI is the answer given under "ai", or nil.
	AI *AIAnswer
}

var shaPattern = regexp.MustCompile(`^[0-9a-fA-F]{7,40}$`)

// DecodeFile decodes and validates a task-eval input file (JSON, camelCase
// fields; see docs/task-eval.md). Every problem is reported at once, each
// at its line:col: JSON syntax, unknown or missing fields, wrong types,
// scores outside the integers 0..100, bad timestamps, and an invalid AI
// answer. "ai" may be the answer object or the evaluator's raw text.
func DecodeFile(file string, data []byte) (*File, diag.List) {
	r := &reader{src: jsonpos.Source{File: file, Src: data}}
	n := r.parse(data)
	if n == nil {
		return nil, r.diags
	}
	top, ok := r.object(n, "")
	if !ok {
		return nil, r.diags
	}
	out := &File{}
	t := &out.Task
	t.TaskID = top.reqStr("taskId")
	t.Status = top.str("status")
	if v := top.get("metadata"); v != nil {
		if f, ok := r.object(v, "metadata"); ok {
			t.Metadata = Metadata{Title: f.str("title"), Description: f.str("description"),
				PRURL: f.str("prUrl"), UpdatedAt: f.time("updatedAt")}
			f.done()
		}
	}
	if v := top.get("mergeCommitSha"); v != nil {
		t.MergeCommitSHA = top.str("mergeCommitSha")
		if v.Kind == jsonpos.String && !shaPattern.MatchString(t.MergeCommitSHA) {
			r.errf(v.Off, CodeField, "mergeCommitSha: want 7 to 40 hex digits, got %q", t.MergeCommitSHA)
		}
	}
	shas := map[string]string{} // lowercased sha -> path of its first commit
	top.objects("commits", func(f *fields, p string) {
		c := Commit{SHA: f.reqStr("sha"), Subject: f.str("subject"), Message: f.str("message"),
			Author: f.str("author"), Timestamp: f.time("timestamp")}
		if v := f.get("sha"); v != nil && v.Kind == jsonpos.String && c.SHA != "" && !shaPattern.MatchString(c.SHA) {
			r.errf(v.Off, CodeField, "%s.sha: want 7 to 40 hex digits, got %q", p, c.SHA)
		} else if v != nil && c.SHA != "" {
			if first, dup := shas[strings.ToLower(c.SHA)]; dup {
				r.errf(v.Off, CodeField, "%s.sha: commit %s is already listed at %s", p, c.SHA, first)
			}
			shas[strings.ToLower(c.SHA)] = p
		}
		t.Commits = append(t.Commits, c)
	})
	top.objects("workflow", func(f *fields, p string) {
		w := WorkflowStep{ID: f.str("id"), Name: f.reqStr("name"), Status: f.reqStr("status"),
			Output: f.str("output"), StartedAt: f.time("startedAt"), CompletedAt: f.time("completedAt")}
		if v := f.get("status"); v != nil && v.Kind == jsonpos.String && w.Status != "" {
			switch w.Status {
			case StepPassed, StepFailed, StepPending:
			default:
				r.errf(v.Off, CodeField, "%s.status: want passed, failed or pending, got %q", p, w.Status)
			}
		}
		t.Workflow = append(t.Workflow, w)
	})
	top.objects("reviews", func(f *fields, p string) {
		t.Reviews = append(t.Reviews, Review{Reviewer: f.str("reviewer"), Verdict: f.reqStr("verdict"),
			Summary: f.str("summary"), Timestamp: f.time("timestamp")})
	})
	top.objects("documents", func(f *fields, p string) {
		t.Documents = append(t.Documents, Document{Key: f.reqStr("key"), Revision: f.integer("revision"),
			Author: f.str("author"), Content: f.str("content"), UpdatedAt: f.time("updatedAt")})
	})
	top.objects("activity", func(f *fields, p string) {
		t.Activity = append(t.Activity, ActivityEntry{Timestamp: f.time("timestamp"),
			Action: f.reqStr("action"), Outcome: f.str("outcome")})
	})
	top.objects("agentLogs", func(f *fields, p string) {
		t.AgentLogs = append(t.AgentLogs, AgentLog{Timestamp: f.time("timestamp"), Type: f.str("type"),
			Agent: f.str("agent"), Text: f.reqStr("text"), Detail: f.str("detail")})
	})
	top.objects("runAudit", func(f *fields, p string) {
		t.RunAudit = append(t.RunAudit, AuditEvent{ID: f.str("id"), Timestamp: f.time("timestamp"),
			Domain: f.str("domain"), MutationType: f.reqStr("mutationType"), Target: f.str("target")})
	})
	if v := top.get("deterministicScores"); v != nil {
		if f, ok := r.object(v, "deterministicScores"); ok {
			out.Deterministic = Scores{}
			for _, c := range Categories() {
				if s, ok := f.score(string(c)); ok {
					out.Deterministic[c] = s
				}
			}
			f.done()
		}
	}
	if v := top.get("ai"); v != nil {
		switch v.Kind {
		case jsonpos.String:
			// Raw evaluator text: positions are reported at the string.
			a, diags := ParseAIAnswerFile("", []byte(v.Text))
			for _, d := range diags {
				d.Message = strings.TrimSpace("ai: " + d.Message)
				d.Pos = r.pos(v.Off)
				r.diags = append(r.diags, d)
			}
			if a != nil {
				for _, c := range a.Categories {
					for i := range c.Evidence {
						c.Evidence[i].idPos = r.pos(v.Off)
					}
				}
			}
			out.AI = a
		default:
			out.AI = r.aiAnswer(v, "ai")
		}
	}
	top.done()
	if r.diags.HasErrors() {
		r.diags.Sort()
		return nil, r.diags
	}
	return out, nil
}

// Scores returns the deterministic scores of the file: the given
// deterministicScores, else those computed from the task's signals, with a
// rationale saying which.
func (f *File) Scores() (Scores, Signals, string) {
	sig := CollectSignals(&f.Task)
	if f.Deterministic != nil {
		return f.Deterministic, sig, "deterministic: scores given in the input file"
	}
	return DeterministicScores(sig), sig, sig.Explain()
}
