// Package pack loads company eval packs: YAML read into a tree whose every
// value keeps its line:col (from yaml.v3's yaml.Node, or for plain task
// blocks by a reader of its own), validated against the pack JSON schema, then
// checked against the load rules of docs/pack.md. Every problem is
// returned at once as a diag.List, sorted and capped, with stable codes
// (Code* constants).
//
// Load and Parse are the entry points. Options carry what a check needs
// beyond the file: the schema in use (EmbeddedSchema, or LoadSchema for
// --schema), the installed scorers' descriptions for the KPI-key rules, and
// Checks (such as the CEL compiler) that run on a pack that decoded cleanly.
// Hostile input (not UTF-8, tabs, duplicate keys, alias bombs, several
// documents, files over MaxSize) gets a positioned diagnostic, never a panic.
package pack
