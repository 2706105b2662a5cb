// Package invariant checks the three-place scorer invariant: the scorer IDs
// in the plugin manifest, in the pack schema's scorer enum and in the
// database's CHECK constraint must be the same set. Check is a pure function
// over the three sets; it reports every difference, by place, and the
// command that fixes it.
package invariant
