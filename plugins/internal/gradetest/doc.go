// Package gradetest holds what the built-in scorers' tests share: KPI maps
// written as Go values, and the comparison of a result against a table row.
package gradetest
