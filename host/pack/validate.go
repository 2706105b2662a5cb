package pack

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	jskind "github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// validateSchema validates the tree against the schema and reports each
// violation at the key or value it is about. Problems the semantic rules
// already reported are dropped by the collector.
func validateSchema(s *Schema, root *node, d *decoder) {
	reportSchema(validateFast(s.compiled, s.fast, root), root, nil, d)
}

// validateFast validates the node n against s, asking the fast checker f
// (when not nil) first: what it finds certainly valid is not given to s.
func validateFast(s *jsonschema.Schema, f *fastSchema, n *node) error {
	if f != nil && f.valid(n) {
		return nil
	}
	return s.Validate(n.jsonValue(true))
}

// validateNode validates value, the JSON of the node root found at loc in
// the pack, against the schema s, and reports each violation as
// validateSchema does.
func validateNode(s *jsonschema.Schema, root *node, value any, loc []string, d *decoder) {
	reportSchema(s.Validate(value), root, loc, d)
}

// reportSchema reports err, what validating root (at loc) returned.
func reportSchema(err error, root *node, loc []string, d *decoder) {
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d.errf(root.pos(), CodeSchema, "", "validating against the schema: %v", err)
		return
	}
	// Type errors first, so that other complaints about a value of the
	// wrong type are dropped.
	var leaves, rest []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if _, isType := e.ErrorKind.(*jskind.Type); isType {
				leaves = append(leaves, e)
			} else {
				rest = append(rest, e)
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	for _, e := range append(leaves, rest...) {
		d.schemaError(root, loc, e)
	}
}

// schemaError reports one leaf error of the schema validation.
// root is the node at loc (nil: the pack), from which the error's location
// counts.
func (d *decoder) schemaError(root *node, loc []string, ve *jsonschema.ValidationError) {
	key, val := locate(root, ve.InstanceLocation)
	full := ve.InstanceLocation
	if len(loc) > 0 {
		full = append(loc[:len(loc):len(loc)], ve.InstanceLocation...)
	}
	path := instancePath(full)
	last := ""
	if n := len(full); n > 0 {
		last = full[n-1]
	}
	text := ve.ErrorKind.LocalizedString(printer)
	if _, isType := ve.ErrorKind.(*jskind.Type); !isType && d.c.hasTypeError(val.pos()) {
		return
	}
	switch k := ve.ErrorKind.(type) {
	case *jskind.Required:
		for _, m := range k.Missing {
			d.errf(d.ownerPos(key, val), CodeRequired, m, "%s: missing required key %q", path, m)
		}
	case *jskind.AdditionalProperties:
		for _, p := range k.Properties {
			pos := val.pos()
			if kn, _ := val.get(p); kn != nil {
				pos = kn.pos()
			}
			d.errf(pos, CodeUnknownKey, p, "%s: unknown key %q", path, clip(p))
		}
	case *jskind.FalseSchema:
		if key != nil {
			d.errf(key.pos(), CodeUnknownKey, key.str, "%s: the schema does not allow this key", path)
		} else {
			d.errf(val.pos(), CodeSchema, "", "%s: the schema does not allow this value", path)
		}
	case *jskind.Type:
		d.errf(val.pos(), CodeType, "", "%s: want %s, got %s", path, strings.Join(k.Want, " or "), val.describe())
	case *jskind.Enum:
		code := CodeValue
		if last == "scorer" {
			code = CodeUnknownScore
		}
		d.errf(val.pos(), code, "", "%s: %s", path, text)
	case *jskind.Minimum, *jskind.Maximum, *jskind.ExclusiveMinimum, *jskind.ExclusiveMaximum, *jskind.MultipleOf:
		code := CodeRange
		switch last {
		case "weight", "process_weight", "kpi_weight":
			code = CodeWeights
		}
		d.errf(val.pos(), code, "", "%s: %s", path, text)
	case *jskind.UniqueItems:
		pos := val.pos()
		if j := k.Duplicates[1]; val.kind == kSeq && j < len(val.items) {
			pos = val.items[j].pos()
			path = fmt.Sprintf("%s[%d]", path, j)
		}
		d.errf(pos, CodeDuplicate, "", "%s: %s", path, text)
	case *jskind.Const, *jskind.Pattern, *jskind.MinLength, *jskind.MaxLength, *jskind.MinItems, *jskind.MaxItems,
		*jskind.Format, *jskind.MinProperties, *jskind.MaxProperties:
		d.errf(val.pos(), CodeValue, "", "%s: %s", path, text)
	default:
		d.errf(val.pos(), CodeSchema, "", "%s: %s", path, text)
	}
}

// locate finds the node at a JSON-pointer-like location, and the key it sits
// under when its parent is a mapping. It stops at the deepest node found.
func locate(root *node, loc []string) (key *mkey, val *node) {
	val = root
	for _, tok := range loc {
		switch val.kind {
		case kMap:
			k, v := val.get(tok)
			if v == nil {
				return key, val
			}
			key, val = k, v
		case kSeq:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(val.items) {
				return key, val
			}
			key, val = nil, val.items[i]
		default:
			return key, val
		}
	}
	return key, val
}

// instancePath renders a location as tasks[0].kpis.x, or "the pack".
func instancePath(loc []string) string {
	if len(loc) == 0 {
		return "the pack"
	}
	var b strings.Builder
	for i, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
