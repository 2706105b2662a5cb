package sdk

import (
	"encoding/json"
	"testing"
)

func TestDecodeIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     string
		task    string
		memory  string
		wantErr bool
	}{
		{"strings", `{"tasks":[{"id":"t1","title":"a"}],"memory":[{"id":"m1"}]}`, "t1", "m1", false},
		{"numbers kept as written", `{"tasks":[{"id":42,"title":"a"}],"memory":[{"id":1.5e3}]}`, "42", "1.5e3", false},
		{"null", `{"tasks":[{"id":null,"title":"a"}],"memory":[{}]}`, "", "", false},
		{"bool is an error", `{"tasks":[{"id":true,"title":"a"}],"memory":[]}`, "", "", true},
		{"other fields still checked", `{"tasks":[{"id":1,"title":5}],"memory":[]}`, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s Snapshot
			err := json.Unmarshal([]byte(tt.src), &s)
			if (err != nil) != tt.wantErr {
				t.Fatalf("json.Unmarshal(%s) = %v, want error %v", tt.src, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if s.Tasks[0].ID != tt.task || s.Tasks[0].Title != "a" || s.Memory[0].ID != tt.memory {
				t.Errorf("json.Unmarshal(%s) = task %q %q, memory %q; want %q, %q", tt.src, s.Tasks[0].ID, s.Tasks[0].Title, s.Memory[0].ID, tt.task, tt.memory)
			}
		})
	}
}
