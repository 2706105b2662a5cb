package kpi

import (
	"github.com/assay-eval/assay/pkg/diag"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/trace"
)

// fieldNames lists every field name of the declared types, for "did you
// mean" hints on unknown fields.
var fieldNames = sync.OnceValue(func() []string {
	seen := map[string]bool{}
	for _, t := range []reflect.Type{
		reflect.TypeFor[Turn](), reflect.TypeFor[Task](), reflect.TypeFor[Scorer](),
		reflect.TypeFor[trace.Event](), reflect.TypeFor[trace.ToolCall](),
		reflect.TypeFor[companyos.Snapshot](), reflect.TypeFor[companyos.Task](),
		reflect.TypeFor[companyos.Note](), reflect.TypeFor[companyos.MemoryEntry](),
	} {
		for _, f := range reflect.VisibleFields(t) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "" && name != "-" {
				seen[name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
})

// suggestField returns the declared field name closest to name (one edit
// away, two for names of six or more runes), or "". The checker does not say which type lacked the field,
// so the names of every declared type are candidates; a name that exists on
// some type is never suggested for itself.
func suggestField(name string) string {
	best, bestD := "", 2
	if len([]rune(name)) >= 6 {
		bestD = 3
	}
	for _, n := range fieldNames() {
		if d := diag.EditDistance(name, n); d > 0 && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
