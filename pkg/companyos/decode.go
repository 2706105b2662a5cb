package companyos

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// UnmarshalJSON decodes a task, accepting its id as a JSON string or number
// (some Company OS deployments number their tasks).
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
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
	*t = Task(aux.plain)
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
