package companyos

import "github.com/assay-eval/assay/sdk"

// A snapshot is sent to scorers as it is read, so its types are the SDK's
// (package sdk documents the fields and decodes ids given as numbers).
type (
	// Snapshot is the Company OS state at one moment.
	Snapshot = sdk.Snapshot
	// Task is one Company OS task.
	Task = sdk.StateTask
	// Note is one context note on a task.
	Note = sdk.Note
	// MemoryEntry is one shared-memory entry.
	MemoryEntry = sdk.MemoryEntry
)
