package pack

import (
	"maps"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaSplit is a pack schema cut in two: the schema of one task, and the
// schema with any task allowed, for the rest of the pack.
type schemaSplit struct {
	item *jsonschema.Schema // #/properties/tasks/items
	rest *jsonschema.Schema // the schema with properties.tasks.items = true
	// fastItem is the fast checker for item, or nil (fastschema.go).
	fastItem *fastSchema
}

// rootApplicators are the keywords that would let a schema look into the
// tasks other than through properties.tasks.items.
var rootApplicators = []string{
	"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"dependentSchemas", "dependencies", "patternProperties", "unevaluatedProperties",
}

// tasksKeywords are the keywords properties.tasks may have: none of them
// looks at more than one item at a time (uniqueItems, contains, prefixItems
// and unevaluatedItems would).
var tasksKeywords = map[string]bool{
	"type": true, "items": true, "minItems": true, "maxItems": true,
	"title": true, "description": true, "$comment": true,
}

// splitSchema cuts the schema doc (compiled by c at url) in two, or returns
// nil when validating task by task might not report what validating the
// whole pack reports.
func splitSchema(c *jsonschema.Compiler, url string, doc any) *schemaSplit {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	for _, k := range rootApplicators {
		if _, has := root[k]; has {
			return nil
		}
	}
	props, ok := root["properties"].(map[string]any)
	if !ok {
		return nil
	}
	tasks, ok := props["tasks"].(map[string]any)
	if !ok {
		return nil
	}
	if _, ok := tasks["items"]; !ok {
		return nil
	}
	for k := range tasks {
		if !tasksKeywords[k] {
			return nil
		}
	}
	item, err := c.Compile(url + "#/properties/tasks/items")
	if err != nil {
		return nil
	}
	// The rest: a copy of the document that shares all but the maps on the
	// way to properties.tasks.items.
	restTasks := maps.Clone(tasks)
	restTasks["items"] = true
	restProps := maps.Clone(props)
	restProps["tasks"] = restTasks
	restRoot := maps.Clone(root)
	restRoot["properties"] = restProps
	rc := jsonschema.NewCompiler()
	rc.DefaultDraft(jsonschema.Draft2020)
	if err := rc.AddResource(url, restRoot); err != nil {
		return nil
	}
	rest, err := rc.Compile(url)
	if err != nil {
		return nil
	}
	return &schemaSplit{item: item, rest: rest, fastItem: compileFast(item)}
}
