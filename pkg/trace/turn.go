package trace

import "github.com/assay-eval/assay/sdk"

// A parsed turn is what the host sends a scorer, so its types are the SDK's
// (package sdk documents the fields; docs/trace.md says how a trace fills
// them).
type (
	// Event is the compact form of one trace line that a derived Turn keeps.
	Event = sdk.Event
	// ToolCall is one tool invocation (one runtime tool_start).
	ToolCall = sdk.ToolCall
	// Turn is what a trace says about one task turn (docs/trace.md).
	Turn = sdk.Turn
)
