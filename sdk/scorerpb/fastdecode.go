package scorerpb

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/assay-eval/assay/sdk"
)

// UnmarshalCases decodes the protobuf bytes of a ScoreRequest straight to
// cases: the same cases as proto.Unmarshal followed by DecodeScoreRequest,
// without building the intermediate messages. A plugin spends most of its
// time decoding batches, and a turn is mostly events whose type, phase and
// tool names repeat, so those strings are shared within the batch, and
// cases whose task bytes are identical share one decoded task (as they do
// in-process, where every turn of a task points at the pack's task).
// docs/protocol.md ("Performance") describes the wire and this reader.
func UnmarshalCases(b []byte) ([]*sdk.Case, error) {
	return new(Decoder).Unmarshal(b)
}

// Unmarshal is UnmarshalCases, sharing the tasks and snapshots of earlier
// batches (see Decoder).
func (dc *Decoder) Unmarshal(b []byte) ([]*sdk.Case, error) {
	cases, _, err := dc.UnmarshalRequest(b)
	return cases, err
}

// UnmarshalRequest is Unmarshal, also returning what the request says
// about how it may be answered (AppendResultFor).
func (dc *Decoder) UnmarshalRequest(b []byte) ([]*sdk.Case, RequestOptions, error) {
	var o RequestOptions
	sh, _ := dc.shared.Get().(*shared)
	if sh == nil {
		sh = newShared()
	}
	defer dc.putShared(sh)
	d := &fastDecoder{sh: sh, tasks: &dc.tasks, nilArgs: dc.NoToolArgs}
	var cases []*sdk.Case
	var befores, afters []string
	snaps := map[string]*sdk.Snapshot{}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			c, before, after, err := d.decodeCase(v)
			if err != nil {
				return fmt.Errorf("decoding case %q: %w", c.ID, err)
			}
			cases = append(cases, c)
			befores, afters = append(befores, before), append(afters, after)
		case num == 2 && typ == protowire.BytesType:
			ref, raw, err := d.decodeSnapshot(v)
			if err != nil {
				return err
			}
			snap, ok := dc.snaps.get(raw)
			if !ok {
				snap = &sdk.Snapshot{}
				if err := json.Unmarshal(raw, snap); err != nil {
					return fmt.Errorf("decoding snapshot %q: %w", ref, err)
				}
				snap = dc.snaps.put(raw, snap)
			}
			snaps[ref] = snap
		case num == 3 && typ == protowire.VarintType:
			o.ReadsEvidenceFrom = x != 0
		}
		return nil
	})
	if err != nil {
		return nil, o, err
	}
	for i, c := range cases {
		if c.StateBefore, err = snapshotByRef(snaps, befores[i]); err != nil {
			return nil, o, fmt.Errorf("decoding case %q: %w", c.ID, err)
		}
		if c.StateAfter, err = snapshotByRef(snaps, afters[i]); err != nil {
			return nil, o, fmt.Errorf("decoding case %q: %w", c.ID, err)
		}
	}
	if cases == nil {
		cases = []*sdk.Case{}
	}
	return cases, o, nil
}

// fastDecoder holds what one batch's cases share.
type fastDecoder struct {
	sh    *shared          // event types, phases, tool names; boxed values of tool-call arguments
	tasks *reuse[sdk.Task] // by the task's bytes, kept across batches by a Decoder
	// nilArgs: a tool call without arguments gets nil Args (Decoder.NoToolArgs)
	nilArgs bool
}

var errInvalidUTF8 = errors.New("string field contains invalid UTF-8")

// eachField calls f for every field of the message b; v is the payload of a
// length-delimited field and x the value of a varint or fixed field.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("reading a field tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("reading field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func str(v []byte) (string, error) {
	if !utf8.Valid(v) {
		return "", errInvalidUTF8
	}
	return string(v), nil
}

// name is str for a value that repeats across the batch.
func (d *fastDecoder) name(v []byte) (string, error) { return d.sh.names.share(v) }

func (d *fastDecoder) decodeSnapshot(b []byte) (ref string, raw []byte, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var err error
		switch {
		case num == 1 && typ == protowire.BytesType:
			ref, err = str(v)
		case num == 2 && typ == protowire.BytesType:
			raw = v
		}
		return err
	})
	return ref, raw, err
}

func (d *fastDecoder) decodeCase(b []byte) (c *sdk.Case, before, after string, err error) {
	c = &sdk.Case{}
	err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		if typ == protowire.VarintType {
			switch num {
			case 4:
				c.StartedAt = fromUnixNano(int64(x))
			case 5:
				c.FinishedAt = fromUnixNano(int64(x))
			}
			return nil
		}
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			c.ID, err = str(v)
		case 2:
			c.Task, err = d.task(v)
		case 3:
			c.Turn, err = d.turn(v)
		case 6:
			before, err = str(v)
		case 7:
			after, err = str(v)
		case 8:
			var u Upstream
			if err = proto.Unmarshal(v, &u); err != nil {
				return err
			}
			up, err := upstreamFromProto(&u)
			if err != nil {
				return err
			}
			c.Upstream = append(c.Upstream, up)
		}
		return err
	})
	return c, before, after, err
}

// task decodes a Task, once per distinct encoding in the batch.
func (d *fastDecoder) task(b []byte) (sdk.Task, error) {
	if t, ok := d.tasks.get(b); ok {
		return t, nil
	}
	var t sdk.Task
	var hasMax bool
	var maxCalls int32
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		var err error
		var s string
		switch num {
		case 1:
			t.Label, err = str(v)
		case 2:
			t.Persona, err = str(v)
		case 3:
			t.Prompt, err = str(v)
		case 4:
			var k string
			var val []byte
			k, val, err = d.kpiEntry(v)
			if t.KPIs == nil {
				t.KPIs = map[string]json.RawMessage{}
			}
			t.KPIs[k] = val
		case 5:
			err = eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if typ == protowire.VarintType {
					switch num {
					case 1:
						t.Safety.RequiresHuman = x != 0
					case 2:
						hasMax = x != 0
					case 3:
						maxCalls = int32(x)
					}
				}
				return nil
			})
		case 6:
			s, err = d.name(v)
			t.ToolCatalog = append(t.ToolCatalog, s)
		case 7:
			s, err = d.name(v)
			t.SliceTags = append(t.SliceTags, s)
		}
		return err
	})
	if err != nil {
		return sdk.Task{}, err
	}
	if hasMax {
		n := int(maxCalls)
		t.Safety.MaxToolCalls = &n
	}
	return d.tasks.put(b, t), nil
}

func (d *fastDecoder) kpiEntry(b []byte) (k string, val []byte, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var err error
		switch {
		case num == 1 && typ == protowire.BytesType:
			k, err = str(v)
		case num == 2 && typ == protowire.BytesType:
			val = append([]byte{}, v...)
		}
		return err
	})
	if val == nil {
		val = []byte{}
	}
	return k, val, err
}

func (d *fastDecoder) turn(b []byte) (sdk.Turn, error) {
	var t sdk.Turn
	events, calls := 0, 0
	if err := eachField(b, func(num protowire.Number, typ protowire.Type, _ []byte, _ uint64) error {
		if typ == protowire.BytesType && num == 1 {
			events++
		} else if typ == protowire.BytesType && num == 2 {
			calls++
		}
		return nil
	}); err != nil {
		return t, err
	}
	if events > 0 {
		t.Events = make([]sdk.Event, 0, events)
	}
	if calls > 0 {
		t.ToolCalls = make([]sdk.ToolCall, 0, calls)
	}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if typ == protowire.VarintType {
			switch num {
			case 3:
				t.ToolEvents = int(int32(x))
			case 4:
				t.SubAgents = int(int32(x))
			case 7:
				t.TextLen = int(int32(x))
			case 8:
				t.Finalized = x != 0
			case 9:
				t.Error = x != 0
			case 12:
				t.LoopIters = int(int32(x))
			}
			return nil
		}
		if typ != protowire.BytesType {
			return nil
		}
		var err error
		var s string
		switch num {
		case 1:
			var e sdk.Event
			e, err = d.event(v)
			t.Events = append(t.Events, e)
		case 2:
			err = d.toolCall(&t, v)
		case 5:
			t.Answer, err = str(v)
		case 6:
			t.StreamedText, err = str(v)
		case 10:
			s, err = str(v)
			t.ErrorMessages = append(t.ErrorMessages, s)
		case 11:
			s, err = d.name(v)
			t.Phases = append(t.Phases, s)
		case 13:
			t.TaskID, err = str(v)
		case 14:
			t.TaskAction, err = d.name(v)
		}
		return err
	})
	return t, err
}

func (d *fastDecoder) event(b []byte) (sdk.Event, error) {
	var e sdk.Event
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if typ == protowire.VarintType && num == 1 {
			e.Line = int(int32(x))
			return nil
		}
		if typ != protowire.BytesType {
			return nil
		}
		var err error
		switch num {
		case 2:
			e.Type, err = d.name(v)
		case 3:
			e.Phase, err = d.name(v)
		case 4:
			e.EventType, err = d.name(v)
		case 5:
			e.ToolName, err = d.name(v)
		case 6:
			e.Text, err = str(v)
		}
		return err
	})
	return e, err
}

func (d *fastDecoder) toolCall(t *sdk.Turn, b []byte) error {
	var name string
	var args []byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		var err error
		switch {
		case num == 1 && typ == protowire.BytesType:
			name, err = d.name(v)
		case num == 2 && typ == protowire.BytesType:
			args = v
		}
		return err
	})
	if err != nil {
		return err
	}
	var parsed map[string]any
	switch {
	case len(args) > 0:
		if parsed, err = parseArgs(args, d.sh); err != nil {
			return fmt.Errorf("decoding args of tool call %d (%s): %w", len(t.ToolCalls), name, err)
		}
	case !d.nilArgs:
		parsed = map[string]any{}
	}
	t.ToolCalls = append(t.ToolCalls, sdk.ToolCall{Name: name, Args: parsed})
	return nil
}
