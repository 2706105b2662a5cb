package governance

import "time"

// Firing is one recorded firing of a kill criterion.
type Firing struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	Candidate   string     `json:"candidate"`
	RunID       int64      `json:"run_id"`
	Message     string     `json:"message"`
	FiredAt     time.Time  `json:"fired_at"`
	ClearedAt   *time.Time `json:"cleared_at,omitempty"`
	ClearedBy   string     `json:"cleared_by,omitempty"`
	ClearReason string     `json:"clear_reason,omitempty"`
}
