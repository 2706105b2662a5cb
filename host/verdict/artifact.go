package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
)

// Artifact kinds.
const (
	KindRequirements       = "requirements"
	KindArchitecture       = "architecture"
	KindDatabaseSchema     = "database-schema"
	KindAPIContract        = "api-contract"
	KindSecurityReport     = "security-report"
	KindTestPlan           = "test-plan"
	KindImplementationPlan = "implementation-plan"
	KindEvaluation         = "evaluation"
	KindBenchmarkReport    = "benchmark-report"
	KindResearch           = "research"
	KindTrace              = "trace"
	KindRaw                = "raw"
)

// ArtifactSpec is what one kind of artifact must satisfy.
type ArtifactSpec struct {
	Kind      string
	Required  []string
	MinSize   int
	Forbidden []string
}

var specs = []ArtifactSpec{
	{KindRequirements, []string{"title", "functional", "acceptance"}, 200, []string{"[ ] checklist", "[x] 1.", "TODO"}},
	{KindArchitecture, []string{"context", "decision", "layers"}, 300, []string{"TODO", "// implement later"}},
	{KindDatabaseSchema, []string{"model", "relations"}, 200, []string{"TODO"}},
	{KindAPIContract, []string{"method", "path", "request", "response"}, 200, []string{"TODO"}},
	{KindSecurityReport, []string{"severity", "vulnerabilities", "remediation"}, 300, []string{"TODO"}},
	{KindTestPlan, []string{"unit", "integration", "scenarios"}, 200, []string{"TODO"}},
	{KindImplementationPlan, []string{"steps", "files"}, 200, []string{"TODO", "// implement later"}},
	{KindEvaluation, []string{"verdict", "score", "metrics"}, 100, nil},
	{KindBenchmarkReport, []string{"summary", "results"}, 100, nil},
	{KindResearch, []string{"findings", "sources"}, 200, nil},
	{KindTrace, []string{"runId", "spans"}, 50, nil},
	{KindRaw, nil, 0, nil},
}

// Kinds lists every artifact kind the contract defines.
func Kinds() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Kind
	}
	return out
}

// SpecFor returns the spec for kind and whether kind is known; an unknown
// kind gets the raw spec.
func SpecFor(kind string) (ArtifactSpec, bool) {
	for _, s := range specs {
		if s.Kind == kind {
			return s, true
		}
	}
	return specs[len(specs)-1], false
}

// stubPatterns are checked, in order, for kinds without a forbidden list;
// the first that matches is an issue.
var stubPatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"TODO", regexp.MustCompile(`(?i)\bTODO\b`)},
	{"FIXME", regexp.MustCompile(`(?i)\bFIXME\b`)},
	{"XXX", regexp.MustCompile(`(?i)\bXXX\b`)},
	{"implement later", regexp.MustCompile(`(?i)implement later`)},
	{"placeholder", regexp.MustCompile(`(?i)placeholder`)},
	{"not implemented", regexp.MustCompile(`(?i)not implemented`)},
	{"lorem ipsum", regexp.MustCompile(`(?i)lorem ipsum`)},
}

var (
	primaryKeyRe = regexp.MustCompile(`(?i)index|unique|@id|primary key`)
	relationRe   = regexp.MustCompile(`(?i)relation|references|foreign|\.prisma|create table`)
)

// ArtifactResult is the outcome of validating one artifact.
type ArtifactResult struct {
	Kind   string   `json:"kind"`
	Valid  bool     `json:"valid"`
	Score  float64  `json:"score"`
	Issues []string `json:"issues"`
}

// ValidateArtifact checks content against the spec of kind (unknown kinds
// use raw). content is text (a string, []byte or json.RawMessage holding a
// JSON string) or any other JSON value, which is measured as 2-space-indented
// JSON. The score is max(0, 1 - 0.15*issues); valid means no issues.
func ValidateArtifact(kind string, content any) ArtifactResult {
	spec, _ := SpecFor(kind)
	text, obj, marshalErr := artifactText(content)
	var issues []string
	if marshalErr != nil {
		issues = append(issues, fmt.Sprintf("content cannot be read as JSON: %v", marshalErr))
	}
	if n := utf16Len(strings.TrimSpace(text)); n < spec.MinSize {
		issues = append(issues, fmt.Sprintf("too small: %d characters, want at least %d", n, spec.MinSize))
	}
	for _, f := range spec.Required {
		if obj != nil {
			v, ok := obj[f]
			switch {
			case !ok:
				issues = append(issues, fmt.Sprintf("required field %q is missing", f))
			case isEmpty(v):
				issues = append(issues, fmt.Sprintf("required field %q is empty", f))
			}
		} else if !mentions(text, f) {
			issues = append(issues, fmt.Sprintf("required field %q is not mentioned", f))
		}
	}
	if len(spec.Forbidden) > 0 {
		for _, f := range spec.Forbidden {
			if strings.Contains(text, f) {
				issues = append(issues, fmt.Sprintf("forbidden content %q present", f))
			}
		}
	} else {
		for _, p := range stubPatterns {
			if p.re.MatchString(text) {
				issues = append(issues, fmt.Sprintf("stub content %q present", p.name))
				break
			}
		}
	}
	if spec.Kind == KindDatabaseSchema {
		if !primaryKeyRe.MatchString(text) {
			issues = append(issues, "no primary key or unique index (index, unique, @id or primary key)")
		}
		if !relationRe.MatchString(text) {
			issues = append(issues, "no relation (relation, references, foreign key or create table)")
		}
	}
	if issues == nil {
		issues = []string{}
	}
	return ArtifactResult{
		Kind:   spec.Kind,
		Valid:  len(issues) == 0,
		Score:  round12(max(0, 1-0.15*float64(len(issues)))),
		Issues: issues,
	}
}

// artifactText returns the text to measure and, when content is a JSON
// object, the object.
func artifactText(content any) (string, map[string]any, error) {
	switch c := content.(type) {
	case nil:
		return "", nil, nil
	case string:
		return c, nil, nil
	case []byte:
		return string(c), nil, nil
	case json.RawMessage:
		var v any
		if err := json.Unmarshal(c, &v); err != nil {
			return string(c), nil, err
		}
		return artifactText(v)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(content); err != nil {
		return "", nil, err
	}
	text := strings.TrimSuffix(buf.String(), "\n")
	var obj map[string]any
	if err := json.Unmarshal(buf.Bytes(), &obj); err != nil {
		obj = nil // not an object: measured as text
	}
	return text, obj, nil
}

// isEmpty reports whether a decoded JSON value is null or empty.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// mentions reports whether text mentions field case-insensitively, as
// spelled or in its singular form ("relations" is mentioned by "@relation").
func mentions(text, field string) bool {
	t, f := strings.ToLower(text), strings.ToLower(field)
	if strings.Contains(t, f) {
		return true
	}
	switch {
	case strings.HasSuffix(f, "ies") && len(f) > 4:
		return strings.Contains(t, strings.TrimSuffix(f, "ies")+"y")
	case strings.HasSuffix(f, "s") && len(f) > 3:
		return strings.Contains(t, strings.TrimSuffix(f, "s"))
	}
	return false
}

// utf16Len is the length JavaScript reports for s, which the contract's
// minimum sizes are measured in.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
