package packs

import (
	"embed"
	"io/fs"
)

// SchemaPath is the schema's path relative to the repository root.
const SchemaPath = "packs/schema/company_eval_pack.v1.json"

//go:embed schema/company_eval_pack.v1.json
var schemaJSON []byte

//go:embed *.yaml
var bundled embed.FS

// Schema returns a copy of the embedded company_eval_pack.v1.json.
func Schema() []byte {
	return append([]byte(nil), schemaJSON...)
}

// Bundled returns the bundled packs (example.yaml, support-desk.yaml, ...)
// as a read-only file system rooted at packs/.
func Bundled() fs.FS { return bundled }
