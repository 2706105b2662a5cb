// Package builtin is the set of assay's built-in scorers, as a value: the
// host uses it for --in-process scoring and as the catalog of built-in KPI
// keys. There is no registry; callers take the slice.
package builtin
