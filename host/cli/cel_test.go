package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Not parallel: urfave/cli writes its global help flag on every run.
func TestCelEval(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	base := []string{"cel", "eval", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker",
		"--trace", fx + "traces/task_create_release_blocker.good.ndjson"}
	withState := append(append([]string(nil), base...),
		"--state-before", fx+"state/task_create_release_blocker.before.json",
		"--state-after", fx+"state/task_create_release_blocker.good.after.json")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string // substrings of stdout
		wantErrOut []string // substrings of stderr
	}{
		{"bool value", append(base, "turn.finalized && size(turn.tool_calls) > 0"), ExitOK,
			[]string{"value: true\n", "type:  bool\n", "cost:  ", "as a check: score 1, passed true"}, nil},
		{"list value with state", append(withState, "state.tasks.filter(t, !(t.id in before.tasks.map(b, b.id))).size()"), ExitOK,
			[]string{"value: 1\n", "type:  int\n"}, nil},
		{"latency flag", append(base, "--latency", "12.5", "turn.latency_s"), ExitOK,
			[]string{"value: 12.5\n", "type:  double\n"}, nil},
		{"compile error at expr position", append(base, "turn.finalized &&\n  turn.answr == ''"), ExitInvalid,
			nil, []string{"expr:2:8: kpi.compile: undefined field 'answr'", "      ^"}},
		{"cost refused", append(base, "turn.events.all(e, turn.events.exists(f, f.line > e.line))"), ExitInvalid,
			nil, []string{"expr:1:1: kpi.cost: estimated cost"}},
		{"double in range scores as a check", append(base, "0.25"), ExitOK,
			[]string{"value: 0.25\n", "type:  double\n", "as a check: score 0.25, passed false"}, nil},
		{"double outside [0,1] is a check error", append(base, "double(size(turn.tool_calls)) + 1.5"), ExitOK,
			[]string{"type:  double\n", "as a check: error (scores 0): check value outside [0,1]: "}, nil},
		{"NaN is a check error", append(base, "0.0 / 0.0"), ExitOK,
			[]string{"as a check: error (scores 0): check value outside [0,1]: NaN"}, nil},
		{"non-scoring type is not a check", append(base, "turn.tools"), ExitOK,
			[]string{"type:  list(string)\n"}, nil},
		{"runtime error", append(base, "turn.tools[99] == 'x'"), ExitInvalid,
			[]string{"error: evaluating: index out of bounds: 99"}, nil},
		{"unknown task", []string{"cel", "eval", "--pack", fx + "pack.yaml", "--task", "nope", "--trace", fx + "traces/task_create_release_blocker.good.ndjson", "true"},
			ExitInvalid, nil, []string{`has no task "nope"`}},
		{"no expression", base, ExitInvalid, nil, []string{"want exactly one EXPR"}},
		{"missing trace", []string{"cel", "eval", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker", "--trace", "nope.ndjson", "true"},
			ExitInvalid, nil, []string{"--trace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(context.Background(), tt.args, &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("Main(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.wantCode, out.String(), errOut.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("Main(%q) stdout = %q, want it to contain %q", tt.args, out.String(), w)
				}
			}
			if tt.name == "non-scoring type is not a check" && strings.Contains(out.String(), "as a check") {
				t.Errorf("Main(%q) stdout = %q, want no check line for a list", tt.args, out.String())
			}
			for _, w := range tt.wantErrOut {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("Main(%q) stderr = %q, want it to contain %q", tt.args, errOut.String(), w)
				}
			}
		})
	}
}

func TestCelEvalJSON(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	args := []string{"cel", "eval", "--format", "json", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker",
		"--trace", fx + "traces/task_create_release_blocker.good.ndjson", "turn.tool_calls.map(c, c.name)"}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), args, &out, &errOut); code != ExitOK {
		t.Fatalf("Main(%q) = %d, want 0\nstderr: %s", args, code, errOut.String())
	}
	var got struct {
		Value    []string `json:"value"`
		Type     string   `json:"type"`
		Cost     uint64   `json:"cost"`
		Estimate []uint64 `json:"estimate"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("Main(%q) printed %q: %v", args, out.String(), err)
	}
	if got.Type != "list(string)" || len(got.Value) == 0 || got.Cost == 0 || len(got.Estimate) != 2 || got.Cost > got.Estimate[1] {
		t.Errorf("Main(%q) = %+v, want a list(string) value with a cost within the estimate", args, got)
	}
}

// A double outside [0,1] is reported as the check error it would be, in JSON
// too, so a pack author sees it before putting it in a pack.
func TestCelEvalJSONCheckError(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	args := []string{"cel", "eval", "--format", "json", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker",
		"--trace", fx + "traces/task_create_release_blocker.good.ndjson", "1.5"}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), args, &out, &errOut); code != ExitOK {
		t.Fatalf("Main(%q) = %d, want 0\nstderr: %s", args, code, errOut.String())
	}
	var got struct {
		Value float64 `json:"value"`
		Check *struct {
			Score  float64 `json:"score"`
			Passed bool    `json:"passed"`
			Error  string  `json:"error"`
		} `json:"check"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("Main(%q) printed %q: %v", args, out.String(), err)
	}
	if got.Value != 1.5 || got.Check == nil || got.Check.Score != 0 || got.Check.Passed ||
		got.Check.Error != "check value outside [0,1]: 1.5" {
		t.Errorf("Main(%q) = %s, want value 1.5 and check {score 0, passed false, error \"check value outside [0,1]: 1.5\"}", args, out.String())
	}
}

// TestCelEvalCostWithinEstimate (issue 12 item 10): the cost `cel eval`
// prints lies within the estimate it prints, for expressions with constant
// lists and maps (which the planner could fold and leave uncharged) as for
// the others; on a turn larger than the estimate's sizes it says that only
// the limits bound the cost.
func TestCelEvalCostWithinEstimate(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	big := filepath.Join(t.TempDir(), "big.ndjson")
	var b strings.Builder
	for range 2100 {
		b.WriteString(`{"type": "runtime", "payload": {"event_type": "loop_iteration", "iteration": 1}}` + "\n")
	}
	if err := os.WriteFile(big, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	good := fx + "traces/task_create_release_blocker.good.ndjson"
	tests := []struct {
		expr, trace string
		fits        bool
	}{
		{"[1, 2, 3].map(x, x * 2)", good, true},
		{`{"a": 1}["a"] == 1`, good, true},
		{`in_order(turn.tools, ["company_task_create", "finalize_response"])`, good, true},
		{`size(turn.tools) in [0, 1, 2]`, good, true},
		{"turn.finalized && size(turn.tool_calls) > 0", good, true},
		{`turn.events.exists(e, e.type == "done")`, big, false},
	}
	for _, tt := range tests {
		args := []string{"cel", "eval", "--format", "json", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker",
			"--trace", tt.trace, tt.expr}
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), args, &out, &errOut); code != ExitOK {
			t.Fatalf("Main(%q) = %d, want 0\nstderr: %s", args, code, errOut.String())
		}
		var got struct {
			Cost     uint64    `json:"cost"`
			Estimate [2]uint64 `json:"estimate"`
			Fits     bool      `json:"fits_estimate"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("Main(%q) printed %q: %v", args, out.String(), err)
		}
		if got.Fits != tt.fits || tt.fits && (got.Cost < got.Estimate[0] || got.Cost > got.Estimate[1]) {
			t.Errorf("cel eval %q = cost %d, estimate %d..%d, fits_estimate %v; want fits_estimate %v and the cost within the estimate when it fits",
				tt.expr, got.Cost, got.Estimate[0], got.Estimate[1], got.Fits, tt.fits)
		}
		args = append(args[:2], args[4:]...) // text output
		out.Reset()
		Main(context.Background(), args, &out, &errOut)
		if says := strings.Contains(out.String(), "only the limits bound its cost"); says == tt.fits {
			t.Errorf("cel eval %q text = %q; want the oversized-turn note only when the turn does not fit", tt.expr, out.String())
		}
	}
}
