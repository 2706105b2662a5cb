// Package grade is the check bookkeeping the built-in scorers share: KPI
// values read from a task by their declared type (a value of the wrong type
// becomes a diagnostic and a failed check, never a panic), case-insensitive
// keyword matching, and the assembly of a Result: the mean of the checks and
// the sorted, unique failure tags of the failed ones. NewScorer turns a
// description and the checks of one case into an sdk.Scorer.
package grade
