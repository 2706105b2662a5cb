package pack

import (
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A task is checked against the task schema tens of thousands of times, and
// the JSON schema library wants a JSON value to walk (a map and an
// interface for every value) and allocates as it walks. Almost every task
// is valid, so before building that value the loader asks a small checker
// that reads the node tree directly whether the task is certainly valid. It
// knows only the keywords a pack schema needs (types, properties, required,
// additionalProperties, items, uniqueItems and enum and const of strings,
// string length and pattern, number bounds, local references); a schema that uses any other is not
// given one (compileFast returns nil). Its answer is one way only: true
// means the library would report nothing, so nothing is reported; false
// means "not certain", and the library validates the value as before and
// says what is wrong. Every problem is therefore still found and worded by
// the library (TestFastSchemaSound, FuzzFastSchemaSound).

// fastSchema is one compiled schema as the fast checker reads it.
type fastSchema struct {
	anything bool // a true schema, or one with no assertion
	never    bool // a false schema
	types    uint8
	ref      *fastSchema
	enum     []string // nil: no enum
	constStr *string  // const, when a string
	unique   bool     // uniqueItems
	props    map[string]*fastSchema
	required []string
	addl     *fastSchema // additionalProperties as a schema
	noAddl   bool        // additionalProperties: false
	items    *fastSchema
	minItems int // -1: none
	maxItems int
	minLen   int
	maxLen   int
	pattern  jsonschema.Regexp
	class    *classPattern // the pattern without its regexp, when it is a class pattern
	min      *big.Rat
	max      *big.Rat
	exMin    *big.Rat
	exMax    *big.Rat
	// The bounds as int64s, when every bound set is an integer an int64
	// holds (intBounds): an integer is checked without a big.Rat.
	intBounds                  bool
	minI, maxI, exMinI, exMaxI int64
}

// The JSON types a fastSchema allows, as a bit set; 0 is any.
const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// compileFast returns the fast checker for s, or nil when s (or a schema it
// reaches) uses a keyword the checker does not know.
func compileFast(s *jsonschema.Schema) *fastSchema {
	memo := map[*jsonschema.Schema]*fastSchema{}
	ok := true
	var build func(s *jsonschema.Schema) *fastSchema
	build = func(s *jsonschema.Schema) *fastSchema {
		if f, seen := memo[s]; seen {
			return f
		}
		f := &fastSchema{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
		memo[s] = f
		if !fastSupported(s) {
			ok = false
			return f
		}
		if s.Bool != nil {
			f.anything, f.never = *s.Bool, !*s.Bool
			return f
		}
		if s.Types != nil {
			for _, t := range s.Types.ToStrings() {
				f.types |= typeBits[t]
			}
		}
		if s.Ref != nil {
			f.ref = build(s.Ref)
		}
		if s.Enum != nil {
			f.enum = []string{}
			for _, v := range s.Enum.Values {
				if str, isStr := v.(string); isStr {
					f.enum = append(f.enum, str)
				}
			}
		}
		if s.Const != nil {
			c, isStr := (*s.Const).(string)
			if !isStr {
				ok = false
			}
			f.constStr = &c
		}
		f.unique = s.UniqueItems
		if len(s.Properties) > 0 {
			f.props = make(map[string]*fastSchema, len(s.Properties))
			for k, ps := range s.Properties {
				f.props[k] = build(ps)
			}
		}
		f.required = s.Required
		switch a := s.AdditionalProperties.(type) {
		case nil:
		case bool:
			f.noAddl = !a
		case *jsonschema.Schema:
			f.addl = build(a)
		default:
			ok = false
		}
		if s.Items2020 != nil {
			f.items = build(s.Items2020)
		}
		f.minItems, f.maxItems = intOr(s.MinItems), intOr(s.MaxItems)
		f.minLen, f.maxLen = intOr(s.MinLength), intOr(s.MaxLength)
		f.pattern = s.Pattern
		f.class = newClassPattern(s.Pattern)
		f.min, f.max, f.exMin, f.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
		var okMin, okMax, okExMin, okExMax bool
		f.minI, okMin = int64Bound(f.min)
		f.maxI, okMax = int64Bound(f.max)
		f.exMinI, okExMin = int64Bound(f.exMin)
		f.exMaxI, okExMax = int64Bound(f.exMax)
		f.intBounds = okMin && okMax && okExMin && okExMax
		f.anything = f.types == 0 && f.ref == nil && f.enum == nil && f.constStr == nil && !f.unique && f.props == nil && len(f.required) == 0 &&
			f.addl == nil && !f.noAddl && f.items == nil && f.minItems < 0 && f.maxItems < 0 && f.minLen < 0 &&
			f.maxLen < 0 && f.pattern == nil && f.min == nil && f.max == nil && f.exMin == nil && f.exMax == nil
		return f
	}
	f := build(s)
	if !ok {
		return nil
	}
	return f
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// fastSupported reports whether s uses only keywords the fast checker
// knows (annotations aside), in a draft whose items keyword is items2020.
func fastSupported(s *jsonschema.Schema) bool {
	if s.Bool != nil {
		return true
	}
	return s.DraftVersion >= 2020 &&
		s.RecursiveRef == nil && s.DynamicRef == nil && s.Not == nil &&
		len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		s.If == nil && s.Then == nil && s.Else == nil && s.Format == nil &&
		s.MaxProperties == nil && s.MinProperties == nil && s.PropertyNames == nil &&
		len(s.PatternProperties) == 0 && len(s.Dependencies) == 0 && len(s.DependentRequired) == 0 &&
		len(s.DependentSchemas) == 0 && s.UnevaluatedProperties == nil &&
		s.Contains == nil && s.MinContains == nil && s.MaxContains == nil &&
		s.Items == nil && s.AdditionalItems == nil && len(s.PrefixItems) == 0 && s.UnevaluatedItems == nil &&
		s.ContentEncoding == nil && s.ContentMediaType == nil && s.ContentSchema == nil &&
		s.MultipleOf == nil && len(s.Extensions) == 0
}

// maxFastRefs bounds the references followed at one value, so that a
// schema whose references loop (which the library reports) is left to the
// library.
const maxFastRefs = 32

// valid reports whether the value n is certainly valid against f: when it
// is, the JSON schema library reports nothing for it.
func (f *fastSchema) valid(n *node) bool { return f.check(n, 0) }

func (f *fastSchema) check(n *node, refs int) bool {
	if f.anything {
		return true
	}
	if f.never {
		return false
	}
	if f.types != 0 && !f.typeOK(n) {
		return false
	}
	if f.enum != nil && !f.enumOK(n) {
		return false
	}
	if f.constStr != nil && (n.kind != kString || n.str != *f.constStr) {
		return false
	}
	if f.ref != nil && (refs >= maxFastRefs || !f.ref.check(n, refs+1)) {
		return false
	}
	switch n.kind {
	case kMap:
		return f.mapOK(n)
	case kSeq:
		return f.seqOK(n)
	case kString:
		return f.strOK(n.str)
	case kInt, kFloat:
		return f.numOK(n)
	}
	return true
}

func (f *fastSchema) typeOK(n *node) bool {
	var t uint8
	switch n.kind {
	case kNull:
		t = tNull
	case kBool:
		t = tBool
	case kInt:
		t = tNumber | tInteger
	case kFloat:
		t = tNumber // an integral float is an integer to the library: not certain
	case kString:
		t = tString
	case kSeq:
		t = tArray
	case kMap:
		t = tObject
	}
	return f.types&t != 0
}

func (f *fastSchema) enumOK(n *node) bool {
	if n.kind != kString {
		return false
	}
	for _, e := range f.enum {
		if e == n.str {
			return true
		}
	}
	return false
}

func (f *fastSchema) mapOK(n *node) bool {
	for _, r := range f.required {
		if k, _ := n.get(r); k == nil {
			return false
		}
	}
	for i, k := range n.keys {
		if ps, ok := f.props[k.str]; ok {
			if !ps.check(n.items[i], 0) {
				return false
			}
			continue
		}
		switch {
		case f.noAddl:
			return false
		case f.addl != nil && !f.addl.check(n.items[i], 0):
			return false
		}
	}
	return true
}

func (f *fastSchema) seqOK(n *node) bool {
	if f.minItems >= 0 && len(n.items) < f.minItems || f.maxItems >= 0 && len(n.items) > f.maxItems {
		return false
	}
	if f.unique && !uniqueStrings(n.items) {
		return false
	}
	if f.items != nil {
		for _, it := range n.items {
			if !f.items.check(it, 0) {
				return false
			}
		}
	}
	return true
}

// uniqueStrings reports whether the items are strings, all different (any
// other item makes it not certain).
func uniqueStrings(items []*node) bool {
	for _, it := range items {
		if it.kind != kString {
			return false
		}
	}
	if len(items) <= 16 {
		for i := range items {
			for j := i + 1; j < len(items); j++ {
				if items[i].str == items[j].str {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if seen[it.str] {
			return false
		}
		seen[it.str] = true
	}
	return true
}

func (f *fastSchema) strOK(s string) bool {
	if f.minLen >= 0 || f.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if f.minLen >= 0 && l < f.minLen || f.maxLen >= 0 && l > f.maxLen {
			return false
		}
	}
	if f.class != nil {
		return f.class.MatchString(s)
	}
	return f.pattern == nil || f.pattern.MatchString(s)
}

// numOK checks the bounds exactly, as the library does on the number's
// text (json.Number(n.str)).
func (f *fastSchema) numOK(n *node) bool {
	if f.min == nil && f.max == nil && f.exMin == nil && f.exMax == nil {
		return true
	}
	var num *big.Rat
	if i, err := strconv.ParseInt(n.str, 10, 64); err == nil {
		if f.intBounds {
			return (f.min == nil || i >= f.minI) && (f.max == nil || i <= f.maxI) &&
				(f.exMin == nil || i > f.exMinI) && (f.exMax == nil || i < f.exMaxI)
		}
		num = new(big.Rat).SetInt64(i)
	} else if r, ok := new(big.Rat).SetString(n.str); ok {
		num = r
	} else {
		return false
	}
	return (f.min == nil || num.Cmp(f.min) >= 0) && (f.max == nil || num.Cmp(f.max) <= 0) &&
		(f.exMin == nil || num.Cmp(f.exMin) > 0) && (f.exMax == nil || num.Cmp(f.exMax) < 0)
}

// int64Bound is a bound as an int64: ok when it is unset (0) or an integer
// an int64 holds.
func int64Bound(r *big.Rat) (int64, bool) {
	if r == nil {
		return 0, true
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}
