package pack

import (
	"encoding/binary"
	"math"
)

// A pack of many tasks repeats itself: the same personas, scorers, KPIs and
// CEL checks in every task. The loaded pack shares what is equal.

// kpiMap returns the KPI values of the mapping kv as JSON types, the same
// map for every task whose KPIs are equal (they are read only). When the
// tasks are not kept (stream.go), nothing is shared: the table would be all
// that is held of them.
func (d *decoder) kpiMap(kv *node) map[string]any {
	if d.stream == nil {
		d.keyBuf = appendNodeKey(d.keyBuf[:0], kv)
		if m, ok := d.kpiMaps[string(d.keyBuf)]; ok {
			return m
		}
	}
	m := make(map[string]any, len(kv.keys))
	for j, key := range kv.keys {
		m[key.str] = kv.items[j].jsonValue(false)
	}
	if d.stream != nil {
		return m
	}
	if d.kpiMaps == nil {
		d.kpiMaps = map[string]map[string]any{}
	}
	d.kpiMaps[string(d.keyBuf)] = m
	return m
}

// appendNodeKey appends an encoding of the value of n (not its position)
// that two nodes share exactly when jsonValue(false) renders them equal.
func appendNodeKey(b []byte, n *node) []byte {
	b = append(b, byte(n.kind))
	switch n.kind {
	case kBool:
		if n.b {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case kInt, kFloat:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.num))
	case kString:
		b = appendString(b, n.str)
	case kSeq:
		b = binary.AppendUvarint(b, uint64(len(n.items)))
		for _, it := range n.items {
			b = appendNodeKey(b, it)
		}
	case kMap:
		b = binary.AppendUvarint(b, uint64(len(n.keys)))
		for i, k := range n.keys {
			b = appendString(b, k.str)
			b = appendNodeKey(b, n.items[i])
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// intern returns s, or an equal string seen before (not when the tasks are
// not kept).
func (d *decoder) intern(s string) string {
	if len(s) > 64 || d.stream != nil {
		return s
	}
	if t, ok := d.strs[s]; ok {
		return t
	}
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	d.strs[s] = s
	return s
}
