package taskeval

import (
	"fmt"
	"strings"
)

// CategoryScore is one category's persisted score; its fields are exactly
// the contract's categoryScores[] item.
type CategoryScore struct {
	Category           Category      `json:"category"`
	DeterministicScore int           `json:"deterministicScore"`
	AIScore            int           `json:"aiScore"`
	FinalScore         int           `json:"finalScore"`
	Weight             float64       `json:"weight"`
	Band               Band          `json:"band"`
	Rationale          string        `json:"rationale"`
	Evidence           []EvidenceRef `json:"evidence"`
}

// Result is one task's evaluation.
type Result struct {
	TaskID         string          `json:"taskId"`
	CategoryScores []CategoryScore `json:"categoryScores"`
	OverallScore   int             `json:"overallScore"`
	Band           Band            `json:"band"`
	EvidenceBundle *Bundle         `json:"evidenceBundle"`
	// DeterministicOnly is true when no AI answer was given and every
	// aiScore is the deterministic score.
	DeterministicOnly bool `json:"deterministicOnly,omitempty"`
}

// Evaluate blends deterministic scores with an AI answer into a Result.
// Without an answer (ai == nil) each aiScore is the deterministic score, so
// the final score equals it, the rationale is detRationale, and the result
// is marked DeterministicOnly. The AI's evidence ids must exist in bundle.
func Evaluate(taskID string, det Scores, ai *AIAnswer, detRationale string, bundle *Bundle) (*Result, error) {
	if err := CheckEvidence(ai, bundle).Err(); err != nil {
		return nil, err
	}
	res := &Result{TaskID: taskID, EvidenceBundle: bundle, DeterministicOnly: ai == nil}
	finals := FinalScores{}
	for _, c := range Categories() {
		d, ok := det[c]
		if !ok {
			return nil, fmt.Errorf("evaluating %s: missing deterministic score for %s", taskID, c)
		}
		cs := CategoryScore{Category: c, DeterministicScore: d, AIScore: d, Weight: c.Weight(),
			Rationale: detRationale, Evidence: []EvidenceRef{}}
		if ai != nil {
			a, ok := ai.Categories[c]
			if !ok {
				return nil, fmt.Errorf("evaluating %s: AI answer lacks category %s", taskID, c)
			}
			cs.AIScore, cs.Rationale = a.Score, a.Rationale
			cs.Evidence = append(cs.Evidence, a.Evidence...)
		}
		if err := cs.complete(); err != nil {
			return nil, fmt.Errorf("evaluating %s: %w", taskID, err)
		}
		finals[c] = cs.FinalScore
		res.CategoryScores = append(res.CategoryScores, cs)
	}
	var err error
	if res.OverallScore, err = OverallScore(finals); err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", taskID, err)
	}
	res.Band, _ = ScoreBand(res.OverallScore)
	return res, nil
}

// complete computes FinalScore and Band from the deterministic and AI
// scores and checks the rationale.
func (cs *CategoryScore) complete() error {
	f, err := FinalScore(cs.DeterministicScore, cs.AIScore)
	if err != nil {
		return fmt.Errorf("%s: %w", cs.Category, err)
	}
	cs.FinalScore = f
	cs.Band, _ = ScoreBand(f)
	if isBlank(cs.Rationale) {
		return fmt.Errorf("%s: rationale must not be blank", cs.Category)
	}
	return nil
}

// Verify checks that a result is authoritative: exactly the three
// categories in canonical order with their weights, every final score and
// band recomputed from its deterministic and AI scores, non-blank
// rationales, and the overall score and band derived from the finals.
func (r *Result) Verify() error {
	if len(r.CategoryScores) != 3 {
		return fmt.Errorf("result %s: want 3 category scores, got %d", r.TaskID, len(r.CategoryScores))
	}
	finals := FinalScores{}
	for i, c := range Categories() {
		cs := r.CategoryScores[i]
		if cs.Category != c {
			return fmt.Errorf("result %s: categoryScores[%d] is %q, want %s", r.TaskID, i, cs.Category, c)
		}
		if err := checkInt(string(c)+".finalScore", cs.FinalScore); err != nil {
			return fmt.Errorf("result %s: %w", r.TaskID, err)
		}
		want := cs
		if err := want.complete(); err != nil {
			return fmt.Errorf("result %s: %w", r.TaskID, err)
		}
		if cs.FinalScore != want.FinalScore || cs.Band != want.Band || cs.Weight != c.Weight() {
			return fmt.Errorf("result %s: %s: finalScore %d band %s weight %v do not match the blend (%d %s %v)",
				r.TaskID, c, cs.FinalScore, cs.Band, cs.Weight, want.FinalScore, want.Band, c.Weight())
		}
		finals[c] = cs.FinalScore
	}
	overall, err := OverallScore(finals)
	if err != nil {
		return fmt.Errorf("result %s: %w", r.TaskID, err)
	}
	band, _ := ScoreBand(overall)
	if r.OverallScore != overall || r.Band != band {
		return fmt.Errorf("result %s: overallScore %d band %s do not match the category finals (%d %s)",
			r.TaskID, r.OverallScore, r.Band, overall, band)
	}
	return nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
