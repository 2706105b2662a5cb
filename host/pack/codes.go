package pack

// Diagnostic codes the loader reports. They are stable: tools match on them.
const (
	CodeIO           = "pack.io"            // the file cannot be read
	CodeTooLarge     = "pack.too_large"     // the file is over MaxSize
	CodeEmpty        = "pack.empty"         // no YAML document
	CodeEncoding     = "pack.encoding"      // not UTF-8, or a control character
	CodeSyntax       = "pack.syntax"        // not YAML, several documents, a bad alias
	CodeAlias        = "pack.alias"         // aliases expand beyond the budget
	CodeDuplicateKey = "pack.duplicate_key" // a mapping key written twice
	CodeUnknownKey   = "pack.unknown_key"   // a key the pack format does not have
	CodeRequired     = "pack.required"      // a required key is missing
	CodeType         = "pack.type"          // a value of the wrong type
	CodeValue        = "pack.value"         // a value the schema rejects (pattern, length, const)
	CodeRange        = "pack.range"         // a number out of its range
	CodeWeights      = "pack.weights"       // a weight out of range, or the scoring weights do not sum to 1
	CodeDuplicate    = "pack.duplicate"     // a persona, tool or CEL check name listed twice
	CodeDupLabel     = "pack.duplicate_label"
	CodePersona      = "pack.persona"        // a task persona not in personas
	CodeUnknownScore = "pack.unknown_scorer" // not in the schema enum, or no installed plugin
	CodeUnknownKPI   = "pack.unknown_kpi"    // a KPI key the task's scorer does not declare
	CodeSchema       = "pack.schema"         // any other schema violation
)

// Limits on what the loader accepts.
const (
	// MaxSize is the largest pack file accepted; larger ones are refused
	// before parsing. Validating a pack takes about sixty times its size at
	// the peak (the YAML tree, the typed tree, its JSON form and the schema
	// validation are alive together), so a pack at the limit validates in
	// under 300 MB (docs/pack.md).
	MaxSize = 4 << 20
	// MaxDiagnostics caps the diagnostics returned for one pack.
	MaxDiagnostics = 100
	// maxAliases and maxAliasNodes bound alias expansion: the number of alias
	// dereferences and the number of nodes reached through them.
	maxAliases    = 10_000
	maxAliasNodes = 100_000
	// MaxAliasBytes bounds the text aliases add once expanded (the bytes of
	// the scalars and keys reached through them), so a pack, expanded, is at
	// most MaxSize + MaxAliasBytes of text (docs/pack.md).
	MaxAliasBytes = 4 << 20
)
