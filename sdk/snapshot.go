package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Snapshot is the Company OS state at one moment.
type Snapshot struct {
	Tasks      []StateTask   `json:"tasks"`
	Memory     []MemoryEntry `json:"memory"`
	CapturedAt string        `json:"captured_at,omitempty"`
}

// StateTask is one Company OS task in a snapshot.
type StateTask struct {
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

// UnmarshalJSON decodes a task, accepting its id as a JSON string or number
// (some Company OS deployments number their tasks).
func (t *StateTask) UnmarshalJSON(b []byte) error {
	type plain StateTask
	var aux struct {
		plain
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	id, err := idString(aux.ID)
	if err != nil {
		return fmt.Errorf("task id: %w", err)
	}
	*t = StateTask(aux.plain)
	t.ID = id
	return nil
}

// UnmarshalJSON decodes a memory entry, accepting its id as a JSON string or
// number.
func (m *MemoryEntry) UnmarshalJSON(b []byte) error {
	type plain MemoryEntry
	var aux struct {
		plain
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	id, err := idString(aux.ID)
	if err != nil {
		return fmt.Errorf("memory entry id: %w", err)
	}
	*m = MemoryEntry(aux.plain)
	m.ID = id
	return nil
}

// idString reads an id given as a JSON string, number or null; a number
// keeps its literal text (42 -> "42").
func idString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("want a string or a number, got %s", raw)
	}
	return n.String(), nil
}
