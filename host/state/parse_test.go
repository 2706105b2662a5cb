package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/diag"
)

func fp(v float64) *float64 { return &v }

func TestReadFile(t *testing.T) {
	t.Parallel()
	got, src, diags := ReadFile(filepath.Join("testdata", "after.json"))
	if len(diags) != 0 {
		t.Fatalf("ReadFile(after.json) diagnostics:\n%s", diags.Render(map[string][]byte{"testdata/after.json": src}))
	}
	want := &companyos.Snapshot{
		Tasks: []companyos.Task{
			{ID: "42", Title: "Investigate build", Specification: "Find why the nightly build fails on arm64.", State: "open",
				OwnerPersona: "devops", Priority: fp(7), DueAt: "2026-12-01T00:00:00Z", CreatedAt: "2026-11-30T06:59:00Z",
				ContextNotes: []companyos.Note{{At: "2026-11-30T07:00:00Z", Actor: "devops", Text: "arm64 runner out of disk"}}},
			{ID: "t-2", Title: "Write invoice export", ContextNotes: []companyos.Note{}},
		},
		Memory: []companyos.MemoryEntry{{ID: "7", Scope: "company", Title: "Build runners", Body: "The arm64 runner has a 20 GB disk.",
			Tags: []string{"ci", "arm64"}, SummaryL0: "arm64 runner disk", Kind: "fact", CreatedAt: "2026-11-01T00:00:00Z"}},
		CapturedAt: "2026-11-30T07:00:05Z",
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(companyos.Snapshot{}), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("ReadFile(after.json) mismatch (-want +got):\n%s", d)
	}

	_, _, diags = ReadFile(filepath.Join("testdata", "no-such-file.json"))
	if len(diags) != 1 || diags[0].Code != CodeRead {
		t.Errorf("ReadFile(missing) = %v, want one %s error", diags, CodeRead)
	}
}

// short diagnostic form for comparisons: "line:col severity code".
func brief(l diag.List) []string {
	out := make([]string, len(l))
	for i, d := range l {
		out[i] = strings.TrimPrefix(d.Pos.String(), "s.json:") + " " + string(d.Severity) + " " + d.Code
	}
	return out
}

func TestParseDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src      string
		want     []string
		wantMsg  string
		snapshot bool
	}{
		{"empty object", `{}`, []string{}, "", true},
		{"nulls", `{"tasks": null, "memory": null, "captured_at": null}`, []string{}, "", true},
		{"entries alias", `{"entries": [{"id": "m1", "body": "x"}]}`, []string{}, "", true},
		{"not JSON", "tasks:\n  - a", []string{"1:2 error state.syntax"}, "not valid JSON", false},
		{"empty file", "", []string{"1:1 error state.syntax"}, "unexpected end", false},
		{"truncated", "{\"tasks\": [\n  {\"id\": 1}", []string{"2:12 error state.syntax"}, "unexpected end", false},
		{"trailing data", `{} {}`, []string{"1:4 error state.syntax"}, "after top-level value", false},
		{"bad value", "{\n  \"tasks\": [tru]\n}", []string{"2:16 error state.syntax"}, "invalid character", false},
		{"root is a list", `[{"id": 1}]`, []string{"1:1 error state.type"}, "state snapshot: want an object", false},
		{"tasks not a list", `{"tasks": {"id": 1}}`, []string{"1:11 error state.type"}, "tasks: want a list, got an object", false},
		{"task not an object", `{"tasks": ["a"]}`, []string{"1:12 error state.type"}, `tasks[0]: want a task object, got a string "a"`, false},
		{"wrong field type", "{\"tasks\": [\n  {\"id\": \"a\", \"priority\": \"high\"}\n]}", []string{"2:27 error state.type"},
			`tasks[0].priority: want a number, got a string "high"`, false},
		{"id as bool", `{"memory": [{"id": true}]}`, []string{"1:20 error state.type"}, "memory[0].id: want a string or a number, got a boolean true", false},
		{"title as number", `{"tasks": [{"title": 5}]}`, []string{"1:22 error state.type"}, "tasks[0].title: want a string, got a number 5", false},
		{"notes not a list", `{"tasks": [{"context_notes": "x"}]}`, []string{"1:30 error state.type"}, "tasks[0].context_notes: want a list", false},
		{"note text wrong", `{"tasks": [{"context_notes": [{"text": 1}]}]}`, []string{"1:40 error state.type"}, "tasks[0].context_notes[0].text", false},
		{"tags not strings", `{"memory": [{"tags": ["a", 2]}]}`, []string{"1:28 error state.type"}, "memory[0].tags[1]: want a string", false},
		{"priority overflow", `{"tasks": [{"priority": 1e999}]}`, []string{"1:25 error state.value"}, "out of range", false},
		{"every error at once", `{"tasks": [{"title": 1}, {"state": 2}], "memory": 3}`,
			[]string{"1:22 error state.type", "1:36 error state.type", "1:51 error state.type"}, "", false},
		{"unknown fields warn", "{\"tasks\": [{\"id\": 1, \"company_id\": 9}],\n \"version\": 2}",
			[]string{"1:22 warning state.unknown_field", "2:2 warning state.unknown_field"}, "tasks[0].company_id: unknown field", true},
		{"duplicate field warns", `{"captured_at": "2026-11-30T07:00:00Z", "captured_at": "2026-11-30T07:00:01Z"}`,
			[]string{"1:41 warning state.duplicate_field"}, "captured_at: duplicate field", true},
		{"captured_at not RFC 3339", `{"captured_at": "yesterday"}`, []string{"1:17 warning state.value"}, "not an RFC 3339 time", true},
		{"multibyte column", "{\"tasks\": [{\"title\": \"é\", \"state\": 1}]}", []string{"1:36 error state.type"}, "", false},
		{"too deep", `{"tasks": [{"x": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}]}`,
			[]string{"1:272 error state.syntax"}, "nested more than", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			snap, diags := Parse("s.json", []byte(tt.src))
			if d := cmp.Diff(tt.want, brief(diags), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Parse(%q) diagnostics mismatch (-want +got):\n%s\n%s", tt.src, d, diags)
			}
			if tt.wantMsg != "" && !strings.Contains(diags.Error(), tt.wantMsg) {
				t.Errorf("Parse(%q) = %q, want a message containing %q", tt.src, diags.Error(), tt.wantMsg)
			}
			if (snap != nil) != tt.snapshot {
				t.Errorf("Parse(%q) snapshot = %v, want snapshot %v", tt.src, snap != nil, tt.snapshot)
			}
		})
	}
}

func TestParseRendersCaret(t *testing.T) {
	t.Parallel()
	src := []byte("{\"tasks\": [\n  {\"priority\": \"high\"}\n]}\n")
	_, diags := Parse("after.json", src)
	got := diags.Render(map[string][]byte{"after.json": src})
	want := "after.json:2:16: state.type: tasks[0].priority: want a number, got a string \"high\"\n" +
		"      {\"priority\": \"high\"}\n" +
		"                   ^\n"
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// TestSnapshotJSONIDs checks the companyos decoding of numeric ids (the
// UnmarshalJSON methods) agrees with Parse.
func TestSnapshotJSONIDs(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "after.json"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := Parse("after.json", src)
	var decoded companyos.Snapshot
	if err := jsonUnmarshal(src, &decoded); err != nil {
		t.Fatalf("json.Unmarshal(after.json) = %v", err)
	}
	if d := cmp.Diff(parsed, &decoded, cmpopts.IgnoreUnexported(companyos.Snapshot{}), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("json.Unmarshal vs Parse mismatch (-parse +unmarshal):\n%s", d)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestHostileSnapshots checks the bounds on what a snapshot file can cost:
// its size, and the number of diagnostics reported.
func TestHostileSnapshots(t *testing.T) {
	t.Parallel()
	manyUnknown := "{\"tasks\": [" + strings.Repeat(`{"id": "t", "colour": 1},`, 500) + `{"id": "t"}]}`
	manyWrong := "{\"tasks\": [" + strings.Repeat(`{"id": "t", "priority": "high"},`, 500) + `{"id": "t"}]}`
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name      string
		read      func() (*companyos.Snapshot, diag.List)
		wantLen   int
		wantLast  string // the code of the last diagnostic
		wantSnap  bool
		wantFirst string // the code of the first diagnostic
	}{
		{"500 unknown fields: capped warnings, snapshot kept", func() (*companyos.Snapshot, diag.List) { return Parse("s.json", []byte(manyUnknown)) },
			MaxDiagnostics + 1, "diag.truncated", true, CodeUnknownField},
		{"500 wrong types: capped errors", func() (*companyos.Snapshot, diag.List) { return Parse("s.json", []byte(manyWrong)) },
			MaxDiagnostics + 1, "diag.truncated", false, CodeType},
		{"a file over MaxFileSize is refused unread", func() (*companyos.Snapshot, diag.List) {
			s, _, l := ReadFile(big)
			return s, l
		}, 1, CodeTooLarge, false, CodeTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			snap, list := tt.read()
			got := []any{len(list), snap != nil}
			if len(list) > 0 {
				got = append(got, list[0].Code, list[len(list)-1].Code)
			}
			want := []any{tt.wantLen, tt.wantSnap, tt.wantFirst, tt.wantLast}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: [len, snapshot, first code, last code] (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestParseTooLarge covers issue 14 item 5: a snapshot over MaxFileSize
// (a file, or inline in a turns line) is refused before it is parsed.
func TestParseTooLarge(t *testing.T) {
	src := make([]byte, MaxFileSize+1)
	s, list := Parse("big.json", src)
	if s != nil || len(list) != 1 || list[0].Code != CodeTooLarge ||
		list[0].Message != "the state snapshot is 16.0 MiB, over the limit of 16 MiB; it is not read; capture a smaller company or trim the snapshot" {
		t.Errorf("Parse(%d bytes) = %v, %v; want one %s", len(src), s, list, CodeTooLarge)
	}
}
