// Package diag carries positioned diagnostics: problems in a file a person
// wrote (a pack, a trace, a snapshot), each with a file:line:col, a stable code
// and a message. A List collects every problem of one pass, sorts them by
// position and renders them with the source line and a caret.
package diag
