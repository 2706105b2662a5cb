// Package jsonpos is assay's one reader for JSON a person writes: a results
// file, a turns line, a state snapshot, a task-eval file, an eval input, the
// plugin manifest, the pack schema. It parses a JSON text into a tree of
// Nodes that keep the byte range each value came from, so every later
// problem (a wrong type, an unknown or duplicate key, a bad value) can be
// reported at the line and column a person would look at.
//
// Parse reads exactly one JSON value. Malformed input is an *Error at the
// offending byte with encoding/json's wording; Options bound the nesting
// depth (DefaultMaxDepth), reject duplicate keys when asked, and can keep
// deep values as unbuilt spans (BuildDepth) when only their place matters,
// as for a turns line holding a whole trace. Decode parses and then decodes
// into a Go value as encoding/json does, but strictly (a key naming no field
// is an error at the key) and with every error positioned. ReadFile reads a
// file up to a size limit (ErrTooLarge beyond it).
//
// Source turns offsets into diag positions through diag.OffsetPos, also for
// a text that starts inside a larger file (Base) or on a later line of it
// (Line), the way cel-go has one Source for every input.
//
// The trace reader (pkg/trace) keeps its own scanner: it runs on every event
// of every turn and needs no tree.
package jsonpos
