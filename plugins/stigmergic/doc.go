// Package stigmergic is the built-in stigmergic scorer: the turn left
// coordination residue in the Company OS graph. note_written checks that a
// context note was added to a task during the turn (a note in state_after
// that is not in state_before, compared per task by at, actor and text;
// without state_before, a note whose at falls within the turn's window) or
// that a tool whose name contains "stigmergic" was called; note_keywords is
// the fraction of the listed keywords found in the new notes' text.
//
// Failed checks carry state_not_changed.
package stigmergic
