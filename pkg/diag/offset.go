package diag

import (
	"bytes"
	"unicode/utf8"
)

// OffsetPos converts a byte offset in src (a file's bytes) to a position: a
// 1-based line and a 1-based column counted in runes. An offset outside src
// is clamped to it.
func OffsetPos(file string, src []byte, off int) Pos {
	off = max(0, min(off, len(src)))
	before := src[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return Pos{File: file, Line: bytes.Count(before, []byte{'\n'}) + 1, Col: utf8.RuneCount(before[start:]) + 1}
}
