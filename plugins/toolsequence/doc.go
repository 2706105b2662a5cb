// Package toolsequence is the built-in tool_sequence scorer: the turn called
// the required tools (tool_sequence_contains, the fraction called), exactly
// the listed sequence (tool_sequence_exact), the list in order with anything
// in between (tool_sequence_in_order), only tools of the task's catalog
// (no_hallucinated_tool_key) and each listed tool with its required argument
// keys (tool_args). Tool names match exactly.
//
// Failed sequence and catalog checks carry tool_missing; failed tool_args
// carries tool_wrong_args.
package toolsequence
