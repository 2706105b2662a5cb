package scorerpb

import (
	"bytes"
	"encoding/json"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/assay-eval/assay/sdk"
)

// A scorer that marks a StringListMap KPI ArgsRead reads no tool-call
// argument but those its task's value of that key lists (tool name ->
// argument keys), so a host sends only those: ProjectArgs says which, and
// MarshalCasesFor writes them without copying a map. docs/protocol.md
// ("Needs").

// argsReadKeys returns the keys of d's StringListMap KPIs marked ArgsRead;
// nil when there are none, or when d declares NeedNoToolArgs (then no
// argument is sent at all). ArgsRead on a KPI of another type is ignored:
// every argument is sent (conformance reports it).
func argsReadKeys(d sdk.Description) []string {
	if d.NeedsPart(sdk.NeedNoToolArgs) {
		return nil
	}
	var keys []string
	for _, k := range d.KPIs {
		if k.ArgsRead && k.ValueType == sdk.StringListMap {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

// argListing is the arguments a case's scorer reads: for each listed tool,
// its argument keys, sorted and without repeats. all is set (and tools
// nil) when some value cannot be read as a tool -> keys object: then every
// argument is sent.
type argListing struct {
	tools map[string][]string
	all   bool
	// few is tools as a list when it has at most maxScanned tools: the
	// encoder looks up every tool call's name, and comparing a few names
	// is cheaper than hashing one.
	few []listedTool
}

// listedTool is one tool of a listing and its argument keys.
type listedTool struct {
	name string
	keys []string
}

// maxScanned is the most tools a listing finds by comparing names one by
// one rather than in its map.
const maxScanned = 8

// keysOf returns the argument keys listed for tool, and whether it is
// listed at all.
func (l *argListing) keysOf(tool string) ([]string, bool) {
	if len(l.tools) > maxScanned {
		ks, ok := l.tools[tool]
		return ks, ok
	}
	for i := range l.few {
		if l.few[i].name == tool {
			return l.few[i].keys, true
		}
	}
	return nil, false
}

// listArgs reads t's values of the KPI keys keys into the arguments they
// list together. A task that sets none of them lists nothing.
func listArgs(t *sdk.Task, keys []string) argListing {
	l := argListing{tools: map[string][]string{}}
	for _, k := range keys {
		raw, ok := t.KPIs[k]
		if !ok {
			continue
		}
		var m map[string][]string
		if v := bytes.TrimLeft(raw, " \t\r\n"); len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &m) != nil {
			return argListing{all: true}
		}
		for tool, ks := range m {
			l.tools[tool] = append(l.tools[tool], ks...)
		}
	}
	for tool, ks := range l.tools {
		slices.Sort(ks)
		l.tools[tool] = slices.Compact(ks)
	}
	if len(l.tools) <= maxScanned {
		for tool, ks := range l.tools {
			l.few = append(l.few, listedTool{tool, ks})
		}
	}
	return l
}

// ReadsListedArgs reports whether a scorer described by d is sent only
// the tool-call arguments its tasks list (sdk.KPI.ArgsRead): then a call
// sent without arguments may as well have nil Args (Decoder.NoToolArgs).
func ReadsListedArgs(d sdk.Description) bool { return len(argsReadKeys(d)) > 0 }

// ProjectArgs returns c as a host sends it to a scorer described by d: when
// d marks KPIs ArgsRead (sdk.KPI), a shallow copy whose tool calls carry
// only the arguments c's task lists under those keys (a call of a tool
// not listed has nil Args); otherwise, or when a listing cannot be read,
// c itself. MarshalCasesFor writes the same bytes without the copy.
func ProjectArgs(d sdk.Description, c *sdk.Case) *sdk.Case {
	keys := argsReadKeys(d)
	if len(keys) == 0 || len(c.Turn.ToolCalls) == 0 {
		return c
	}
	l := listArgs(&c.Task, keys)
	if l.all {
		return c
	}
	out := *c
	out.Turn.ToolCalls = make([]sdk.ToolCall, len(c.Turn.ToolCalls))
	for i, tc := range c.Turn.ToolCalls {
		out.Turn.ToolCalls[i] = sdk.ToolCall{Name: tc.Name}
		ks, listed := l.tools[tc.Name]
		if !listed {
			continue
		}
		m := map[string]any{}
		for _, k := range ks {
			if v, ok := tc.Args[k]; ok {
				m[k] = v
			}
		}
		out.Turn.ToolCalls[i].Args = m
	}
	return &out
}

// listsNothing lists no tool: no argument is sent. Never written.
var listsNothing = &argListing{tools: map[string][]string{}}

// listings reads each distinct listing of a batch once: the cases of a
// batch mostly share their tasks' values.
type listings struct {
	keys []string
	seen map[string]*argListing // by the value when there is one key, else by every value
}

func (ls *listings) of(t *sdk.Task) *argListing {
	if len(ls.keys) == 1 {
		raw, ok := t.KPIs[ls.keys[0]]
		if !ok {
			return listsNothing
		}
		return ls.read(raw, t)
	}
	var id []byte
	for _, k := range ls.keys {
		raw, ok := t.KPIs[k]
		if !ok {
			id = append(id, 0)
			continue
		}
		id = protowire.AppendBytes(append(id, 1), raw)
	}
	return ls.read(id, t)
}

// read returns the listing of t, whose values id identifies: from an
// earlier task with the same values, or read now.
func (ls *listings) read(id []byte, t *sdk.Task) *argListing {
	if l, ok := ls.seen[string(id)]; ok {
		return l
	}
	l := listArgs(t, ls.keys)
	ls.seen[string(id)] = &l
	return &l
}

// appendListedArgs appends the arguments field (2) of a tool call with
// arguments args and listed keys ks: the entries of args under ks, the
// bytes AppendArgs writes for a map of just those, nothing when there
// are none. Each key is looked up once; ks is sorted, so the entries are
// in AppendArgs's order.
func appendListedArgs(b []byte, args map[string]any, ks []string) ([]byte, error) {
	var small [8]entry
	present := small[:0]
	for _, k := range ks {
		if v, ok := args[k]; ok {
			present = append(present, entry{k, v})
		}
	}
	if len(present) == 0 {
		return b, nil
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return nested(b, func(b []byte) ([]byte, error) {
		at := len(b)
		if b, ok := appendObject(b, present); ok {
			return b, nil
		}
		return appendSubset(b[:at], present)
	})
}

// appendSubset appends the entries as AppendArgs writes a map of them:
// for the keys and values it does not write directly.
func appendSubset(b []byte, entries []entry) ([]byte, error) {
	m := make(map[string]any, len(entries))
	for _, e := range entries {
		m[e.k] = e.v
	}
	return AppendArgs(b, m)
}
