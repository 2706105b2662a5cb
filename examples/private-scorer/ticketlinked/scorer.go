package ticketlinked

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/grade"
)

// ID is the scorer's ID: spelled the same in the manifest, the pack YAML, the
// schema enum, the DB CHECK and the binary name (assay-scorer-ticket_linked).
const ID sdk.ID = "ticket_linked"

// KPI keys.
const (
	// KeyLinked (bool): whether the answer cites the ID of a task that exists
	// in state_after. The check passes when that matches the wanted value.
	KeyLinked = "ticket_linked"
	// KeyPrefix (string): every task ID the answer cites must start with this
	// prefix (e.g. "REL-"), and each ID with this prefix that the answer
	// mentions must exist in state_after.
	KeyPrefix = "ticket_prefix"
)

// FailureTag is the tag a failed check carries: the answer is not grounded
// in the company's state.
const FailureTag = "ungrounded_answer"

func description() sdk.Description {
	return sdk.Description{
		ID:      ID,
		Version: "0.1.0",
		KPIs: []sdk.KPI{
			{Key: KeyLinked, ValueType: sdk.Bool, FailureTag: FailureTag,
				Description: "the answer cites the id of a task that exists in state_after (true) or cites none (false)"},
			{Key: KeyPrefix, ValueType: sdk.String, FailureTag: FailureTag,
				Description: "the cited task ids start with this prefix, and every id with the prefix in the answer exists"},
		},
		Needs: []sdk.Need{sdk.NeedAnswer, sdk.NeedStateAfter},
	}
}

// scorer keeps each snapshot's task ID set: a batch shares its snapshots, so
// the set is built once per batch, not once per case.
type scorer struct {
	ids *sdk.SnapshotCache[map[string]string]
}

var _ sdk.Scorer = scorer{}

// New returns the ticket_linked scorer.
func New() sdk.Scorer { return scorer{ids: new(sdk.SnapshotCache[map[string]string])} }

// Describe implements sdk.Scorer.
func (scorer) Describe() sdk.Description { return description() }

// Score implements sdk.Scorer. The grade.Sheet reads each KPI by its type,
// gives a failed check the tag its KPI declares, averages the checks and
// gathers the failure tags into the result.
func (s scorer) Score(ctx context.Context, c *sdk.Case) (*sdk.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sh := grade.NewSheet(description(), &c.Task)
	var ids map[string]string // lowercased id -> id as stored
	if c.StateAfter == nil {
		sh.Diag("no state_after snapshot: cannot tell which tasks exist")
		ids = map[string]string{}
	} else {
		ids = s.ids.Get(c.StateAfter, taskIDs)
	}
	cited := citedIDs(c.Turn.Answer, ids)
	if want, ok := sh.Bool(KeyLinked); ok {
		linkedCheck(sh, want, cited)
	}
	if prefix, ok := sh.String(KeyPrefix); ok {
		prefixCheck(sh, prefix, c.Turn.Answer, cited, ids)
	}
	return sh.Result(), nil
}

func linkedCheck(sh *grade.Sheet, want bool, cited []string) {
	switch {
	case want && len(cited) > 0:
		sh.Pass(KeyLinked, fmt.Sprintf("the answer cites existing task %s", strings.Join(cited, ", ")), cited...)
	case want:
		sh.Fail(KeyLinked, "the answer cites no task that exists in state_after")
	case len(cited) == 0:
		sh.Pass(KeyLinked, "the answer cites no task, as wanted")
	default:
		sh.Fail(KeyLinked, fmt.Sprintf("the answer cites task %s, want none", strings.Join(cited, ", ")), cited...)
	}
}

func prefixCheck(sh *grade.Sheet, prefix, answer string, cited []string, ids map[string]string) {
	var good, wrongPrefix []string
	for _, id := range cited {
		if strings.HasPrefix(strings.ToLower(id), strings.ToLower(prefix)) {
			good = append(good, id)
		} else {
			wrongPrefix = append(wrongPrefix, id)
		}
	}
	var invented []string
	for _, tok := range tokens(answer) {
		if len(tok) > len(prefix) && strings.HasPrefix(strings.ToLower(tok), strings.ToLower(prefix)) {
			if _, ok := ids[strings.ToLower(tok)]; !ok && !slices.Contains(invented, tok) {
				invented = append(invented, tok)
			}
		}
	}
	evidence := append(append([]string{}, good...), invented...)
	switch {
	case len(good) > 0 && len(invented) == 0 && len(wrongPrefix) == 0:
		sh.Pass(KeyPrefix, fmt.Sprintf("cites %s, every id starting with %q exists", strings.Join(good, ", "), prefix), evidence...)
	case len(good) > 0:
		sh.Score(KeyPrefix, float64(len(good))/float64(len(good)+len(invented)+len(wrongPrefix)),
			fmt.Sprintf("cites %s; also %s", strings.Join(good, ", "), problems(prefix, invented, wrongPrefix)), evidence...)
	default:
		sh.Fail(KeyPrefix, fmt.Sprintf("cites no existing task starting with %q; %s", prefix, problems(prefix, invented, wrongPrefix)), evidence...)
	}
}

func problems(prefix string, invented, wrongPrefix []string) string {
	var out []string
	if len(invented) > 0 {
		out = append(out, "ids not in state_after: "+strings.Join(invented, ", "))
	}
	if len(wrongPrefix) > 0 {
		out = append(out, fmt.Sprintf("ids without prefix %q: %s", prefix, strings.Join(wrongPrefix, ", ")))
	}
	if len(out) == 0 {
		return "no other ids"
	}
	return strings.Join(out, "; ")
}

// taskIDs maps each task ID of s, lowercased, to the ID as stored.
func taskIDs(s *sdk.Snapshot) map[string]string {
	m := make(map[string]string, len(s.Tasks))
	for _, t := range s.Tasks {
		if t.ID != "" {
			m[strings.ToLower(t.ID)] = t.ID
		}
	}
	return m
}

// citedIDs returns the existing task IDs the answer mentions as whole
// tokens, in the order first mentioned.
func citedIDs(answer string, ids map[string]string) []string {
	var out []string
	for _, tok := range tokens(answer) {
		if id, ok := ids[strings.ToLower(tok)]; ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// tokens splits text into candidate IDs: runs of letters, digits, '-' and
// '_', with leading and trailing '-' and '_' dropped.
func tokens(text string) []string {
	f := strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	out := f[:0]
	for _, t := range f {
		if t = strings.Trim(t, "-_"); t != "" {
			out = append(out, t)
		}
	}
	return out
}
