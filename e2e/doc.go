// Package e2e holds end-to-end tests and benchmarks that build the real assay
// binary and the real plugins once and run them as a user would: verify on
// the bundled example runs, resume after a kill, and the throughput and
// memory numbers of `make bench`.
package e2e
