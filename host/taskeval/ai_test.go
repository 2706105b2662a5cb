package taskeval

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const validAnswer = `{
  "categories": {
    "agentPerformance": {"score": 80, "rationale": "Strong execution.", "evidence": [{"id": "workflow-1", "kind": "workflow", "label": "lint", "value": "passed", "source": "workflow"}]},
    "taskOutcomeQuality": {"score": 90, "rationale": "Complete.", "evidence": [{"kind": "task", "label": "status", "value": 1}]},
    "processCompliance": {"score": 70, "rationale": "Mostly followed.", "evidence": [{"kind": "review", "label": "review", "value": true}]}
  },
  "overallRationale": "Solid."
}`

func TestParseAIAnswer(t *testing.T) {
	t.Parallel()
	want := &AIAnswer{
		Categories: map[Category]AICategory{
			AgentPerformance: {Score: 80, Rationale: "Strong execution.",
				Evidence: []EvidenceRef{{ID: "workflow-1", Kind: "workflow", Label: "lint", Value: "passed", Source: "workflow"}}},
			TaskOutcomeQuality: {Score: 90, Rationale: "Complete.", Evidence: []EvidenceRef{{Kind: "task", Label: "status", Value: "1"}}},
			ProcessCompliance:  {Score: 70, Rationale: "Mostly followed.", Evidence: []EvidenceRef{{Kind: "review", Label: "review", Value: "true"}}},
		},
		OverallRationale: "Solid.",
	}
	tests := []struct {
		name string
		text string
	}{
		{"plain JSON", validAnswer},
		{"fenced block with prose", "Here is my evaluation:\n\n```json\n" + validAnswer + "\n```\nThanks {not this}."},
		{"unlabelled fence", "```\n" + validAnswer + "\n```"},
		{"first brace to last brace", "Result follows. " + validAnswer + " -- end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAIAnswer(tt.text)
			if err != nil {
				t.Fatalf("ParseAIAnswer() error = %v", err)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(EvidenceRef{})); diff != "" {
				t.Errorf("ParseAIAnswer() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAIAnswerRejects(t *testing.T) {
	t.Parallel()
	repl := func(old, new string) string {
		if !strings.Contains(validAnswer, old) {
			panic("test answer lacks " + old)
		}
		return strings.Replace(validAnswer, old, new, 1)
	}
	tests := []struct {
		name string
		text string
		want string
	}{
		{"not JSON", "not-json", "AI answer is not JSON"},
		{"broken JSON", `{"categories": {`, "invalid JSON"},
		{"missing category", repl(`"processCompliance": {"score": 70, "rationale": "Mostly followed.", "evidence": [{"kind": "review", "label": "review", "value": true}]}`, `"x": 1`),
			"missing category processCompliance"},
		{"unknown category", repl(`"overallRationale"`, `"extra": 1, "overallRationale"`), `unknown field "extra"`},
		{"score over 100", repl(`"score": 80`, `"score": 101`), "categories.agentPerformance.score: must be an integer between 0 and 100, got 101"},
		{"fractional score", repl(`"score": 90`, `"score": 89.5`), "categories.taskOutcomeQuality.score: must be an integer between 0 and 100, got 89.5"},
		{"negative score", repl(`"score": 70`, `"score": -1`), "categories.processCompliance.score: must be an integer between 0 and 100"},
		{"string score", repl(`"score": 70`, `"score": "70"`), `categories.processCompliance.score: must be an integer between 0 and 100, got "70"`},
		{"missing score", repl(`"score": 70, `, ``), `categories.processCompliance: missing required field "score"`},
		{"blank rationale", repl(`"Complete."`, `"  "`), "categories.taskOutcomeQuality: rationale is required"},
		{"missing rationale", repl(`"rationale": "Complete.", `, ``), "categories.taskOutcomeQuality: rationale is required"},
		{"empty evidence", repl(`[{"kind": "task", "label": "status", "value": 1}]`, `[]`), "categories.taskOutcomeQuality: evidence is required"},
		{"evidence without label", repl(`"label": "status", `, ``), `categories.taskOutcomeQuality.evidence[0]: missing required field "label"`},
		{"evidence value object", repl(`"value": 1`, `"value": {}`), "categories.taskOutcomeQuality.evidence[0].value: want a string, number or boolean"},
		{"categories not an object", `{"categories": []}`, "categories: want an object, got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAIAnswer(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseAIAnswer() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseAIAnswerFilePositions(t *testing.T) {
	t.Parallel()
	text := "Evaluation:\n```json\n" + strings.Replace(validAnswer, `"score": 90`, `"score": 900`, 1) + "\n```\n"
	_, diags := ParseAIAnswerFile("ai.md", []byte(text))
	if len(diags) != 1 {
		t.Fatalf("ParseAIAnswerFile() = %v, want one diagnostic", diags)
	}
	// Line 1 "Evaluation:", 2 the fence, 3 "{", 4 "categories", 5 agentPerformance, 6 taskOutcomeQuality.
	want := "ai.md:6:37: taskeval.score: categories.taskOutcomeQuality.score: must be an integer between 0 and 100, got 900"
	if got := diags[0].String(); got != want {
		t.Errorf("ParseAIAnswerFile() = %q, want %q", got, want)
	}
}

func TestCheckEvidence(t *testing.T) {
	t.Parallel()
	a, err := ParseAIAnswer(strings.Replace(validAnswer, `"kind": "task"`, `"id": "doc-9", "kind": "task"`, 1))
	if err != nil {
		t.Fatal(err)
	}
	b := BuildBundle(taskWith(1, nil), "")
	diags := CheckEvidence(a, b)
	if len(diags) != 1 || !strings.Contains(diags[0].Message, `categories.taskOutcomeQuality.evidence[0].id: "doc-9" is not an entry of the evidence bundle`) {
		t.Errorf("CheckEvidence() = %v, want doc-9 rejected by name", diags)
	}
	// workflow-1 exists in the bundle; ids are optional.
	b.Documents = append(b.Documents, Entry{ID: "doc-9", Source: SourceDocuments})
	if diags := CheckEvidence(a, b); len(diags) != 0 {
		t.Errorf("CheckEvidence() = %v, want none", diags)
	}
}
