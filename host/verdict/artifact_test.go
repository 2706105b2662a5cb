package verdict

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const prismaSchema = `// schema.prisma
model User {
  id    Int    @id @default(autoincrement())
  email String @unique
  posts Post[]
}

model Post {
  id       Int    @id @default(autoincrement())
  title    String
  author   User   @relation(fields: [authorId], references: [id])
  authorId Int
}
`

const sentence = "The invoice service keeps every company's invoices with an audit history and serves them to the billing agents."

// validObjects holds, for every kind, an object that satisfies its spec.
var validObjects = map[string]map[string]any{
	KindRequirements: {"title": "Invoice export", "functional": []any{sentence, "Export invoices as CSV per month."},
		"acceptance": []any{"An export of March holds every March invoice.", sentence}},
	KindArchitecture: {"context": sentence, "decision": "Use one Postgres database per region. " + sentence,
		"layers": []any{"http handlers", "domain services", "storage adapters", sentence}},
	KindDatabaseSchema: {"model": "model Invoice { id Int @id; number String @unique; companyId Int }",
		"relations": []any{"Invoice.companyId references Company.id (many invoices to one company)", sentence}},
	KindAPIContract: {"method": "GET", "path": "/api/invoices/{id}", "request": map[string]any{"id": "invoice id, a positive integer"},
		"response": map[string]any{"200": sentence, "404": "no invoice with that id"}},
	KindSecurityReport: {"severity": "high", "vulnerabilities": []any{"SQL injection in the invoice search endpoint. " + sentence},
		"remediation": "Use parameterised queries everywhere and add a regression test for the search endpoint. " + sentence},
	KindTestPlan: {"unit": []any{"totals are rounded half-even", sentence}, "integration": []any{"export against a real database"},
		"scenarios": []any{"a company with no invoices exports an empty file", sentence}},
	KindImplementationPlan: {"steps": []any{"add the export query", "add the CSV writer", sentence},
		"files": []any{"host/export/query.go", "host/export/csv.go", "host/export/csv_test.go"}},
	KindEvaluation:      {"verdict": "PASS", "score": 0.93, "notes": sentence, "metrics": map[string]any{"correctness": 0.95, "security": 0.9}},
	KindBenchmarkReport: {"summary": "Export of 10k invoices. " + sentence, "results": []any{map[string]any{"name": "export", "ms": 120}}},
	KindResearch: {"findings": []any{"Most customers export monthly.", sentence},
		"sources": []any{"support tickets 2026-Q3", "customer interviews"}},
	KindTrace: {"runId": "run-42", "spans": []any{map[string]any{"name": "export", "ms": 120}}},
	KindRaw:   {"anything": "goes"},
}

// asText renders an object as markdown prose, so the string form mentions
// every field without being JSON.
func asText(obj map[string]any) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "## %s\n\n%v\n\n", k, obj[k])
	}
	return b.String()
}

func TestValidateArtifactEveryKind(t *testing.T) {
	t.Parallel()
	if got, want := len(validObjects), len(Kinds()); got != want {
		t.Fatalf("fixtures cover %d kinds, Kinds() has %d", got, want)
	}
	for _, kind := range Kinds() {
		obj := validObjects[kind]
		spec, _ := SpecFor(kind)
		cases := []struct {
			name      string
			content   any
			valid     bool
			wantIssue string
		}{
			{"object valid", obj, true, ""},
			{"string valid", asText(obj), true, ""},
			{"raw JSON object valid", json.RawMessage(mustJSON(obj)), true, ""},
		}
		if kind == KindDatabaseSchema {
			cases = append(cases, struct {
				name      string
				content   any
				valid     bool
				wantIssue string
			}{"prisma string valid", prismaSchema, true, ""})
		}
		if len(spec.Required) > 0 {
			first := spec.Required[0]
			missing := clone(obj)
			delete(missing, first)
			padded := clone(missing)
			padded["notes"] = strings.Repeat(sentence+" ", 3)
			empty := clone(obj)
			empty[first] = ""
			null := clone(obj)
			null[first] = nil
			cases = append(cases,
				struct {
					name      string
					content   any
					valid     bool
					wantIssue string
				}{"object missing " + first, padded, false, fmt.Sprintf("%q is missing", first)},
				struct {
					name      string
					content   any
					valid     bool
					wantIssue string
				}{"object empty " + first, empty, false, fmt.Sprintf("%q is empty", first)},
				struct {
					name      string
					content   any
					valid     bool
					wantIssue string
				}{"object null " + first, null, false, fmt.Sprintf("%q is empty", first)},
				struct {
					name      string
					content   any
					valid     bool
					wantIssue string
				}{"string not mentioning " + first, strings.Repeat(sentence+"\n", 4), false, fmt.Sprintf("%q is not mentioned", first)},
			)
		}
		if spec.MinSize > 0 {
			cases = append(cases, struct {
				name      string
				content   any
				valid     bool
				wantIssue string
			}{"string too small", "  " + strings.Join(spec.Required, " ") + "  ", false, "too small"})
		}
		stub, wantStub := "TODO", `"TODO"`
		if len(spec.Forbidden) > 0 {
			stub = spec.Forbidden[len(spec.Forbidden)-1]
			wantStub = fmt.Sprintf("forbidden content %q", stub)
		} else {
			stub, wantStub = "fixme: finish", `stub content "FIXME"`
		}
		withStub := clone(obj)
		withStub["extra"] = stub
		cases = append(cases,
			struct {
				name      string
				content   any
				valid     bool
				wantIssue string
			}{"object with stub", withStub, false, wantStub},
			struct {
				name      string
				content   any
				valid     bool
				wantIssue string
			}{"string with stub", asText(obj) + "\n" + stub + "\n", false, wantStub},
		)
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				got := ValidateArtifact(kind, tc.content)
				if got.Valid != tc.valid || got.Kind != kind {
					t.Fatalf("ValidateArtifact(%q, %s) = %+v, want valid %v", kind, tc.name, got, tc.valid)
				}
				if want := math.Max(0, 1-0.15*float64(len(got.Issues))); math.Abs(got.Score-want) > 1e-9 {
					t.Errorf("ValidateArtifact(%q, %s).Score = %v, want %v for %d issues", kind, tc.name, got.Score, want, len(got.Issues))
				}
				if tc.wantIssue != "" && !hasIssue(got.Issues, tc.wantIssue) {
					t.Errorf("ValidateArtifact(%q, %s).Issues = %q, want one containing %q", kind, tc.name, got.Issues, tc.wantIssue)
				}
			})
		}
	}
}

func TestValidateArtifactVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		kind      string
		content   any
		valid     bool
		wantIssue string
	}{
		{"requirements with TODO acceptance", KindRequirements, map[string]any{
			"title": "Sistema X", "functional": []any{"O sistema deve permitir login"}, "acceptance": []any{"TODO: definir critérios"}},
			false, `forbidden content "TODO"`},
		{"requirements JSON text with TODO", KindRequirements, `{"title":"Sistema X","functional":["login"],"acceptance":["TODO: ..."]}`,
			false, `forbidden content "TODO"`},
		{"api contract without path", KindAPIContract, json.RawMessage(`{"method":"GET","request":{},"response":{}}`), false, `"path"`},
		{"prisma schema", KindDatabaseSchema, prismaSchema, true, ""},
		{"schema without keys", KindDatabaseSchema, strings.Repeat("model Invoice has relations to Company. ", 6), false, "no primary key"},
		{"schema without relation", KindDatabaseSchema, strings.Repeat("model Invoice { id Int @id } relations: none. ", 5), true, ""},
		{"schema without any relation word", KindDatabaseSchema, strings.Repeat("model Invoice { id Int @id } links: none. ", 6) + " relatons", false, "no relation"},
		{"SQL schema", KindDatabaseSchema, "CREATE TABLE company (id INTEGER PRIMARY KEY);\nCREATE TABLE invoice (id INTEGER PRIMARY KEY, company_id INTEGER REFERENCES company(id));\n-- model: invoice belongs to company; relations: invoice.company_id\n" + sentence,
			true, ""},
		{"forbidden strings are case-sensitive", KindTestPlan, asText(validObjects[KindTestPlan]) + " todo later", true, ""},
		{"stub patterns are case-insensitive", KindResearch, asText(validObjects[KindResearch]) + " Lorem Ipsum", false, `stub content "lorem ipsum"`},
		{"only the first stub pattern counts", KindResearch, asText(validObjects[KindResearch]) + " TODO FIXME placeholder", false, `stub content "TODO"`},
		{"checklist forbidden", KindRequirements, asText(validObjects[KindRequirements]) + "\n- [ ] checklist item", false, "[ ] checklist"},
		{"unknown kind is raw", "poem", "", true, ""},
		{"nil content", KindTrace, nil, false, "too small"},
		{"array content", KindTrace, []any{"runId", "spans", strings.Repeat("x", 60)}, true, ""},
		{"multi-byte size counts characters", KindTrace, "runId spans " + strings.Repeat("é", 40), true, ""},
		{"malformed raw JSON", KindTrace, json.RawMessage(`{"runId":`), false, "cannot be read as JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ValidateArtifact(tt.kind, tt.content)
			if got.Valid != tt.valid {
				t.Errorf("ValidateArtifact(%q, %v) = %+v, want valid %v", tt.kind, tt.content, got, tt.valid)
			}
			if tt.wantIssue != "" && !hasIssue(got.Issues, tt.wantIssue) {
				t.Errorf("ValidateArtifact(%q, ...).Issues = %q, want one containing %q", tt.kind, got.Issues, tt.wantIssue)
			}
		})
	}
}

func TestValidateArtifactObjectSize(t *testing.T) {
	t.Parallel()
	// {"runId": "r", "spans": [1]} indented is 42 characters: too small for trace (50).
	obj := map[string]any{"runId": "r", "spans": []any{1}}
	got := ValidateArtifact(KindTrace, obj)
	if d := cmp.Diff([]string{"too small: 42 characters, want at least 50"}, got.Issues); d != "" {
		t.Errorf("ValidateArtifact(trace, %v).Issues mismatch (-want +got):\n%s", obj, d)
	}
	// HTML characters are measured as written, not escaped.
	if text, _, _ := artifactText(map[string]any{"a": "<&>"}); text != "{\n  \"a\": \"<&>\"\n}" {
		t.Errorf("artifactText = %q, want 2-space indented JSON without HTML escapes", text)
	}
}

func TestRepairStateMachine(t *testing.T) {
	t.Parallel()
	good := validObjects[KindAPIContract]
	bad := map[string]any{"method": "GET"}

	t.Run("valid from the start", func(t *testing.T) {
		r := NewRepair(KindAPIContract, good, 3)
		if r.State() != StateValid {
			t.Fatalf("NewRepair(valid).State() = %s, want VALID", r.State())
		}
		var te *TransitionError
		if err := r.StartRepair(); !asTransition(err, &te) || te.From != StateValid || te.To != StateRepair {
			t.Errorf("StartRepair() on VALID = %v, want VALID -> REPAIR transition error", err)
		}
	})

	t.Run("invalid, repaired, valid", func(t *testing.T) {
		r := NewRepair(KindAPIContract, bad, 3)
		if r.State() != StateInvalid {
			t.Fatalf("NewRepair(invalid).State() = %s, want INVALID", r.State())
		}
		if err := r.Submit(good); err == nil {
			t.Errorf("Submit() on INVALID = nil, want an illegal transition")
		}
		if _, err := r.ReEvaluate(); err == nil {
			t.Errorf("ReEvaluate() on INVALID = nil, want an illegal transition")
		}
		if err := r.StartRepair(); err != nil {
			t.Fatalf("StartRepair() = %v", err)
		}
		if err := r.StartRepair(); err == nil {
			t.Errorf("StartRepair() on REPAIR = nil, want an illegal transition")
		}
		if err := r.Submit(good); err != nil {
			t.Fatalf("Submit() = %v", err)
		}
		res, err := r.ReEvaluate()
		if err != nil || !res.Valid {
			t.Fatalf("ReEvaluate() = %+v, %v, want valid", res, err)
		}
		want := []ArtifactState{StateInvalid, StateRepair, StateReEvaluate, StateValid}
		if d := cmp.Diff(want, r.History()); d != "" {
			t.Errorf("History() mismatch (-want +got):\n%s", d)
		}
	})

	t.Run("still invalid goes back to INVALID, then exhausts", func(t *testing.T) {
		r := NewRepair(KindAPIContract, bad, 1)
		if err := r.StartRepair(); err != nil {
			t.Fatal(err)
		}
		if err := r.Submit(map[string]any{"method": "POST"}); err != nil {
			t.Fatal(err)
		}
		if res, err := r.ReEvaluate(); err != nil || res.Valid || r.State() != StateInvalid {
			t.Fatalf("ReEvaluate() = %+v, %v, state %s, want invalid, INVALID", res, err, r.State())
		}
		if err := r.StartRepair(); err == nil || !strings.Contains(err.Error(), ErrRepairExhausted.Error()) || r.State() != StateExhausted {
			t.Errorf("StartRepair() after the last attempt = %v, state %s, want ErrRepairExhausted, EXHAUSTED", err, r.State())
		}
		if err := r.StartRepair(); err == nil {
			t.Errorf("StartRepair() on EXHAUSTED = nil, want an illegal transition")
		}
	})

	t.Run("Run drives the loop", func(t *testing.T) {
		r := NewRepair(KindAPIContract, bad, 3)
		calls := 0
		res, err := r.Run(func(content any, res ArtifactResult) (any, error) {
			calls++
			if calls < 2 {
				return content, nil // no fix on the first try
			}
			return good, nil
		})
		if err != nil || !res.Valid || calls != 2 || r.Attempts() != 2 {
			t.Errorf("Run() = %+v, %v after %d calls (%d attempts), want valid after 2", res, err, calls, r.Attempts())
		}
	})

	t.Run("Run gives up", func(t *testing.T) {
		r := NewRepair(KindAPIContract, bad, 2)
		_, err := r.Run(func(content any, _ ArtifactResult) (any, error) { return content, nil })
		if err == nil || r.State() != StateExhausted || r.Attempts() != 2 {
			t.Errorf("Run(no-op fix) = %v, state %s, attempts %d, want exhausted after 2", err, r.State(), r.Attempts())
		}
	})

	for _, tt := range []struct {
		from, to ArtifactState
		want     bool
	}{
		{StateInvalid, StateRepair, true}, {StateRepair, StateReEvaluate, true}, {StateReEvaluate, StateValid, true},
		{StateReEvaluate, StateInvalid, true}, {StateInvalid, StateExhausted, true},
		{StateInvalid, StateValid, false}, {StateRepair, StateValid, false}, {StateValid, StateInvalid, false},
		{StateInvalid, StateReEvaluate, false}, {StateExhausted, StateRepair, false},
	} {
		if got := CanTransition(tt.from, tt.to); got != tt.want {
			t.Errorf("CanTransition(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

func asTransition(err error, te **TransitionError) bool {
	e, ok := err.(*TransitionError)
	*te = e
	return ok
}

func hasIssue(issues []string, sub string) bool {
	for _, i := range issues {
		if strings.Contains(i, sub) {
			return true
		}
	}
	return false
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
