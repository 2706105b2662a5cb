// Package packs holds the bundled eval packs and the pack JSON schema,
// embedded so the binary carries them: the schema is what `assay pack
// validate` checks against unless --schema names another file.
package packs
