// Package state reads Company OS state snapshots (docs/trace.md): from
// files a person wrote or a harness recorded, with a positioned diagnostic
// (file:line:col) for anything malformed, and captured from a live Company OS
// API over HTTP with a timeout and bounded retries.
package state
