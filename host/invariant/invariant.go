package invariant

import (
	"fmt"
	"sort"
	"strings"
)

// Place is one of the three places scorer IDs are kept.
type Place string

const (
	Manifest Place = "manifest"    // the plugin manifest: the source of truth
	Schema   Place = "schema enum" // scorer.enum in the pack JSON schema
	DB       Place = "DB enum"     // the CHECK ck_company_eval_packs_scorer
)

// Difference is one scorer ID that is not in every place.
type Difference struct {
	Scorer string
	// Missing is the place that lacks the ID (Schema or DB) when the
	// manifest has it; when the manifest lacks it, Missing is Manifest and
	// Present is the place that has it.
	Missing Place
	Present Place
}

// String reads "missing in DB enum: acme_invoice" or "in schema enum but no
// plugin: stigmergic".
func (d Difference) String() string {
	if d.Missing == Manifest {
		return fmt.Sprintf("in %s but no plugin: %s", d.Present, d.Scorer)
	}
	return fmt.Sprintf("missing in %s: %s", d.Missing, d.Scorer)
}

// Report is the outcome of Check: every difference, ordered by place (schema
// enum, then DB enum; what the manifest lacks last) and then by scorer.
type Report struct {
	Differences []Difference
}

// OK reports whether the three places agree.
func (r Report) OK() bool { return len(r.Differences) == 0 }

// NoPlugin returns the scorers that some place lists but the manifest does
// not, sorted and without repeats.
func (r Report) NoPlugin() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range r.Differences {
		if d.Missing == Manifest && !seen[d.Scorer] {
			seen[d.Scorer] = true
			out = append(out, d.Scorer)
		}
	}
	sort.Strings(out)
	return out
}

// Error is one message listing every difference and how to fix them. It is
// empty when the report is OK.
func (r Report) Error() string {
	if r.OK() {
		return ""
	}
	var b strings.Builder
	b.WriteString("scorer IDs differ between the plugin manifest, the schema enum and the DB enum:\n")
	for _, d := range r.Differences {
		b.WriteString("  ")
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	b.WriteString(r.Fix())
	return b.String()
}

// Fix says which commands repair the differences. The manifest is the
// source: a scorer only the schema or DB lists either needs its plugin
// registered, or is dropped by the sync.
func (r Report) Fix() string {
	if r.OK() {
		return ""
	}
	if np := r.NoPlugin(); len(np) > 0 {
		return fmt.Sprintf("fix: register the missing plugin(s) (%s) with `assay plugins register BIN`, then run `assay scorers sync`; "+
			"or run `assay scorers sync` alone to drop them from the schema and DB enums", strings.Join(np, ", "))
	}
	return "fix: run `assay scorers sync` to rewrite the schema enum and the DB CHECK from the manifest"
}

// Check compares the scorer IDs of the three places. The inputs need not be
// sorted and may repeat IDs.
func Check(manifest, schema, db []string) Report {
	m, s, d := set(manifest), set(schema), set(db)
	var out []Difference
	for _, id := range sorted(m) {
		if !s[id] {
			out = append(out, Difference{Scorer: id, Missing: Schema, Present: Manifest})
		}
	}
	for _, id := range sorted(m) {
		if !d[id] {
			out = append(out, Difference{Scorer: id, Missing: DB, Present: Manifest})
		}
	}
	for _, id := range sorted(s) {
		if !m[id] {
			out = append(out, Difference{Scorer: id, Missing: Manifest, Present: Schema})
		}
	}
	for _, id := range sorted(d) {
		if !m[id] {
			out = append(out, Difference{Scorer: id, Missing: Manifest, Present: DB})
		}
	}
	return Report{Differences: out}
}

func set(ids []string) map[string]bool {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
