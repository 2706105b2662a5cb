package taskeval

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// EvidenceRef is one piece of evidence a category score cites. ID, when
// set, must name an entry of the evidence bundle.
type EvidenceRef struct {
	ID     string `json:"id,omitempty"`
	Kind   string `json:"kind"`
	Label  string `json:"label"`
	Value  string `json:"value,omitempty"`
	Source string `json:"source,omitempty"`

	idPos diag.Pos // where ID was written, for CheckEvidence
}

// AICategory is an AI evaluator's advisory score for one category.
type AICategory struct {
	Score     int           `json:"score"`
	Rationale string        `json:"rationale"`
	Evidence  []EvidenceRef `json:"evidence"`
}

// AIAnswer is an AI evaluator's answer. Its scores are advisory: only
// FinalScore and OverallScore decide.
type AIAnswer struct {
	Categories       map[Category]AICategory `json:"categories"`
	OverallRationale string                  `json:"overallRationale,omitempty"`
}

var fence = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \t]*\r?\n(.*?)```")

// extractJSON finds the JSON in an evaluator's text: the first fenced code
// block when there is one, else the text from the first '{' to the last
// '}' (to the end when no '}' follows). It returns the start offset of the JSON in text.
func extractJSON(text []byte) (int, []byte, bool) {
	if m := fence.FindSubmatchIndex(text); m != nil {
		return m[2], text[m[2]:m[3]], true
	}
	i, j := bytes.IndexByte(text, '{'), bytes.LastIndexByte(text, '}')
	switch {
	case i < 0:
		return 0, nil, false
	case j < i: // unterminated: let the parser say where
		return i, text[i:], true
	}
	return i, text[i : j+1], true
}

// ParseAIAnswer parses and validates an AI evaluator's answer (see
// ParseAIAnswerFile); the error is a diag.List naming every problem.
func ParseAIAnswer(text string) (*AIAnswer, error) {
	a, diags := ParseAIAnswerFile("", []byte(text))
	if err := diags.Err(); err != nil {
		return nil, err
	}
	return a, nil
}

// ParseAIAnswerFile parses the answer in data (the contents of file): the
// first fenced block, or the text from the first '{' to the last '}'. It is
// rejected, with a positioned diagnostic for each problem, when that is not
// JSON, a category is missing or unknown, a score is not an integer 0..100,
// a rationale is blank, evidence is empty, or an evidence item lacks a kind
// or label.
func ParseAIAnswerFile(file string, data []byte) (*AIAnswer, diag.List) {
	r := &reader{src: jsonpos.Source{File: file, Src: data}}
	off, text, ok := extractJSON(data)
	if !ok {
		r.errf(0, CodeAI, "AI answer is not JSON: no fenced block and no {...} object found")
		return nil, r.diags
	}
	r.src.Base = off
	n := r.parse(text)
	if n == nil {
		return nil, r.diags
	}
	a := r.aiAnswer(n, "")
	if r.diags.HasErrors() {
		r.diags.Sort()
		return nil, r.diags
	}
	return a, nil
}

// aiAnswer reads an AI answer object at path.
func (r *reader) aiAnswer(n *jsonpos.Node, path string) *AIAnswer {
	f, ok := r.object(n, pathOr(path, "AI answer"))
	if !ok {
		return nil
	}
	a := &AIAnswer{Categories: map[Category]AICategory{}}
	a.OverallRationale = f.str("overallRationale")
	cats := f.get("categories")
	f.done()
	cpath := jsonpos.Join(path, "categories")
	if cats == nil {
		f.missing("categories")
		return a
	}
	cf, ok := r.object(cats, cpath)
	if !ok {
		return a
	}
	for _, c := range Categories() {
		v := cf.get(string(c))
		p := jsonpos.Join(cpath, string(c))
		if v == nil {
			r.errf(cats.Off, CodeAI, "%s: missing category %s", cpath, c)
			continue
		}
		a.Categories[c] = r.aiCategory(v, p)
	}
	for _, m := range cats.Members {
		if !cf.used[m.Key] {
			r.errf(m.Off, CodeAI, "%s: unknown category %q (want agentPerformance, taskOutcomeQuality, processCompliance)", cpath, m.Key)
		}
	}
	return a
}

func pathOr(path, top string) string {
	if path == "" {
		return top
	}
	return path
}

func (r *reader) aiCategory(n *jsonpos.Node, path string) AICategory {
	var c AICategory
	f, ok := r.object(n, path)
	if !ok {
		return c
	}
	c.Score, _ = f.score("score")
	if v := f.get("rationale"); v == nil || (v.Kind == jsonpos.String && strings.TrimSpace(v.Text) == "") {
		r.errf(n.Off, CodeAI, "%s: rationale is required and must not be blank", path)
		if v != nil {
			f.str("rationale")
		}
	} else {
		c.Rationale = f.str("rationale")
	}
	ev := f.get("evidence")
	switch {
	case ev == nil || (ev.Kind == jsonpos.Array && len(ev.Elems) == 0):
		r.errf(n.Off, CodeAI, "%s: evidence is required and must not be empty", path)
	default:
		c.Evidence = []EvidenceRef{}
		f.array("evidence", func(it *jsonpos.Node, p string) {
			if e, ok := r.evidenceRef(it, p); ok {
				c.Evidence = append(c.Evidence, e)
			}
		})
	}
	f.done()
	return c
}

func (r *reader) evidenceRef(n *jsonpos.Node, path string) (EvidenceRef, bool) {
	var e EvidenceRef
	f, ok := r.object(n, path)
	if !ok {
		return e, false
	}
	if v := f.get("id"); v != nil {
		e.idPos = r.pos(v.Off)
	}
	e.ID = f.str("id")
	e.Kind = f.reqStr("kind")
	e.Label = f.reqStr("label")
	e.Value = f.scalar("value")
	e.Source = f.str("source")
	f.done()
	return e, true
}

// CheckEvidence reports every AI evidence item whose id is not an entry of
// the bundle, by name and, when the answer was parsed from a file, position.
func CheckEvidence(a *AIAnswer, b *Bundle) diag.List {
	if a == nil || b == nil {
		return nil
	}
	ids := b.IDs()
	var out diag.List
	for _, c := range Categories() {
		for i, e := range a.Categories[c].Evidence {
			if e.ID != "" && !ids[e.ID] {
				out = append(out, diag.Errorf(e.idPos, CodeEvidence,
					"categories.%s.evidence[%d].id: %q is not an entry of the evidence bundle", c, i, e.ID))
			}
		}
	}
	return out
}
