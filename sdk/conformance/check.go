package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// The checks, in the order Check runs them.
const (
	CheckDescribe      = "describe"        // Describe answers a valid description
	CheckScoresInRange = "scores_in_range" // every case scored, scores in [0,1]
	CheckDeclaredKPIs  = "declared_kpis"   // checks name only declared KPI keys
	CheckFailureTags   = "failure_tags"    // failed checks carry their KPI's tag, and it reaches the result
	CheckUnsetKPIs     = "unset_kpis"      // a task setting none of the KPI keys is not a pass
	CheckDeterministic = "deterministic"   // the same batch scores the same twice
	// CheckStreamedTextUnread runs only for a scorer that declares
	// no_streamed_text: sent the streamed text, as a host before SDK 1.2
	// does, it gives the results it gives without it.
	CheckStreamedTextUnread = "streamed_text_unread"
	// CheckToolArgsUnread runs only for a scorer that declares
	// no_tool_args: sent the tool calls' arguments, as a host before SDK
	// 1.3 does, it gives the results it gives without them.
	CheckToolArgsUnread = "tool_args_unread"
	// CheckToolArgsListed runs only for a scorer that marks a KPI
	// args_read (sdk.KPI.ArgsRead): sent only the arguments its tasks'
	// values list, as a host from SDK 1.4 does, it gives the results it
	// gives with every argument.
	CheckToolArgsListed = "tool_args_listed"
	CheckCancellation   = "cancellation" // a cancelled context returns promptly
	CheckConcurrency    = "concurrency"  // concurrent batches agree with a lone one
)

// Prompt is how long a call may take after its context is cancelled.
const Prompt = 5 * time.Second

// callTimeout bounds every call a check makes.
const callTimeout = time.Minute

// Result is how one check went.
type Result struct {
	Name     string   `json:"name"`
	Problems []string `json:"problems,omitempty"`
	Fix      string   `json:"fix,omitempty"` // what to change in the scorer, set when there are problems
	// Findings are what a check noticed that works but should change; they
	// do not fail it (OK).
	Findings []string `json:"findings,omitempty"`
}

// fixes says, per check, what a scorer author changes to pass it.
var fixes = map[string]string{
	CheckDescribe:           "make Describe return a snake_case id, a version, unique snake_case KPI keys with known value types (args_read only on a string_list_map) and known needs",
	CheckScoresInRange:      "return a result for every case with Result.Score and every Check.Score a number in [0,1] (never NaN); grade.Sheet clamps them",
	CheckDeclaredKPIs:       "name in Check.KPI only keys Describe declares, or declare the key",
	CheckFailureTags:        "give a failed check the FailureTag its KPI declares and copy it into Result.FailureTags; grade.Sheet does both from the description",
	CheckUnsetKPIs:          "when the task sets none of your KPI keys, score 0 with no passed check and say why in Result.Diagnostics (grade.Sheet does)",
	CheckDeterministic:      "derive the result only from the case: no clocks, randomness, map iteration order or state kept between calls",
	CheckCancellation:       "check ctx.Err() in Score (and in long loops) and return it once the context is done",
	CheckConcurrency:        "make Score safe for concurrent use: no unguarded shared state (run the tests with -race)",
	CheckDirectCancellation: "check ctx.Err() in Score (and in long loops) and return it once the context is done",
}

// OK reports whether the check found no problem.
func (r Result) OK() bool { return len(r.Problems) == 0 }

// Report is every check's result, in order.
type Report []Result

// OK reports whether every check passed.
func (r Report) OK() bool {
	for _, c := range r {
		if !c.OK() {
			return false
		}
	}
	return true
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

var knownTypes = map[sdk.ValueType]bool{
	sdk.Bool: true, sdk.Number: true, sdk.Integer: true, sdk.String: true,
	sdk.StringList: true, sdk.StringListMap: true, sdk.Any: true,
}

var knownNeeds = map[sdk.Need]bool{
	sdk.NeedTrace: true, sdk.NeedAnswer: true, sdk.NeedStateBefore: true, sdk.NeedStateAfter: true, sdk.NeedUpstream: true, sdk.NeedEvents: true,
	sdk.NeedNoStreamedText: true, sdk.NeedNoToolArgs: true,
}

// ValidateDescription returns every problem with d: the id and KPI keys
// snake_case, the version set, KPI keys unique with known value types, needs
// known, protocol 1 offered.
func ValidateDescription(d sdk.Description) []string {
	var p []string
	if !snakeCase.MatchString(string(d.ID)) {
		p = append(p, fmt.Sprintf("id %q is not snake_case", d.ID))
	}
	if d.Version == "" {
		p = append(p, "version is empty")
	}
	if len(d.Protocols) > 0 && !containsInt(d.Protocols, scorerpb.ProtocolVersion) {
		p = append(p, fmt.Sprintf("protocols %v do not include %d", d.Protocols, scorerpb.ProtocolVersion))
	}
	seen := map[string]bool{}
	for _, k := range d.KPIs {
		if !snakeCase.MatchString(k.Key) {
			p = append(p, fmt.Sprintf("KPI key %q is not snake_case", k.Key))
		}
		if seen[k.Key] {
			p = append(p, fmt.Sprintf("KPI key %q is declared twice", k.Key))
		}
		seen[k.Key] = true
		if !knownTypes[k.ValueType] {
			p = append(p, fmt.Sprintf("KPI key %q has unknown value type %q", k.Key, k.ValueType))
		}
		if k.ArgsRead && k.ValueType != sdk.StringListMap {
			p = append(p, fmt.Sprintf("KPI key %q is marked args_read but its value type is %q, not %q", k.Key, k.ValueType, sdk.StringListMap))
		}
	}
	for _, n := range d.Needs {
		if !knownNeeds[n] {
			p = append(p, fmt.Sprintf("unknown need %q", n))
		}
	}
	return p
}

// newResult is check name's result with its problems, and what to change
// when there are any.
func newResult(name string, problems []string) Result {
	r := Result{Name: name, Problems: problems}
	if len(problems) > 0 {
		r.Fix = fixes[name]
	}
	return r
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Check runs every conformance check against c. With no cases it scores the
// generic Cases built from the scorer's description. Cases are stripped to
// the parts the scorer declares, as the host does.
func Check(ctx context.Context, c Client, cases ...*sdk.Case) Report {
	var rep Report
	add := func(name string, problems []string) { rep = append(rep, newResult(name, problems)) }

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	d, err := c.Describe(cctx)
	cancel()
	if err != nil {
		add(CheckDescribe, []string{err.Error()})
		return rep
	}
	add(CheckDescribe, ValidateDescription(d))

	if len(cases) == 0 {
		cases = Cases(d)
	}
	sent := make([]*sdk.Case, len(cases))
	for i, cs := range cases {
		sent[i] = scorerpb.StripCase(d, cs)
	}

	first, err := score(ctx, c, sent)
	if err != nil {
		add(CheckScoresInRange, []string{err.Error()})
		return rep
	}
	add(CheckScoresInRange, rangeProblems(sent, first))
	add(CheckDeclaredKPIs, kpiProblems(d, sent, first))
	add(CheckFailureTags, tagProblems(d, sent, first))
	add(CheckUnsetKPIs, unsetProblems(d, sent, first))

	second, err := score(ctx, c, sent)
	if err != nil {
		add(CheckDeterministic, []string{"second call: " + err.Error()})
	} else {
		add(CheckDeterministic, diffProblems("repeat", sent, first, second))
	}
	if d.NeedsPart(sdk.NeedNoStreamedText) {
		add(CheckStreamedTextUnread, unreadProblems(ctx, c, d, cases, first, sdk.NeedNoStreamedText, "the streamed text", "Turn.StreamedText"))
	}
	if d.NeedsPart(sdk.NeedNoToolArgs) {
		add(CheckToolArgsUnread, unreadProblems(ctx, c, d, cases, first, sdk.NeedNoToolArgs, "the tool-call arguments", "ToolCall.Args"))
	} else if slices.ContainsFunc(d.KPIs, func(k sdk.KPI) bool { return k.ArgsRead }) {
		add(CheckToolArgsListed, listedProblems(ctx, c, d, sent, first))
	}

	add(CheckCancellation, cancelProblems(ctx, c, sent))
	add(CheckConcurrency, concurrencyProblems(ctx, c, sent, first))
	return rep
}

// unreadProblems scores cases as a host that does not know need (one
// that sends less: no_streamed_text, no_tool_args) strips them, the part
// it leaves out kept, and compares with first: a scorer that declares the
// need but reads the part (what, the field) would score differently
// without it, silently.
func unreadProblems(ctx context.Context, c Client, d sdk.Description, cases []*sdk.Case, first []batchrun.Outcome, need sdk.Need, what, field string) []string {
	old := d
	old.Needs = slices.DeleteFunc(slices.Clone(d.Needs), func(n sdk.Need) bool { return n == need })
	withPart := make([]*sdk.Case, len(cases))
	for i, cs := range cases {
		withPart[i] = scorerpb.StripCase(old, cs)
	}
	outs, err := score(ctx, c, withPart)
	if err != nil {
		return []string{"with " + what + ": " + err.Error()}
	}
	p := diffProblems("with "+what, withPart, first, outs)
	if len(p) > 0 {
		p = append(p, fmt.Sprintf("it declares %s but reads %s: drop the need, or stop reading %s", need, field, what))
	}
	return p
}

// listedProblems scores sent with only the tool-call arguments that d's
// args_read KPIs list in each task, as a host from SDK 1.4 sends them, and
// compares with first, scored with every argument: a scorer that reads an
// argument its listing leaves out would score differently, silently.
//
// Each case with tool calls whose task sets an args_read key is also
// scored with its task setting none, to which a host sends no argument at
// all: a scorer that reads arguments when its task lists none would
// otherwise pass.
func listedProblems(ctx context.Context, c Client, d sdk.Description, sent []*sdk.Case, first []batchrun.Outcome) []string {
	var unlisted []*sdk.Case
	for _, cs := range sent {
		if len(cs.Turn.ToolCalls) == 0 {
			continue
		}
		kpis := maps.Clone(cs.Task.KPIs)
		for _, k := range d.KPIs {
			if k.ArgsRead {
				delete(kpis, k.Key)
			}
		}
		if len(kpis) == len(cs.Task.KPIs) {
			continue
		}
		u := *cs
		u.ID, u.Task.KPIs = cs.ID+"_unlisted", kpis
		unlisted = append(unlisted, &u)
	}
	all, want := sent, first
	if len(unlisted) > 0 {
		more, err := score(ctx, c, unlisted)
		if err != nil {
			return []string{"with a task that lists no arguments: " + err.Error()}
		}
		all, want = append(slices.Clone(sent), unlisted...), append(slices.Clone(first), more...)
	}
	listed := make([]*sdk.Case, len(all))
	for i, cs := range all {
		listed[i] = scorerpb.ProjectArgs(d, cs)
	}
	outs, err := score(ctx, c, listed)
	if err != nil {
		return []string{"with only the listed arguments: " + err.Error()}
	}
	p := diffProblems("with only the listed arguments", listed, want, outs)
	if len(p) > 0 {
		p = append(p, "it marks a KPI args_read but reads tool-call arguments that KPI's value does not list: list them, or drop args_read")
	}
	return p
}

func score(ctx context.Context, c Client, cases []*sdk.Case) ([]batchrun.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	outs, err := c.Score(ctx, cases)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(cases) {
		return nil, fmt.Errorf("%d outcomes for %d cases", len(outs), len(cases))
	}
	return outs, nil
}

func unit(x float64) bool { return !math.IsNaN(x) && x >= 0 && x <= 1 }

func rangeProblems(cases []*sdk.Case, outs []batchrun.Outcome) []string {
	var p []string
	for i, o := range outs {
		id := cases[i].ID
		if o.Err != nil {
			p = append(p, fmt.Sprintf("case %q: scorer failed: %v", id, o.Err))
			continue
		}
		if !unit(o.Result.Score) {
			p = append(p, fmt.Sprintf("case %q: score %v is not in [0,1]", id, o.Result.Score))
		}
		for _, ch := range o.Result.Checks {
			if !unit(ch.Score) {
				p = append(p, fmt.Sprintf("case %q: check %s score %v is not in [0,1]", id, ch.KPI, ch.Score))
			}
		}
	}
	return p
}

func kpiProblems(d sdk.Description, cases []*sdk.Case, outs []batchrun.Outcome) []string {
	var p []string
	for i, o := range outs {
		if o.Err != nil {
			continue
		}
		for _, ch := range o.Result.Checks {
			if !d.Declares(ch.KPI) && !fromUpstream(d, cases[i], ch.KPI) {
				p = append(p, fmt.Sprintf("case %q: check names undeclared KPI key %q", cases[i].ID, ch.KPI))
			}
		}
	}
	return p
}

// fromUpstream reports whether a scorer that needs upstream results (such as
// composite, which passes its upstream checks on) may name KPI key k: some
// upstream result of case c has a check of k.
func fromUpstream(d sdk.Description, c *sdk.Case, k string) bool {
	if !d.NeedsPart(sdk.NeedUpstream) {
		return false
	}
	for _, up := range c.Upstream {
		for _, ch := range up.Result.Checks {
			if ch.KPI == k {
				return true
			}
		}
	}
	return false
}

// diffProblems compares two runs of the same batch by their JSON.
func diffProblems(what string, cases []*sdk.Case, a, b []batchrun.Outcome) []string {
	var p []string
	for i := range a {
		ja, jb := outcomeJSON(a[i]), outcomeJSON(b[i])
		if ja != jb {
			p = append(p, fmt.Sprintf("case %q: %s gave %s, first call gave %s", cases[i].ID, what, jb, ja))
		}
	}
	return p
}

func outcomeJSON(o batchrun.Outcome) string {
	if o.Err != nil {
		return "error: " + o.Err.Error()
	}
	b, err := json.Marshal(o.Result)
	if err != nil {
		return "unencodable result: " + err.Error()
	}
	return string(b)
}

// cancelProblems checks that a call with a cancelled context, and a call
// cancelled while a large batch is in flight, both return promptly and do not
// report success for cases they could not have scored.
func cancelProblems(ctx context.Context, c Client, cases []*sdk.Case) []string {
	var p []string
	pre, cancel := context.WithCancel(ctx)
	cancel()
	var (
		outs []batchrun.Outcome
		err  error
	)
	if msg := returnsPromptly(func() { outs, err = c.Score(pre, cases) }); msg != "" {
		p = append(p, "already cancelled context: "+msg)
	} else if err == nil {
		for i, o := range outs {
			if o.Err == nil && i < len(cases) {
				p = append(p, fmt.Sprintf("already cancelled context: case %q was reported as scored", cases[i].ID))
				break
			}
		}
	}
	big := make([]*sdk.Case, 0, 64*len(cases))
	for i := 0; i < 64; i++ {
		for _, cs := range cases {
			cp := *cs
			cp.ID = fmt.Sprintf("%s#%d", cs.ID, i)
			big = append(big, &cp)
		}
	}
	mid, cancel := context.WithCancel(ctx)
	time.AfterFunc(time.Millisecond, cancel)
	if err := returnsPromptly(func() { _, _ = c.Score(mid, big) }); err != "" {
		p = append(p, "context cancelled during a batch: "+err)
	}
	cancel()
	return p
}

func returnsPromptly(f func()) string {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return ""
	case <-time.After(Prompt):
		return fmt.Sprintf("did not return within %v", Prompt)
	}
}

// concurrencyProblems runs the batch from several goroutines at once; each
// must agree with the lone first call.
func concurrencyProblems(ctx context.Context, c Client, cases []*sdk.Case, want []batchrun.Outcome) []string {
	const callers = 8
	var (
		mu sync.Mutex
		p  []string
		wg sync.WaitGroup
	)
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := score(ctx, c, cases)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				p = append(p, fmt.Sprintf("concurrent call %d: %v", g, err))
				return
			}
			p = append(p, diffProblems(fmt.Sprintf("concurrent call %d", g), cases, want, got)...)
		}()
	}
	wg.Wait()
	return p
}

// tagProblems finds failure tags that go astray: a failed check whose tag
// its KPI does not declare, and a failed check of a KPI that declares a tag
// while the result's FailureTags lack it (the host reads only those).
func tagProblems(d sdk.Description, cases []*sdk.Case, outs []batchrun.Outcome) []string {
	declared := map[string]string{}
	for _, k := range d.KPIs {
		declared[k.Key] = k.FailureTag
	}
	var p []string
	for i, o := range outs {
		if o.Err != nil {
			continue
		}
		for _, ch := range o.Result.Checks {
			want, ok := declared[ch.KPI]
			if ch.Passed || !ok {
				continue
			}
			if ch.FailureTag != "" && ch.FailureTag != want {
				p = append(p, fmt.Sprintf("case %q: failed check %s carries failure tag %q, but KPI %s declares %q",
					cases[i].ID, ch.KPI, ch.FailureTag, ch.KPI, want))
			}
			if want != "" && !slices.Contains(o.Result.FailureTags, want) {
				p = append(p, fmt.Sprintf("case %q: check %s failed, but its declared failure tag %q is not in Result.FailureTags %q",
					cases[i].ID, ch.KPI, want, o.Result.FailureTags))
			}
		}
	}
	return p
}

// unsetProblems finds a pass given to a task that sets none of the KPI keys
// the scorer declares: nothing was checked, so it must not pass.
func unsetProblems(d sdk.Description, cases []*sdk.Case, outs []batchrun.Outcome) []string {
	if len(d.KPIs) == 0 {
		return nil
	}
	var p []string
	for i, o := range outs {
		if o.Err != nil || setsAny(d, cases[i]) {
			continue
		}
		passed := 0
		for _, ch := range o.Result.Checks {
			if ch.Passed {
				passed++
			}
		}
		if o.Result.Score > 0 || passed > 0 {
			p = append(p, fmt.Sprintf("case %q: the task sets none of the KPI keys, yet scored %v with %d passed checks",
				cases[i].ID, o.Result.Score, passed))
		}
	}
	return p
}

func setsAny(d sdk.Description, c *sdk.Case) bool {
	for _, k := range d.KPIs {
		if _, ok := c.Task.KPIs[k.Key]; ok {
			return true
		}
	}
	return false
}
