package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDriftUnits (issue 17 item 4): every unit that differs is named with
// its two values; units unknown on one side are not compared.
func TestDriftUnits(t *testing.T) {
	t.Parallel()
	base := Units{PackSHA256: "aaaaaaaaaaaaaaaa", ScorerVersion: "v1", PolicyVersion: "p1", SkillVersion: "s1",
		Scorers: []ScorerRef{{ID: "task_state", Version: "1.0.0", SHA256: "19e2ffff"}, {ID: "tool_sequence", Version: "2.0.0", SHA256: "aaaa0000"}}}
	with := func(f func(u *Units)) Units {
		u := base
		u.Scorers = append([]ScorerRef(nil), base.Scorers...)
		f(&u)
		return u
	}
	tests := []struct {
		name string
		to   Units
		want []Drift
	}{
		{"same", base, nil},
		{"pack", with(func(u *Units) { u.PackSHA256 = "bbbbbbbbbbbbbbbb" }), []Drift{{"pack", "aaaaaaaaaaaa", "bbbbbbbbbbbb"}}},
		{"scorer version and binary", with(func(u *Units) {
			u.ScorerVersion, u.Scorers[0] = "v2", ScorerRef{ID: "task_state", Version: "1.1.0", SHA256: "7c01eeee"}
		}), []Drift{{"scorer task_state", "1.0.0 (sha 19e2…)", "1.1.0 (sha 7c01…)"}}},
		{"scorer removed", with(func(u *Units) { u.ScorerVersion, u.Scorers = "v2", u.Scorers[:1] }),
			[]Drift{{"scorer tool_sequence", "2.0.0 (sha aaaa…)", ""}}},
		{"policy", with(func(u *Units) { u.PolicyVersion = "p2" }), []Drift{{"policy_version", "p1", "p2"}}},
		{"skill", with(func(u *Units) { u.SkillVersion = "" }), []Drift{{"skill_version", "s1", ""}}},
		{"old run: scorers unknown", Units{PackSHA256: base.PackSHA256, ScorerVersion: "v0", PolicyVersion: "p1", SkillVersion: "s1"},
			[]Drift{{"scorer_version", "v1", "v0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, DriftBetween(base, tt.to)); diff != "" {
				t.Errorf("DriftBetween() (-want +got):\n%s", diff)
			}
		})
	}
	if got := (Drift{"scorer task_state", "1.0.0 (sha 19e2…)", "1.1.0 (sha 7c01…)"}).String(); got != "drift: scorer task_state 1.0.0 (sha 19e2…) -> 1.1.0 (sha 7c01…)" {
		t.Errorf("banner = %q", got)
	}
}
