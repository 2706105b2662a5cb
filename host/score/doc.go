// Package score is assay's scoring math (docs/scoring.md): the KPI score
// and turn score of one turn, the failure tags the host derives from a turn,
// a candidate's summary with its slices and promotion gates, and the Pareto
// frontier of candidates. Everything here is a pure function of its inputs.
//
// Floats are compared after rounding to 9 decimals, so a value that equals a
// threshold in decimal (0.75, 90) meets it whatever its binary form.
package score
