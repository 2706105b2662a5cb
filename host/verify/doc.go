// Package verify is the verification pipeline: it reads a harness run (a
// candidate directory or a turns file), parses each trace as it is needed,
// scores the turns in batches on the plugin host (composite after its
// upstream scorers), evaluates the pack's CEL checks in the host, turns the
// results into scores, and records each turn as it completes so an
// interrupted run resumes where it stopped.
package verify
