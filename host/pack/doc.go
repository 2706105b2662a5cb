// Package pack loads company eval packs: YAML walked as yaml.Node so every
// value keeps its line:col, validated against the pack JSON schema, then
// checked against the semantic rules of DESIGN.md section 2. Every problem is
// returned at once as a diag.List.
package pack
