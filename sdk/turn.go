package sdk

// Event is the compact form of one trace line that a derived Turn keeps:
// enough for CEL checks and scorers to look at the order of what happened,
// without holding the raw lines of a whole run in memory.
type Event struct {
	Line      int    `json:"line"`                 // 1-based line number in the trace
	Type      string `json:"type"`                 // the line's "type" ("raw" for a line that is not JSON)
	Phase     string `json:"phase,omitempty"`      // for "phase" events
	EventType string `json:"event_type,omitempty"` // payload.event_type for runtime events
	ToolName  string `json:"tool_name,omitempty"`  // payload.tool_name for runtime events
	Text      string `json:"text,omitempty"`       // for "raw" events: the line's first 256 bytes
}

// ToolCall is one tool invocation (one runtime tool_start).
type ToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"` // payload.tool_input or payload.args; empty map when absent, nil for a scorer that declares NeedNoToolArgs
}

// Turn is what a trace says about one task turn (docs/trace.md).
type Turn struct {
	Events        []Event    `json:"events"`
	ToolCalls     []ToolCall `json:"tool_calls"`
	ToolEvents    int        `json:"tool_events"` // tool_start + tool_end + sub_agent_spawned
	SubAgents     int        `json:"sub_agents"`  // sub_agent_spawned events
	Answer        string     `json:"answer"`      // final_answer string, else done reply, else text deltas
	StreamedText  string     `json:"streamed_text"`
	TextLen       int        `json:"text_len"` // runes of streamed text including reply and final answer, as the harness counts
	Finalized     bool       `json:"finalized"`
	Error         bool       `json:"error"`
	ErrorMessages []string   `json:"error_messages"`
	Phases        []string   `json:"phases"`
	LoopIters     int        `json:"loop_iters"`
	TaskID        string     `json:"task_id,omitempty"`     // done.task_id
	TaskAction    string     `json:"task_action,omitempty"` // done.task_action
}
