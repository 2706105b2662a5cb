package pack

// Schema is a compiled pack JSON schema. (The pack loader's owner fills this in.)
type Schema struct{}
