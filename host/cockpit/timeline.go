package cockpit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/assay-eval/assay/pkg/excerpt"
	"github.com/assay-eval/assay/pkg/trace"
)

// maxTimelineRows bounds the timeline a turn page shows; the rest is counted.
const maxTimelineRows = 500

// timelineView is a stored trace read back for the turn page: its events in
// order, each tool call with its arguments, then the answer.
type timelineView struct {
	Rows      []timelineRow
	Cut       int // events not shown (over maxTimelineRows)
	Answer    string
	Finalized bool
	Errors    []string
}

type timelineRow struct {
	Line             int
	Kind, Name, Args string
}

// timeline reads the turn's stored trace (docs/evidence.md) and returns it
// as a timeline, or a note saying why there is none.
func (c *Cockpit) timeline(r *http.Request, keptBy int64, sha string) (*timelineView, string) {
	if sha == "" {
		return nil, "No trace is stored with this turn (it was recorded before evidence was kept, or its input could not be read)."
	}
	rc, _, err := c.cfg.Store.OpenTrace(r.Context(), keptBy, sha)
	if err != nil {
		return nil, fmt.Sprintf("The stored trace %s could not be read: %v", shortSHA(sha), err)
	}
	defer rc.Close()
	turn, _, err := trace.Parse("trace "+shortSHA(sha), rc)
	if err != nil {
		return nil, fmt.Sprintf("The stored trace %s could not be parsed: %v", shortSHA(sha), err)
	}
	v := &timelineView{Answer: turn.Answer, Finalized: turn.Finalized, Errors: turn.ErrorMessages}
	calls := 0
	for _, e := range turn.Events {
		if len(v.Rows) == maxTimelineRows {
			v.Cut = len(turn.Events) - maxTimelineRows
			break
		}
		row := timelineRow{Line: e.Line, Kind: e.Type, Name: cmp.Or(e.Phase, e.EventType, e.Text)}
		if e.ToolName != "" {
			row.Name += " " + e.ToolName
		}
		if e.EventType == "tool_start" && calls < len(turn.ToolCalls) {
			b, _ := json.Marshal(turn.ToolCalls[calls].Args)
			row.Args, _ = excerpt.Bound(string(b))
			calls++
		}
		v.Rows = append(v.Rows, row)
	}
	return v, ""
}

// shortSHA is the first 12 characters of a sha256, as the pages show it.
func shortSHA(s string) string { return s[:min(12, len(s))] }
