package scorerpb

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/assay-eval/assay/sdk"
)

// MarshalCases appends the protobuf bytes of the ScoreRequest that
// EncodeScoreRequest(cases) builds, without building it: the host's half
// of UnmarshalCases. Snapshots are deduplicated by pointer, as there; KPI
// map entries are written in key order. docs/protocol.md ("Performance").
func MarshalCases(buf []byte, cases []*sdk.Case) ([]byte, error) {
	return marshalCases(buf, cases, nil)
}

// MarshalCasesFor is MarshalCases for a scorer described by d: of each
// case's tool calls it writes only the arguments d's ArgsRead KPIs list in
// the case's task, the bytes MarshalCases writes for ProjectArgs(d, c),
// without copying a map. docs/protocol.md ("Needs").
func MarshalCasesFor(buf []byte, d sdk.Description, cases []*sdk.Case) ([]byte, error) {
	keys := argsReadKeys(d)
	if len(keys) == 0 {
		return marshalCases(buf, cases, nil)
	}
	return marshalCases(buf, cases, &listings{keys: keys, seen: map[string]*argListing{}})
}

// marshalCases writes cases; with ls, each case's tool calls carry only
// the arguments its task lists.
func marshalCases(buf []byte, cases []*sdk.Case, ls *listings) ([]byte, error) {
	refs := map[*sdk.Snapshot]string{}
	var snaps []*sdk.Snapshot
	ref := func(s *sdk.Snapshot) string {
		if s == nil {
			return ""
		}
		if r, ok := refs[s]; ok {
			return r
		}
		r := "s" + strconv.Itoa(len(refs))
		refs[s] = r
		snaps = append(snaps, s)
		return r
	}
	var err error
	for _, c := range cases {
		buf = protowire.AppendTag(buf, 1, protowire.BytesType)
		if buf, err = nested(buf, func(b []byte) ([]byte, error) {
			var listed *argListing // nil: every argument
			if ls != nil && len(c.Turn.ToolCalls) > 0 {
				if l := ls.of(&c.Task); !l.all {
					listed = l
				}
			}
			return appendCase(b, c, ref(c.StateBefore), ref(c.StateAfter), listed)
		}); err != nil {
			return nil, fmt.Errorf("encoding case %q: %w", c.ID, err)
		}
	}
	for _, s := range snaps {
		j, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("encoding snapshot: %w", err)
		}
		buf = protowire.AppendTag(buf, 2, protowire.BytesType)
		buf, _ = nested(buf, func(b []byte) ([]byte, error) {
			b = appendStr(b, 1, refs[s])
			return appendBytes(b, 2, j), nil
		})
	}
	return buf, nil
}

// nested appends the length-prefixed message that f appends. The length
// is reserved as one byte and the message moved when it needs more.
func nested(buf []byte, f func([]byte) ([]byte, error)) ([]byte, error) {
	at := len(buf)
	buf = append(buf, 0)
	buf, err := f(buf)
	if err != nil {
		return nil, err
	}
	n := len(buf) - at - 1
	if n < 0x80 {
		buf[at] = byte(n)
		return buf, nil
	}
	k := protowire.SizeVarint(uint64(n))
	buf = append(buf, make([]byte, k-1)...)
	copy(buf[at+k:], buf[at+1:at+1+n])
	protowire.AppendVarint(buf[at:at], uint64(n))
	return buf, nil
}

func appendStr(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendStrs appends a repeated string field, every element (empty ones
// too).
func appendStrs(b []byte, num protowire.Number, ss []string) []byte {
	for _, s := range ss {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendInt32(b []byte, num protowire.Number, v int) []byte {
	return appendVarint(b, num, uint64(int64(int32(v))))
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return appendVarint(b, num, 1)
}

// appendCase appends case c. Unless listed is nil, its tool calls carry
// only the arguments listed names.
func appendCase(b []byte, c *sdk.Case, before, after string, listed *argListing) ([]byte, error) {
	b = appendStr(b, 1, c.ID)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b, _ = nested(b, func(b []byte) ([]byte, error) { return appendTask(b, &c.Task), nil })
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b, err := nested(b, func(b []byte) ([]byte, error) { return appendTurn(b, &c.Turn, listed) })
	if err != nil {
		return nil, err
	}
	b = appendVarint(b, 4, uint64(unixNano(c.StartedAt)))
	b = appendVarint(b, 5, uint64(unixNano(c.FinishedAt)))
	b = appendStr(b, 6, before)
	b = appendStr(b, 7, after)
	for _, u := range c.Upstream {
		m, err := proto.Marshal(upstreamToProto(u))
		if err != nil {
			return nil, fmt.Errorf("encoding upstream %q: %w", u.Scorer, err)
		}
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	return b, nil
}

func appendTask(b []byte, t *sdk.Task) []byte {
	b = appendStr(b, 1, t.Label)
	b = appendStr(b, 2, t.Persona)
	b = appendStr(b, 3, t.Prompt)
	keys := make([]string, 0, len(t.KPIs))
	for k := range t.KPIs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b, _ = nested(b, func(b []byte) ([]byte, error) {
			// Map entries always carry both fields.
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, k)
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			return protowire.AppendBytes(b, t.KPIs[k]), nil
		})
	}
	b = protowire.AppendTag(b, 5, protowire.BytesType)
	b, _ = nested(b, func(b []byte) ([]byte, error) {
		b = appendBool(b, 1, t.Safety.RequiresHuman)
		if t.Safety.MaxToolCalls != nil {
			b = appendBool(b, 2, true)
			b = appendInt32(b, 3, *t.Safety.MaxToolCalls)
		}
		return b, nil
	})
	b = appendStrs(b, 6, t.ToolCatalog)
	b = appendStrs(b, 7, t.SliceTags)
	return b
}

func appendTurn(b []byte, t *sdk.Turn, listed *argListing) ([]byte, error) {
	for i := range t.Events {
		e := &t.Events[i]
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b, _ = nested(b, func(b []byte) ([]byte, error) {
			b = appendInt32(b, 1, e.Line)
			b = appendStr(b, 2, e.Type)
			b = appendStr(b, 3, e.Phase)
			b = appendStr(b, 4, e.EventType)
			b = appendStr(b, 5, e.ToolName)
			return appendStr(b, 6, e.Text), nil
		})
	}
	for i, tc := range t.ToolCalls {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		var err error
		b, err = nested(b, func(b []byte) ([]byte, error) {
			b = appendStr(b, 1, tc.Name)
			if len(tc.Args) == 0 {
				return b, nil
			}
			if listed != nil {
				ks, ok := listed.keysOf(tc.Name)
				if !ok {
					return b, nil
				}
				return appendListedArgs(b, tc.Args, ks)
			}
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			return nested(b, func(b []byte) ([]byte, error) { return AppendArgs(b, tc.Args) })
		})
		if err != nil {
			return nil, fmt.Errorf("encoding args of tool call %d (%s): %w", i, tc.Name, err)
		}
	}
	b = appendInt32(b, 3, t.ToolEvents)
	b = appendInt32(b, 4, t.SubAgents)
	b = appendStr(b, 5, t.Answer)
	b = appendStr(b, 6, t.StreamedText)
	b = appendInt32(b, 7, t.TextLen)
	b = appendBool(b, 8, t.Finalized)
	b = appendBool(b, 9, t.Error)
	b = appendStrs(b, 10, t.ErrorMessages)
	b = appendStrs(b, 11, t.Phases)
	b = appendInt32(b, 12, t.LoopIters)
	b = appendStr(b, 13, t.TaskID)
	return appendStr(b, 14, t.TaskAction), nil
}
