package governance

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/trace"
)

// Review verdicts.
const (
	VerdictAgree    = "agree"
	VerdictOverride = "override"
)

// Errors of recording a review: each is a mistake of the person recording
// it (the command exits 2).
var (
	ErrUnknownTurn    = errors.New("no stored turn has this id")
	ErrMissingCorrect = errors.New("an override must state the correct verdict (--correct pass|fail)")
	ErrBlankReason    = errors.New("the reason is blank (--reason)")
	ErrBlankReviewer  = errors.New("the reviewer is blank (--reviewer)")
	ErrBadVerdict     = errors.New("give exactly one of --agree and --override")
	ErrBadCorrect     = errors.New("--correct must be pass or fail")
	ErrAgreeCorrect   = errors.New("--correct and --correct-score belong to an override, not an agreement")
)

// ScorerRef is the scorer that produced a reviewed score.
type ScorerRef = verify.ScorerRef

// Review is one recorded human review of a stored turn.
type Review struct {
	ID           int64     `json:"id"`
	TurnID       int64     `json:"turn_id"`
	PackSHA256   string    `json:"pack_sha256"`
	Candidate    string    `json:"candidate"`
	Label        string    `json:"label"`
	Scorer       ScorerRef `json:"scorer"`
	Reviewer     string    `json:"reviewer"`
	Verdict      string    `json:"verdict"`
	Correct      string    `json:"correct,omitempty"`
	CorrectScore *float64  `json:"correct_score,omitempty"`
	Reason       string    `json:"reason"`
	CreatedAt    time.Time `json:"created_at"`
}

// Validate checks what a person must state: a reviewer, a reason, one
// verdict, and for an override the correct verdict.
func (r Review) Validate() error {
	var errs []error
	if strings.TrimSpace(r.Reviewer) == "" {
		errs = append(errs, ErrBlankReviewer)
	}
	switch r.Verdict {
	case VerdictOverride:
		switch r.Correct {
		case "":
			errs = append(errs, ErrMissingCorrect)
		case "pass", "fail":
		default:
			errs = append(errs, ErrBadCorrect)
		}
	case VerdictAgree:
		if r.Correct != "" || r.CorrectScore != nil {
			errs = append(errs, ErrAgreeCorrect)
		}
	default:
		errs = append(errs, ErrBadVerdict)
	}
	if strings.TrimSpace(r.Reason) == "" {
		errs = append(errs, ErrBlankReason)
	}
	return errors.Join(errs...)
}

// StoredTurn is a stored turn with what a reviewer needs to judge it.
type StoredTurn struct {
	TurnID     int64                `json:"turn_id"`
	RunID      int64                `json:"run_id"`
	PackSHA256 string               `json:"pack_sha256"`
	Candidate  string               `json:"candidate"`
	Label      string               `json:"label"`
	Status     string               `json:"status"`
	TurnScore  *float64             `json:"turn_score"`
	Scorer     ScorerRef            `json:"scorer"`
	Checks     []verify.CheckResult `json:"checks"`
	Tags       []string             `json:"failure_tags"`
	Evidence   map[string]string    `json:"evidence"` // trace, state_before, state_after: their sha256
	Answer     string               `json:"answer,omitempty"`
	// AnswerNote says why Answer is empty when it could not be read.
	AnswerNote string `json:"answer_note,omitempty"`

	traceKeptBy int64 // the turn's id when it keeps its trace itself (store.TurnRow.TraceKeptBy)
}

// Turn reads one stored turn; an unknown id wraps ErrUnknownTurn.
func Turn(ctx context.Context, st *store.Store, id int64) (StoredTurn, error) {
	var t StoredTurn
	var score sql.NullFloat64
	var result []byte
	var traceSHA, before, after, scorerID, scorerSHA, units string
	var traceKept bool
	err := st.DB().QueryRowContext(ctx, st.Rebind(`SELECT t.id, t.run_id, r.pack_sha256, r.candidate, t.label, t.status,
		t.turn_score, t.result, t.trace_sha256, `+store.TraceKeptColumn("t.")+`, t.state_before_sha256, t.state_after_sha256, t.scorer_id, t.scorer_sha256, r.units
		FROM company_eval_turns t JOIN company_eval_runs r ON r.id = t.run_id WHERE t.id = ?`), id).Scan(
		&t.TurnID, &t.RunID, &t.PackSHA256, &t.Candidate, &t.Label, &t.Status, &score, &result,
		&traceSHA, &traceKept, &before, &after, &scorerID, &scorerSHA, &units)
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("turn %d: %w", id, ErrUnknownTurn)
	}
	if err != nil {
		return t, fmt.Errorf("read turn %d: %w", id, err)
	}
	if score.Valid {
		t.TurnScore = &score.Float64
	}
	var res verify.TurnResult
	_ = json.Unmarshal(result, &res) // a malformed result leaves the fields empty
	t.Checks, t.Tags, t.Scorer = res.Checks, res.FailureTags, res.Scorer
	if t.Scorer.ID == "" {
		t.Scorer = scorerFromUnits(units, scorerID, scorerSHA)
	}
	t.Evidence = map[string]string{"trace": traceSHA, "state_before": before, "state_after": after}
	if traceKept {
		t.traceKeptBy = t.TurnID
	}
	return t, nil
}

func scorerFromUnits(units, id, sha string) ScorerRef {
	var u verify.Units
	_ = json.Unmarshal([]byte(units), &u)
	for _, s := range u.Scorers {
		if s.ID == id {
			return ScorerRef{ID: id, Version: s.Version, SHA256: sha}
		}
	}
	return ScorerRef{ID: id, SHA256: sha}
}

// WithAnswer fills t's answer from its stored trace, or says why it cannot.
func WithAnswer(ctx context.Context, st *store.Store, t StoredTurn) StoredTurn {
	sha := t.Evidence["trace"]
	if sha == "" {
		t.AnswerNote = "no trace stored with this turn (recorded before evidence was kept)"
		return t
	}
	b, err := st.ReadTrace(ctx, t.traceKeptBy, sha)
	if err != nil {
		t.AnswerNote = "trace unreadable: " + err.Error()
		return t
	}
	turn, _, err := trace.Parse(sha, bytes.NewReader(b))
	if err != nil {
		t.AnswerNote = "trace unreadable: " + err.Error()
		return t
	}
	t.Answer = turn.Answer
	return t
}

// RecordReview validates r, attributes it to the scorer that produced the
// turn's score, stores it and returns it as stored.
func RecordReview(ctx context.Context, st *store.Store, r Review) (Review, error) {
	if err := r.Validate(); err != nil {
		return r, err
	}
	t, err := Turn(ctx, st, r.TurnID)
	if err != nil {
		return r, err
	}
	r.PackSHA256, r.Candidate, r.Label, r.Scorer = t.PackSHA256, t.Candidate, t.Label, t.Scorer
	r.CreatedAt = time.Now().UTC()
	var cs any
	if r.CorrectScore != nil {
		cs = *r.CorrectScore
	}
	err = st.DB().QueryRowContext(ctx, st.Rebind(`INSERT INTO company_eval_reviews
		(turn_id, pack_sha256, candidate, label, scorer_id, scorer_version, scorer_sha256, reviewer, verdict, correct, correct_score, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.TurnID, r.PackSHA256, r.Candidate, r.Label, r.Scorer.ID, r.Scorer.Version, r.Scorer.SHA256,
		r.Reviewer, r.Verdict, r.Correct, cs, r.Reason, r.CreatedAt).Scan(&r.ID)
	if err != nil {
		return r, fmt.Errorf("record review of turn %d: %w", r.TurnID, err)
	}
	return r, nil
}

// ScorerStat is one scorer version's review record (item 5's review stats).
type ScorerStat struct {
	Scorer       string     `json:"scorer"`
	Version      string     `json:"version"`
	SHA256       string     `json:"sha256"`
	Reviews      int        `json:"reviews"`
	Overrides    int        `json:"overrides"`
	OverrideRate float64    `json:"override_rate"`
	CI95         [2]float64 `json:"ci95"`
	Status       string     `json:"status"`
	Reason       string     `json:"reason"`
}

// Stats is every reviewed scorer version's override rate, its Wilson 95%
// interval and status, for one pack (every pack when packSHA256 is empty).
func Stats(ctx context.Context, st *store.Store, packSHA256 string, th Thresholds) ([]ScorerStat, error) {
	q := `SELECT scorer_id, scorer_version, scorer_sha256, count(*), sum(CASE WHEN verdict = 'override' THEN 1 ELSE 0 END)
		FROM company_eval_reviews`
	var args []any
	if packSHA256 != "" {
		q += ` WHERE pack_sha256 = ?`
		args = append(args, packSHA256)
	}
	rows, err := st.DB().QueryContext(ctx, st.Rebind(q+` GROUP BY scorer_id, scorer_version, scorer_sha256`), args...)
	if err != nil {
		return nil, fmt.Errorf("read review stats: %w", err)
	}
	defer rows.Close()
	out := []ScorerStat{}
	for rows.Next() {
		var s ScorerStat
		if err := rows.Scan(&s.Scorer, &s.Version, &s.SHA256, &s.Reviews, &s.Overrides); err != nil {
			return nil, fmt.Errorf("read review stats: %w", err)
		}
		s.OverrideRate = float64(s.Overrides) / float64(s.Reviews)
		s.CI95 = Wilson(s.Overrides, s.Reviews)
		s.Status, s.Reason = Status(s.Reviews, s.Overrides, th)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read review stats: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scorer != out[j].Scorer {
			return out[i].Scorer < out[j].Scorer
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// PackThresholds are the pack's governance thresholds; the defaults
// without a pack.
func PackThresholds(p *pack.Pack) Thresholds {
	if p == nil || p.Governance.MinReviews == 0 {
		return DefaultThresholds()
	}
	return Thresholds{SuspectRate: p.Governance.SuspectRate, MinReviews: p.Governance.MinReviews}
}
