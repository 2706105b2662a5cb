package companyos

// Snapshot is the Company OS state at one moment.
type Snapshot struct {
	Tasks      []Task        `json:"tasks"`
	Memory     []MemoryEntry `json:"memory"`
	CapturedAt string        `json:"captured_at,omitempty"`
}

// Task is one Company OS task.
type Task struct {
	ID            string   `json:"id"`
	Title         string   `json:"title"`
	Specification string   `json:"specification"`
	State         string   `json:"state"`
	OwnerPersona  string   `json:"owner_persona"`
	CheckedOutBy  string   `json:"checked_out_by"`
	Priority      *float64 `json:"priority"`
	DueAt         string   `json:"due_at"`
	CreatedAt     string   `json:"created_at"`
	ContextNotes  []Note   `json:"context_notes"`
}

// Note is one context note on a task: the stigmergic residue agents leave.
type Note struct {
	At    string `json:"at"`
	Actor string `json:"actor"`
	Text  string `json:"text"`
}

// MemoryEntry is one shared-memory entry.
type MemoryEntry struct {
	ID        string   `json:"id"`
	Scope     string   `json:"scope"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Tags      []string `json:"tags"`
	SummaryL0 string   `json:"summary_l0"`
	SummaryL1 string   `json:"summary_l1"`
	Kind      string   `json:"kind"`
	CreatedAt string   `json:"created_at"`
}
