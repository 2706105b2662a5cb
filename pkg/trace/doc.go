// Package trace reads the harness's NDJSON turn traces (one JSON object a line)
// and derives the turn a scorer sees: tool calls, the answer, finalization,
// errors, phases. It also computes the harness's own process score.
package trace
