// Package grade is the grading kit for scorer authors, used by the built-in
// scorers too. A Sheet records the checks of one case:
//
//   - KPI values are read by their declared type (Bool, Number, Integer,
//     String, StringList, StringListMap); a value of the wrong type becomes
//     a diagnostic such as "kpi answer_keywords: want a list of strings, got
//     a string ("x")" and a failed check, never a panic or a silent pass.
//   - A failed check carries the failure tag its KPI declares in the
//     description, so Describe and the checks cannot disagree.
//   - Result averages the checks into the score and gathers the sorted,
//     unique failure tags of the failed checks into Result.FailureTags, the
//     only tags the host reads; a case with no check scores 0 and says why.
//
// NewScorer turns a description and the checks of one case into an
// sdk.Scorer that also honours a cancelled context.
package grade
