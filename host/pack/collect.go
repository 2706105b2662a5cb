package pack

import "github.com/assay-eval/assay/pkg/diag"

// collector gathers diagnostics, dropping a second report of the same
// problem: the schema and the semantic rules often see the same mistake, and
// the first report (the semantic one, whose message is more specific) wins.
type collector struct {
	list  diag.List
	seen  map[dedupKey]bool
	typed map[diag.Pos]bool // positions of pack.type diagnostics
}

type dedupKey struct {
	pos     diag.Pos
	code    string
	subject string
}

// add records d unless a diagnostic with the same position, code and
// subject (e.g. the missing key's name) was recorded before.
func (c *collector) add(d diag.Diagnostic, subject string) {
	if c.seen == nil {
		c.seen = map[dedupKey]bool{}
	}
	k := dedupKey{d.Pos, d.Code, subject}
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	if d.Code == CodeType {
		if c.typed == nil {
			c.typed = map[diag.Pos]bool{}
		}
		c.typed[d.Pos] = true
	}
	c.list = append(c.list, d)
}

// hasTypeError reports whether a value at pos was already reported as
// having the wrong type; other complaints about it would repeat that.
func (c *collector) hasTypeError(pos diag.Pos) bool { return c.typed[pos] }

func (c *collector) hasErrors() bool { return c.list.HasErrors() }
