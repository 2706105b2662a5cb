package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/jsonpos"
	"github.com/assay-eval/assay/pkg/scorer"
)

// Units are what a run's scores depend on besides its inputs: its drift
// units (docs/evidence.md). Two runs whose units differ are never compared
// silently.
type Units struct {
	PackSHA256    string      `json:"pack_sha256"`
	Scorers       []ScorerRef `json:"scorers"`
	ScorerVersion string      `json:"scorer_version"`
	PolicyVersion string      `json:"policy_version,omitempty"`
	SkillVersion  string      `json:"skill_version,omitempty"`
}

// Drift is one unit that differs between two runs.
type Drift struct {
	Unit string `json:"unit"`
	From string `json:"from"`
	To   string `json:"to"`
}

// String is the drift banner line of d.
func (d Drift) String() string {
	return fmt.Sprintf("drift: %s %s -> %s", d.Unit, orNone(d.From), orNone(d.To))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// DriftBetween lists every unit that differs from a to b: the pack, each
// scorer (added, removed, or another version or binary), the policy and the
// skill version. The combined scorer version is implied by the scorers and
// listed only when one side's scorers are unknown (a run recorded before
// units were kept).
func DriftBetween(a, b Units) []Drift {
	var out []Drift
	add := func(unit, from, to string) {
		if from != to {
			out = append(out, Drift{Unit: unit, From: from, To: to})
		}
	}
	if a.PackSHA256 != "" && b.PackSHA256 != "" {
		add("pack", shortSHA(a.PackSHA256), shortSHA(b.PackSHA256))
	}
	if a.ScorerVersion != "" && b.ScorerVersion != "" {
		as, bs := scorerMap(a.Scorers), scorerMap(b.Scorers)
		if len(as) == 0 || len(bs) == 0 { // a run recorded before its scorers were
			add("scorer_version", shortSHA(a.ScorerVersion), shortSHA(b.ScorerVersion))
		} else {
			for _, id := range unionKeys(as, bs) {
				add("scorer "+id, scorerUnit(as, id), scorerUnit(bs, id))
			}
		}
	}
	add("policy_version", a.PolicyVersion, b.PolicyVersion)
	add("skill_version", a.SkillVersion, b.SkillVersion)
	return out
}

func scorerMap(refs []ScorerRef) map[string]ScorerRef {
	m := make(map[string]ScorerRef, len(refs))
	for _, r := range refs {
		m[r.ID] = r
	}
	return m
}

// unionKeys is the keys either map has, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	var ids []string
	for id := range a {
		ids = append(ids, id)
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func scorerUnit(m map[string]ScorerRef, id string) string {
	r, ok := m[id]
	if !ok {
		return ""
	}
	sha := r.SHA256
	if len(sha) > 4 {
		sha = sha[:4] + "…"
	}
	return fmt.Sprintf("%s (sha %s)", r.Version, sha)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// RunUnits reads the drift units recorded with a run; a run recorded
// before units were kept has only its pack and scorer version.
func RunUnits(r store.RunRow) Units {
	var u Units
	if len(r.Units) > 0 {
		_ = json.Unmarshal(r.Units, &u) // a malformed record compares as unknown
	}
	if u.PackSHA256 == "" {
		u.PackSHA256 = r.PackSHA256
	}
	if u.ScorerVersion == "" {
		u.ScorerVersion = r.ScorerVersion
	}
	return u
}

// units are the drift units of a verification of in.
func (e *Engine) units(in *Input) Units {
	u := ConfigUnits(e.cfg)
	u.PolicyVersion, u.SkillVersion = in.PolicyVersion, in.SkillVersion
	return u
}

// ConfigUnits are the drift units of verifying with cfg: its pack and every
// scorer its tasks use, upstream scorers included; no policy or skill
// version.
func ConfigUnits(cfg Config) Units {
	used := map[scorer.ID]bool{}
	for _, t := range cfg.Pack.Tasks {
		used[t.Scorer] = true
		for _, up := range Upstreams(cfg.Descriptions, t) {
			used[up] = true
		}
	}
	u := Units{PackSHA256: cfg.Pack.SHA256, Scorers: []ScorerRef{}, ScorerVersion: cfg.ScorerVersion}
	for id := range used {
		ref := cfg.Identities[id]
		ref.ID = string(id)
		u.Scorers = append(u.Scorers, ref)
	}
	sort.Slice(u.Scorers, func(i, j int) bool { return u.Scorers[i].ID < u.Scorers[j].ID })
	return u
}

// runVersions is a run directory's run.json: the harness's policy and
// skill versions.
type runVersions struct {
	PolicyVersion string `json:"policy_version"`
	SkillVersion  string `json:"skill_version"`
}

// readRunVersions reads DIR/run.json when present, inside root like every
// file of the run; a malformed file is a positioned error diagnostic.
func readRunVersions(dir, root string) (runVersions, diag.List, error) {
	var v runVersions
	path := filepath.Join(dir, "run.json")
	src, err := readInput(path, root, 1<<20)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return v, nil, nil
	case errors.Is(err, errOutsideRun) || errors.Is(err, errNotRegular):
		return v, diag.List{diag.Errorf(diag.Pos{File: path}, inputCode(err, ""), "%v", err)}, nil
	case err != nil:
		return v, nil, fmt.Errorf("reading run.json: %w", err)
	}
	if _, err := jsonpos.Decode(src, &v, jsonpos.Options{RejectDuplicates: true}); err != nil {
		off := 0
		var je *jsonpos.Error
		if errors.As(err, &je) {
			off = je.Off
		}
		return v, diag.List{jsonpos.Source{File: path, Src: src}.Errorf(off, "run.json", "%v", err)}, nil
	}
	return v, nil, nil
}
