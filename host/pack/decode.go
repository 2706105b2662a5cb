package pack

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
)

// The keys each block of a pack may have (docs/pack.md).
var (
	packKeys      = []string{"schema_version", "company", "personas", "tool_catalog", "tasks", "scoring", "governance", "kill_criteria"}
	companyKeys   = []string{"id", "name", "api_base"}
	taskKeys      = []string{"label", "persona", "prompt", "scorer", "weight", "slice_tags", "kpis", "safety", "cel", "tool_catalog"}
	safetyKeys    = []string{"requires_human", "max_tool_calls"}
	celKeys       = []string{"name", "expr", "message", "message_expr", "weight", "failure_tag"}
	scoringKeys   = []string{"process_weight", "kpi_weight", "min_mean_score", "min_finalize_rate", "max_error_rate", "max_mean_latency_s", "max_mean_cost_usd", "pareto_filter", "promotion", "pass_threshold", "min_pass_hat_k"}
	promotionKeys = []string{"require_no_regression", "shadow_runs", "rollback_on", "regression_min_delta"}
	passHatKeys   = []string{"k", "value"}
)

// SchemaVersion is the only schema_version a pack may declare.
const SchemaVersion = "hsm.company_eval_pack.v1"

// weightTolerance is how far process_weight + kpi_weight may be from 1.
const weightTolerance = 0.01

// decoder applies the semantic rules while decoding the node tree into a
// Pack. It reports type problems itself, so it does not depend on the schema
// in use being as strict as the embedded one.
type decoder struct {
	file       string
	src        []byte
	schema     *Schema
	opts       Options
	c          *collector
	lineStarts []int32 // of every lineStride-th line; a pack is at most MaxSize bytes
	lines      int     // the source's lines
	// The line lineBytes was last asked for, where it starts, and its text.
	cursorLine, cursorStart int
	cursorText              []byte
	runesLine               int
	runes                   []rune
	asciiLine               int // the line asciiUpTo describes
	asciiUpTo               int // the byte offset of the first non-ASCII byte of asciiLine, or its length
	// When the pack is read task by task (split.go): where the tasks are,
	// the node standing for the tasks' list, and whether a task could not be
	// read that way.
	split       *taskSplit
	splitSeq    *node
	splitFailed bool
	// When the tasks are checked as they are decoded, not kept (stream.go).
	stream *taskStream
	// What equal tasks share (intern.go).
	kpiMaps map[string]map[string]any
	keyBuf  []byte
	strs    map[string]string
}

func (d *decoder) errf(pos diag.Pos, code, subject, format string, args ...any) {
	d.c.add(diag.Errorf(pos, code, format, args...), subject)
}

func (d *decoder) pack(root *node) *Pack {
	p := &Pack{}
	if !d.object(nil, root, "the pack", packKeys, []string{"company", "personas", "tasks", "scoring"}) {
		return p
	}
	if _, v := root.get("schema_version"); v != nil {
		if s, ok := d.str(v, "schema_version"); ok {
			if s != SchemaVersion {
				d.errf(v.pos(), CodeValue, "", "schema_version: want %q, got %q", SchemaVersion, clip(s))
			}
			p.SchemaVersion = s
		}
	}
	if k, v := root.get("company"); v != nil && d.object(k, v, "company", companyKeys, []string{"id"}) {
		p.Company.ID = d.optStr(v, "id", "company")
		p.Company.Name = d.optStr(v, "name", "company")
		p.Company.APIBase = d.optStr(v, "api_base", "company")
	}
	personasOK := false
	if _, v := root.get("personas"); v != nil {
		p.Personas, personasOK = d.uniqueList(v, "personas", "persona")
	}
	if _, v := root.get("tool_catalog"); v != nil {
		p.ToolCatalog, _ = d.uniqueList(v, "tool_catalog", "tool")
	}
	if _, v := root.get("tasks"); v != nil {
		if v.kind != kSeq {
			d.errf(v.pos(), CodeType, "", "tasks: want a list of tasks, got %s", v.describe())
		} else {
			var personas map[string]bool
			if personasOK {
				personas = make(map[string]bool, len(p.Personas))
				for _, s := range p.Personas {
					personas[s] = true
				}
			}
			labels := map[string]labelUse{}
			if d.split != nil && v == d.splitSeq {
				d.decodeTasks(p, personas, labels)
			}
			for i, item := range v.items {
				if t := d.task(item, i, personas, p.Personas, labels); t != nil {
					d.keep(p, t)
				}
			}
		}
	}
	if k, v := root.get("scoring"); v != nil {
		p.Scoring = d.scoring(k, v)
	}
	d.governanceBlocks(root, p)
	return p
}

// labelUse is where a label was first used: the task's index and the
// label's line, all a duplicate's message names (a pack has at most
// MaxSize lines and tasks).
type labelUse struct {
	index, line int32
}

func (d *decoder) task(v *node, i int, personas map[string]bool, personaList []string, labels map[string]labelUse) *Task {
	path := "tasks[" + strconv.Itoa(i) + "]"
	if !d.object(nil, v, path, taskKeys, []string{"label", "persona", "prompt", "scorer"}) {
		return nil
	}
	pos := d.itemPos(v)
	t := &Task{pos: &taskPos{file: pos.File, line: int32(pos.Line), col: int32(pos.Col)}, Weight: 1}
	if _, lv := v.get("label"); lv != nil {
		if s, ok := d.strAt(lv, path, ".label"); ok {
			t.Label = s
			if prev, dup := labels[s]; dup {
				d.errf(lv.pos(), CodeDupLabel, "", "%s.label: %q is already the label of tasks[%d] (line %d)", path, clip(s), prev.index, prev.line)
			} else {
				labels[s] = labelUse{int32(i), int32(lv.pos().Line)}
			}
		}
	}
	if _, pv := v.get("persona"); pv != nil {
		if s, ok := d.strAt(pv, path, ".persona"); ok {
			t.Persona = d.intern(s)
			if personas != nil && !personas[s] {
				d.errf(pv.pos(), CodePersona, "", "%s.persona: %q is not one of the pack's personas (%s)%s",
					path, clip(s), strings.Join(personaList, ", "), didYouMean(s, personaList))
			}
		}
	}
	t.Prompt = d.optStr(v, "prompt", path)
	var scorerNode *node
	if _, sv := v.get("scorer"); sv != nil {
		if s, ok := d.strAt(sv, path, ".scorer"); ok {
			t.Scorer = scorer.ID(d.intern(s))
			scorerNode = sv
			d.checkScorer(sv, path, s)
		}
	}
	if _, wv := v.get("weight"); wv != nil {
		if w, ok := d.numberAt(wv, path, ".weight"); ok {
			if w <= 0 {
				d.errf(wv.pos(), CodeWeights, "", "%s.weight: want a weight > 0, got %s", path, wv.str)
			}
			t.Weight = w
		}
	}
	if _, sv := v.get("slice_tags"); sv != nil {
		t.SliceTags, _ = d.strList(sv, path+".slice_tags")
	}
	kk, kv := v.get("kpis")
	if kv != nil {
		if kv.kind != kMap {
			d.errf(kv.pos(), CodeType, "", "%s.kpis: want a mapping of KPI keys to values, got %s", path, kv.describe())
			kv = nil
		} else {
			t.KPIs = d.kpiMap(kv)
			t.pos.kpis = make([]kpiPos, len(kv.keys))
			for j, key := range kv.keys {
				vp := kv.items[j].pos()
				t.pos.kpis[j] = kpiPos{key: key.str, keyLine: int32(key.pos().Line), keyCol: int32(key.pos().Col),
					valueLine: int32(vp.Line), valueCol: int32(vp.Col)}
			}
		}
	}
	if k, sv := v.get("safety"); sv != nil && d.object(k, sv, path+".safety", safetyKeys, nil) {
		if _, rv := sv.get("requires_human"); rv != nil {
			t.Safety.RequiresHuman, _ = d.boolean(rv, path+".safety.requires_human")
		}
		if _, mv := sv.get("max_tool_calls"); mv != nil {
			if n, ok := d.integer(mv, path+".safety.max_tool_calls"); ok {
				if n < 0 {
					d.errf(mv.pos(), CodeRange, "", "%s.safety.max_tool_calls: want a count >= 0, got %d", path, n)
				}
				t.Safety.MaxToolCalls = &n
			}
		}
	}
	if _, cv := v.get("cel"); cv != nil {
		if cv.kind != kSeq {
			d.errf(cv.pos(), CodeType, "", "%s.cel: want a list of CEL checks, got %s", path, cv.describe())
		} else {
			names := map[string]diag.Pos{}
			for j, item := range cv.items {
				if c := d.celCheck(item, path+".cel["+strconv.Itoa(j)+"]", names); c != nil {
					t.CEL = append(t.CEL, c)
				}
			}
		}
	}
	if _, tv := v.get("tool_catalog"); tv != nil {
		t.ToolCatalog, _ = d.uniqueList(tv, path+".tool_catalog", "tool")
	}
	if d.opts.Scorers != nil && scorerNode != nil {
		d.checkKPIs(t, path, scorerNode, kk, kv)
	}
	return t
}

func (d *decoder) checkScorer(sv *node, path, id string) {
	if !d.schema.allowsScorer(id) {
		enum := d.schema.ScorerEnum()
		d.errf(sv.pos(), CodeUnknownScore, "", "%s.scorer: %q is not in the schema's scorer enum (%s)%s",
			path, clip(id), strings.Join(enum, ", "), didYouMean(id, enum))
		return
	}
	if d.opts.Scorers == nil {
		return
	}
	if _, ok := d.opts.Scorers[scorer.ID(id)]; !ok {
		installed := make([]string, 0, len(d.opts.Scorers))
		for k := range d.opts.Scorers {
			installed = append(installed, string(k))
		}
		slices.Sort(installed)
		d.errf(sv.pos(), CodeUnknownScore, "", "%s.scorer: %q has no installed plugin (installed: %s)",
			path, id, strings.Join(installed, ", "))
	}
}

func (d *decoder) celCheck(v *node, path string, names map[string]diag.Pos) *CELCheck {
	if !d.object(nil, v, path, celKeys, []string{"name", "expr"}) {
		return nil
	}
	c := &CELCheck{Pos: d.itemPos(v), Weight: 1}
	if _, nv := v.get("name"); nv != nil {
		if s, ok := d.strAt(nv, path, ".name"); ok {
			c.Name = d.intern(s)
			if prev, dup := names[s]; dup {
				d.errf(nv.pos(), CodeDuplicate, "", "%s.name: the task already has a CEL check named %q (line %d)", path, clip(s), prev.Line)
			} else {
				names[s] = nv.pos()
			}
		}
	}
	// A check whose expressions did not decode is left out of the task, so
	// that the pack's Checks, which run whatever else is wrong, never
	// compile a stand-in for them.
	exprOK := false
	if _, ev := v.get("expr"); ev != nil {
		if s, ok := d.strAt(ev, path, ".expr"); ok {
			c.Expr, exprOK = d.intern(s), true
			c.ExprPos = d.scalarPos(ev)
		}
	}
	c.Message = d.intern(d.optStr(v, "message", path))
	if _, mv := v.get("message_expr"); mv != nil {
		s, ok := d.str(mv, path+".message_expr")
		if !ok {
			exprOK = false
		}
		c.MessageExpr = d.intern(s)
		c.MessagePos = d.scalarPos(mv)
	}
	if _, wv := v.get("weight"); wv != nil {
		if w, ok := d.number(wv, path+".weight"); ok {
			if w < 0 {
				d.errf(wv.pos(), CodeWeights, "", "%s.weight: want a weight >= 0, got %s", path, wv.str)
			}
			c.Weight = w
		}
	}
	c.FailureTag = d.intern(d.optStr(v, "failure_tag", path))
	if !exprOK {
		return nil
	}
	return c
}

func (d *decoder) scoring(k *mkey, v *node) Scoring {
	var s Scoring
	if !d.object(k, v, "scoring", scoringKeys, []string{"process_weight", "kpi_weight"}) {
		return s
	}
	weight := func(key string, dst *float64) bool {
		_, wv := v.get(key)
		if wv == nil {
			return false
		}
		w, ok := d.number(wv, "scoring."+key)
		if !ok {
			return false
		}
		*dst = w
		if w < 0 || w > 1 {
			d.errf(wv.pos(), CodeWeights, "", "scoring.%s: want a weight in [0, 1], got %s", key, wv.str)
			return false
		}
		return true
	}
	pw := weight("process_weight", &s.ProcessWeight)
	kw := weight("kpi_weight", &s.KPIWeight)
	if pw && kw {
		if sum := s.ProcessWeight + s.KPIWeight; math.Abs(sum-1) > weightTolerance {
			pk, _ := v.get("process_weight")
			d.errf(pk.pos(), CodeWeights, "", "scoring: process_weight + kpi_weight = %s; want 1.0 (within %g)",
				formatFloat(sum), weightTolerance)
		}
	}
	rate := func(key string, dst *float64) {
		if _, rv := v.get(key); rv != nil {
			if r, ok := d.number(rv, "scoring."+key); ok {
				if r < 0 || r > 1 {
					d.errf(rv.pos(), CodeRange, "", "scoring.%s: want a rate in [0, 1], got %s", key, rv.str)
				}
				*dst = r
			}
		}
	}
	rate("min_mean_score", &s.MinMeanScore)
	rate("min_finalize_rate", &s.MinFinalizeRate)
	rate("max_error_rate", &s.MaxErrorRate)
	limit := func(key string) *float64 {
		_, lv := v.get(key)
		if lv == nil {
			return nil
		}
		x, ok := d.number(lv, "scoring."+key)
		if !ok {
			return nil
		}
		if x < 0 {
			d.errf(lv.pos(), CodeRange, "", "scoring.%s: want a limit >= 0, got %s", key, lv.str)
		}
		return &x
	}
	s.MaxMeanLatencyS = limit("max_mean_latency_s")
	s.MaxMeanCostUSD = limit("max_mean_cost_usd")
	if _, pv := v.get("pass_threshold"); pv != nil {
		var t float64
		rate("pass_threshold", &t)
		s.PassThreshold = &t
	}
	if gk, gv := v.get("min_pass_hat_k"); gv != nil {
		s.MinPassHatK = d.passHatK(gk, gv)
	}
	if _, bv := v.get("pareto_filter"); bv != nil {
		s.ParetoFilter, _ = d.boolean(bv, "scoring.pareto_filter")
	}
	if pk, pv := v.get("promotion"); pv != nil && d.object(pk, pv, "scoring.promotion", promotionKeys, nil) {
		if _, bv := pv.get("require_no_regression"); bv != nil {
			s.Promotion.RequireNoRegression, _ = d.boolean(bv, "scoring.promotion.require_no_regression")
		}
		if _, nv := pv.get("shadow_runs"); nv != nil {
			if n, ok := d.integer(nv, "scoring.promotion.shadow_runs"); ok {
				if n < 0 {
					d.errf(nv.pos(), CodeRange, "", "scoring.promotion.shadow_runs: want a count >= 0, got %d", n)
				}
				s.Promotion.ShadowRuns = n
			}
		}
		if _, rv := pv.get("rollback_on"); rv != nil {
			s.Promotion.RollbackOn, _ = d.uniqueList(rv, "scoring.promotion.rollback_on", "condition")
		}
		if _, mv := pv.get("regression_min_delta"); mv != nil {
			if x, ok := d.number(mv, "scoring.promotion.regression_min_delta"); ok {
				if x < 0 || x > 1 {
					d.errf(mv.pos(), CodeRange, "", "scoring.promotion.regression_min_delta: want a score difference in [0, 1], got %s", mv.str)
				}
				s.Promotion.RegressionMinDelta = x
			}
		}
	}
	return s
}

// passHatK decodes scoring.min_pass_hat_k: {k: a count >= 1, value: a rate}.
func (d *decoder) passHatK(key *mkey, v *node) *PassHatK {
	const path = "scoring.min_pass_hat_k"
	if !d.object(key, v, path, passHatKeys, passHatKeys) {
		return nil
	}
	g := &PassHatK{}
	ok := true
	if _, kv := v.get("k"); kv != nil {
		k, isInt := d.integer(kv, path+".k")
		if isInt && k < 1 {
			d.errf(kv.pos(), CodeRange, "", "%s.k: want a number of epochs >= 1, got %d", path, k)
		}
		g.K, ok = k, ok && isInt && k >= 1
	}
	if _, vv := v.get("value"); vv != nil {
		x, isNum := d.number(vv, path+".value")
		if isNum && (x < 0 || x > 1) {
			d.errf(vv.pos(), CodeRange, "", "%s.value: want a rate in [0, 1], got %s", path, vv.str)
		}
		g.Value, ok = x, ok && isNum
	}
	if !ok {
		return nil
	}
	return g
}

func formatFloat(f float64) string {
	return fmt.Sprintf("%.4g", f)
}

// object checks that v is a mapping with only allowed keys and every
// required one. key is the mapping's own key, when it has one, where a
// missing key is reported.
func (d *decoder) object(key *mkey, v *node, path string, allowed, required []string) bool {
	if v.kind != kMap {
		d.errf(v.pos(), CodeType, "", "%s: want a mapping, got %s", path, v.describe())
		return false
	}
	for _, k := range v.keys {
		if !slices.Contains(allowed, k.str) {
			d.errf(k.pos(), CodeUnknownKey, k.str, "%s", unknownKeyMessage(path, k.str, allowed))
		}
	}
	for _, r := range required {
		if k, _ := v.get(r); k == nil {
			d.errf(d.ownerPos(key, v), CodeRequired, r, "%s: missing required key %q", path, r)
		}
	}
	return true
}

func unknownKeyMessage(path, key string, allowed []string) string {
	msg := fmt.Sprintf("%s: unknown key %q", path, clip(key))
	if s := didYouMean(key, allowed); s != "" {
		return msg + s
	}
	return msg + " (want one of " + strings.Join(allowed, ", ") + ")"
}

// ownerPos is where a problem with a whole mapping is reported: at its key,
// or, for a list item, at its "-".
func (d *decoder) ownerPos(key *mkey, v *node) diag.Pos {
	if key != nil {
		return key.pos()
	}
	return d.itemPos(v)
}

// itemPos is the position of the "- " that introduces a list item, or the
// item's own position when it has none.
func (d *decoder) itemPos(v *node) diag.Pos {
	pos := v.pos()
	line, ok := d.lineBytes(pos.Line)
	if !ok {
		return pos
	}
	// Columns count runes; on the (usual) ASCII prefix they are bytes.
	end := pos.Col - 1
	if end > len(line) {
		return pos
	}
	if end > d.asciiPrefix(pos.Line, line) {
		return d.itemPosRunes(pos)
	}
	if c := dashCol(line, end); c > 0 {
		pos.Col = c
	}
	return pos
}

// asciiPrefix is the length of the ASCII prefix of line n, whose bytes are
// line; the last line asked for is cached, so that the items of a one-line
// (say, minified JSON) pack cost linear, not quadratic, time.
func (d *decoder) asciiPrefix(n int, line []byte) int {
	if d.asciiLine == n && n > 0 {
		return d.asciiUpTo
	}
	i := 0
	for i < len(line) && line[i] < utf8.RuneSelf {
		i++
	}
	d.asciiLine, d.asciiUpTo = n, i
	return i
}

func (d *decoder) itemPosRunes(pos diag.Pos) diag.Pos {
	runes, ok := d.lineRunes(pos.Line)
	if !ok {
		return pos
	}
	if c := dashCol(runes, min(pos.Col-1, len(runes))); c > 0 {
		pos.Col = c
	}
	return pos
}

// dashCol is the column of the "-" at or before column end of line (bytes or
// runes) with only blanks after it up to end; 0 when there is none.
func dashCol[T byte | rune](line []T, end int) int {
	for c := end; c >= 1; c-- {
		switch line[c-1] {
		case ' ', '\t':
			continue
		case '-':
			return c
		}
		break
	}
	return 0
}

// lineStride is how many lines apart the decoder keeps the start of a
// line: lineBytes finds the ones between with a scan, which costs less than
// an index of every line of a large pack (docs/performance.md, "Packs").
const lineStride = 16

// lineBytes is line n (1-based) of the source without its line break; it
// shares the source's memory.
func (d *decoder) lineBytes(n int) ([]byte, bool) {
	if d.lineStarts == nil {
		d.lines = bytes.Count(d.src, []byte{'\n'}) + 1
		d.lineStarts = make([]int32, 1, (d.lines+lineStride-1)/lineStride)
		line := 1
		for i, b := range d.src {
			if b == '\n' {
				if line++; (line-1)%lineStride == 0 {
					d.lineStarts = append(d.lineStarts, int32(i+1))
				}
			}
		}
	}
	if n < 1 || n > d.lines {
		return nil, false
	}
	if n == d.cursorLine {
		return d.cursorText, true // a long line is not searched again for its end
	}
	// From the nearest kept start, or from the line last asked for when
	// that is nearer (the lines of a task are asked for in order).
	at, start := 1+(n-1)/lineStride*lineStride, int(d.lineStarts[(n-1)/lineStride])
	if d.cursorLine > at && d.cursorLine <= n {
		at, start = d.cursorLine, d.cursorStart
	}
	for ; at < n; at++ {
		start += bytes.IndexByte(d.src[start:], '\n') + 1
	}
	end := len(d.src)
	if j := bytes.IndexByte(d.src[start:], '\n'); j >= 0 {
		end = start + j
	}
	d.cursorLine, d.cursorStart = n, start
	d.cursorText = bytes.TrimSuffix(d.src[start:end], []byte{'\r'})
	return d.cursorText, true
}

// lineRunes is line n as runes; the last line asked for is cached, as list
// items on one line are asked for in a row.
func (d *decoder) lineRunes(n int) ([]rune, bool) {
	if d.runesLine == n && n > 0 {
		return d.runes, true
	}
	s, ok := d.line(n)
	if !ok {
		return nil, false
	}
	d.runesLine, d.runes = n, []rune(s)
	return d.runes, true
}

// line returns line n (1-based) of the source, without its line break.
func (d *decoder) line(n int) (string, bool) {
	b, ok := d.lineBytes(n)
	return string(b), ok
}

func (d *decoder) str(v *node, path string) (string, bool) {
	if v.kind != kString {
		d.errf(v.pos(), CodeType, "", "%s: want a string, got %s", path, v.describe())
		return "", false
	}
	return v.str, true
}

func (d *decoder) optStr(m *node, key, path string) string {
	_, v := m.get(key)
	if v == nil {
		return ""
	}
	s, _ := d.strAt(v, path, ".", key)
	return s
}

// strAt is str of the value at the path its parts join to, joined only for
// a message (nearly every value is a string).
func (d *decoder) strAt(v *node, path ...string) (string, bool) {
	if v.kind == kString {
		return v.str, true
	}
	return d.str(v, strings.Join(path, ""))
}

func (d *decoder) number(v *node, path string) (float64, bool) {
	if v.kind != kInt && v.kind != kFloat {
		d.errf(v.pos(), CodeType, "", "%s: want a number, got %s", path, v.describe())
		return 0, false
	}
	return v.num, true
}

// numberAt is number of the value at the path its parts join to, joined
// only for a message.
func (d *decoder) numberAt(v *node, path ...string) (float64, bool) {
	if v.kind == kInt || v.kind == kFloat {
		return v.num, true
	}
	return d.number(v, strings.Join(path, ""))
}

func (d *decoder) integer(v *node, path string) (int, bool) {
	if (v.kind != kInt && v.kind != kFloat) || v.num != math.Trunc(v.num) || math.Abs(v.num) > 1<<53 {
		d.errf(v.pos(), CodeType, "", "%s: want an integer, got %s", path, v.describe())
		return 0, false
	}
	return int(v.num), true
}

func (d *decoder) boolean(v *node, path string) (bool, bool) {
	if v.kind != kBool {
		d.errf(v.pos(), CodeType, "", "%s: want true or false, got %s", path, v.describe())
		return false, false
	}
	return v.b, true
}

func (d *decoder) strList(v *node, path string) ([]string, bool) {
	if v.kind != kSeq {
		d.errf(v.pos(), CodeType, "", "%s: want a list of strings, got %s", path, v.describe())
		return nil, false
	}
	out := make([]string, 0, len(v.items))
	ok := true
	for i, it := range v.items {
		s, good := d.str(it, fmt.Sprintf("%s[%d]", path, i))
		if !good {
			ok = false
			continue
		}
		out = append(out, d.intern(s))
	}
	return out, ok
}

// uniqueList is strList, also reporting items listed twice; ok says the
// value is a list of strings.
func (d *decoder) uniqueList(v *node, path, what string) ([]string, bool) {
	list, ok := d.strList(v, path)
	if v.kind != kSeq {
		return list, false
	}
	seen := map[string]diag.Pos{}
	for i, it := range v.items {
		if it.kind != kString {
			continue
		}
		if prev, dup := seen[it.str]; dup {
			d.errf(it.pos(), CodeDuplicate, "", "%s[%d]: %s %q is listed twice (first at line %d)", path, i, what, clip(it.str), prev.Line)
			continue
		}
		seen[it.str] = it.pos()
	}
	return list, ok
}

// didYouMean suggests the closest of candidates to s, or returns "". Words
// of more than 64 bytes are never close.
func didYouMean(s string, candidates []string) string {
	s = strings.ToLower(s)
	if len(s) > 64 {
		return ""
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if len(lc) > 64 {
			continue
		}
		if dist := diag.EditDistance(s, lc); dist < bestDist && dist < len(c) {
			best, bestDist = c, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}
