// Package memorygrounding is the built-in memory_grounding scorer: the turn
// consulted Company OS memory (memory_tool_called: a tool whose name contains
// "memory", or one of memory_tools) and its answer is grounded in a memory
// entry of state_after (grounded_in_memory: some entry shares at least
// min_overlap, default 3, distinct content words with the answer, with
// partial credit found/min_overlap for the best entry) and contains the
// required terms (answer_keywords).
//
// A content word is a run of letters and digits, lowercased, of four or more
// runes, that is not an English stop-word. The memory of a snapshot is indexed
// once (an inverted index word -> entries, kept per snapshot by the scorer) and
// shared by every case of the batch that carries the same snapshot.
//
// Failed memory_tool_called and grounded_in_memory checks carry
// ungrounded_answer; answer_keywords carries no tag.
package memorygrounding
