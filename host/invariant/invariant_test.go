package invariant

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var six = []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}

func with(base []string, extra ...string) []string {
	return append(append([]string{}, base...), extra...)
}

func without(base []string, drop string) []string {
	var out []string
	for _, id := range base {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		manifest, schema, db []string
		want                 []string // Difference.String() of each difference, in order
	}{
		{name: "all equal", manifest: six, schema: six, db: six},
		{name: "order and repeats do not matter", manifest: with(six, "task_state"), schema: []string{"tool_sequence", "task_state", "stigmergic", "memory_grounding", "composite", "answer_keywords"}, db: six},
		{name: "new plugin not synced", manifest: with(six, "acme_invoice"), schema: six, db: six,
			want: []string{"missing in schema enum: acme_invoice", "missing in DB enum: acme_invoice"}},
		{name: "schema drifted", manifest: six, schema: without(six, "composite"), db: six,
			want: []string{"missing in schema enum: composite"}},
		{name: "db drifted", manifest: six, schema: six, db: with(six, "x"),
			want: []string{"in DB enum but no plugin: x"}},
		{name: "plugin removed", manifest: without(six, "stigmergic"), schema: six, db: six,
			want: []string{"in schema enum but no plugin: stigmergic", "in DB enum but no plugin: stigmergic"}},
		{name: "every place differs", manifest: []string{"a", "b"}, schema: []string{"b", "c"}, db: []string{"a", "d"},
			want: []string{"missing in schema enum: a", "missing in DB enum: b", "in schema enum but no plugin: c", "in DB enum but no plugin: d"}},
		{name: "all empty", manifest: nil, schema: nil, db: nil},
		{name: "no manifest", manifest: nil, schema: []string{"a"}, db: []string{"a"},
			want: []string{"in schema enum but no plugin: a", "in DB enum but no plugin: a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := Check(tt.manifest, tt.schema, tt.db)
			var got []string
			for _, d := range r.Differences {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%v, %v, %v) differences (-want +got):\n%s", tt.manifest, tt.schema, tt.db, diff)
			}
			if r.OK() != (len(tt.want) == 0) {
				t.Errorf("Check(...).OK() = %v, want %v", r.OK(), len(tt.want) == 0)
			}
			msg := r.Error()
			if r.OK() {
				if msg != "" {
					t.Errorf("Check(...).Error() = %q, want empty", msg)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Check(...).Error() = %q, want it to list %q", msg, w)
				}
			}
			if !strings.Contains(msg, "assay scorers sync") {
				t.Errorf("Check(...).Error() = %q, want the fixing command", msg)
			}
		})
	}
}

func TestFix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		r         Report
		want      []string
		wantNoReg bool
	}{
		{name: "sync only", r: Check(with(six, "acme"), six, six), want: []string{"assay scorers sync"}, wantNoReg: true},
		{name: "register then sync", r: Check(without(six, "stigmergic"), six, six),
			want: []string{"assay plugins register BIN", "(stigmergic)", "assay scorers sync"}},
		{name: "ok", r: Check(six, six, six), wantNoReg: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.r.Fix()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Fix() = %q, want it to contain %q", got, w)
				}
			}
			if tt.wantNoReg && strings.Contains(got, "register") {
				t.Errorf("Fix() = %q, want no plugin registration", got)
			}
		})
	}
}

func TestNoPlugin(t *testing.T) {
	t.Parallel()
	r := Check([]string{"a"}, []string{"a", "c", "b"}, []string{"a", "b"})
	if diff := cmp.Diff([]string{"b", "c"}, r.NoPlugin()); diff != "" {
		t.Errorf("NoPlugin() (-want +got):\n%s", diff)
	}
}
