// Package scaffold writes a new scorer plugin module, as `assay plugins new`
// does: a go.mod that builds against the SDK source this assay came from, a
// scorer with one KPI written with the grading kit, a table test that also
// runs the conformance kit, a main, and a Makefile that builds, registers
// and syncs the plugin (docs/plugins.md, "Writing a plugin").
package scaffold
