// Package report writes a verification (verify.Report and the turns of each
// candidate) in the formats CI systems read: JUnit XML and GitHub-flavoured
// Markdown (docs/ci.md).
package report
