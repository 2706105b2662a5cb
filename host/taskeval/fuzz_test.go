package taskeval

import (
	"os"
	"testing"
)

// FuzzDecodeFile checks that any input decodes or is rejected with
// positioned diagnostics, never a panic.
func FuzzDecodeFile(f *testing.F) {
	if data, err := os.ReadFile("testdata/task.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"taskId": "T", "ai": "` + "```json\\n{}\\n```" + `"}`))
	f.Add([]byte(`{"taskId": "T", "deterministicScores": {"agentPerformance": 1e2}}`))
	f.Add([]byte("{\n\"a\": [1, {\"b\": null}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, diags := DecodeFile("f.json", data)
		if (file == nil) == (len(diags) == 0) {
			t.Fatalf("DecodeFile(%q) = %v, %v: want exactly one of a file and diagnostics", data, file, diags)
		}
		for _, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Errorf("DecodeFile(%q): diagnostic %v has no position", data, d)
			}
		}
		if file != nil {
			det, _, why := file.Scores()
			if _, err := Evaluate(file.Task.TaskID, det, file.AI, why, BuildBundle(&file.Task, "")); err != nil {
				// Only unknown evidence ids may fail a decoded file.
				if CheckEvidence(file.AI, BuildBundle(&file.Task, "")) == nil {
					t.Errorf("Evaluate(decoded %q) = %v", data, err)
				}
			}
		}
	})
}

// FuzzParseAIAnswer checks that any evaluator text parses or is rejected.
func FuzzParseAIAnswer(f *testing.F) {
	f.Add(validAnswer)
	f.Add("```json\n" + validAnswer + "\n```")
	f.Add("{")
	f.Add("text } then {")
	f.Fuzz(func(t *testing.T, text string) {
		a, diags := ParseAIAnswerFile("ai.md", []byte(text))
		if (a == nil) == (len(diags) == 0) {
			t.Fatalf("ParseAIAnswerFile(%q) = %v, %v: want exactly one of an answer and diagnostics", text, a, diags)
		}
		if a != nil && len(a.Categories) != 3 {
			t.Errorf("ParseAIAnswerFile(%q) accepted %d categories", text, len(a.Categories))
		}
	})
}
