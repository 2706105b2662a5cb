package server

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/assay-eval/assay/host/governance"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
)

var reviewAction = regexp.MustCompile(`action="/review/(\d+)"`)

// sampleQueue queues n turns of candidate-a's run of the example pack, as
// `assay review sample` does.
func (f *fixture) sampleQueue(t testing.TB, n int) []governance.Candidate {
	t.Helper()
	p, ds := pack.Parse("example.yaml", mustRead(t, root+"/packs/example.yaml"), pack.Options{Scorers: f.verify.descriptions()})
	if p == nil {
		t.Fatal(ds)
	}
	got, err := governance.SampleQueue(context.Background(), f.st, governance.SampleRequest{Pack: p, Candidate: "candidate-a", N: n, Seed: 1, Strategy: governance.StrategyRandom})
	if err != nil || len(got) == 0 {
		t.Fatalf("sampling the review queue: %v (%d turns)", err, len(got))
	}
	return got
}

// reviewCount is how many reviews are stored.
func (f *fixture) reviewCount(t testing.TB) int {
	t.Helper()
	var n int
	if err := f.st.DB().QueryRow(`SELECT count(*) FROM company_eval_reviews`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCockpitReviewForm (issue 21 item 3, review page): the open queue of
// the company's packs with an agree/override form; every refusal of
// `assay review record` is shown and records nothing; another company's
// queue item is 404, a bad CSRF token 403. On SQLite and Postgres.
func TestCockpitReviewForm(t *testing.T) {
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) { testCockpitReviewForm(t, newFixture(t, be.DSN(t), nil)) })
	}
}

func testCockpitReviewForm(t *testing.T, f *fixture) {
	f.putExamplePack()
	f.upload(exampleTurns(t))
	b := newBrowser(t, f)
	b.signIn(f.token)
	if _, page := b.get("/review"); !strings.Contains(page, `id="empty"`) {
		t.Errorf("review page before sampling is not empty:\n%s", page)
	}
	f.sampleQueue(t, 2)
	_, page := b.get("/review")
	m := reviewAction.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "candidate-a") || !strings.Contains(page, `class="checks"`) {
		t.Fatalf("review page lacks a queued turn with its checks and form:\n%s", page)
	}
	path, csrf := "/review/"+m[1], csrfField.FindStringSubmatch(page)[1]
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrf}, "reviewer": {"ana"}, "reason": {"checked by hand"}, "verdict": {"override"}, "correct": {"fail"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	refusals := []struct {
		name string
		form url.Values
		want string
	}{
		{"override without correct", form("correct", ""), governance.ErrMissingCorrect.Error()},
		{"bad correct", form("correct", "maybe"), governance.ErrBadCorrect.Error()},
		{"blank reason", form("reason", " "), governance.ErrBlankReason.Error()},
		{"blank reviewer", form("reviewer", ""), governance.ErrBlankReviewer.Error()},
		{"no verdict", form("verdict", ""), governance.ErrBadVerdict.Error()},
		{"agree with correct", form("verdict", "agree", "correct", "pass"), governance.ErrAgreeCorrect.Error()},
	}
	for _, tc := range refusals {
		resp, body := b.postBody(path, tc.form)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `id="refused"`) || !strings.Contains(body, htmlEscape(tc.want)) {
			t.Errorf("%s: %d, want 422 showing %q:\n%s", tc.name, resp.StatusCode, tc.want, body)
		}
	}
	if resp := b.post(path, form("csrf", "bad")); resp.StatusCode != http.StatusForbidden {
		t.Errorf("review with a bad CSRF token = %d, want 403", resp.StatusCode)
	}
	other := newBrowser(t, f)
	other.signIn(f.other)
	_, otherPage := other.get("/review")
	if strings.Contains(otherPage, path) {
		t.Errorf("another company sees this company's queue item")
	}
	if resp := other.post(path, url.Values{"csrf": {csrfField.FindStringSubmatch(otherPage)[1]}, "reviewer": {"x"}, "reason": {"x"}, "verdict": {"agree"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another company's queue item = %d, want 404", resp.StatusCode)
	}
	if resp := b.post("/review/999999", form()); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a turn not in the queue = %d, want 404", resp.StatusCode)
	}
	if n := f.reviewCount(t); n != 0 {
		t.Fatalf("refused submissions recorded %d reviews", n)
	}
	resp := b.post(path, form())
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/review?recorded="+m[1] {
		t.Fatalf("a valid override = %d to %q, want a redirect to the queue naming the turn", resp.StatusCode, loc)
	}
	if _, page := b.get("/review?recorded=" + m[1]); !strings.Contains(page, `id="recorded"`) {
		t.Errorf("the queue does not say the review was recorded")
	}
	if n := f.reviewCount(t); n != 1 {
		t.Errorf("after one override %d reviews are stored, want 1", n)
	}
	if _, page := b.get("/review"); strings.Contains(page, `action="`+path+`"`) {
		t.Errorf("the reviewed turn is still in the open queue")
	}
	if resp, _ := b.postBody(path, form()); resp.StatusCode != http.StatusConflict {
		t.Errorf("reviewing a reviewed turn again = %d, want 409", resp.StatusCode)
	}
	_, scorers := b.get("/scorers")
	if !strings.Contains(scorers, `<td class="rate">1.000</td>`) {
		t.Errorf("scorers page does not show the override rate 1.000:\n%s", scorers)
	}
	if _, otherScorers := other.get("/scorers"); strings.Contains(otherScorers, `class="rate"`) {
		t.Errorf("another company sees this company's review stats")
	}
}

// TestCockpitScorersAndPromotions (issue 21 item 3): the scorers page
// shows the latest probe; the promotions page lists the company's
// promotion records only.
func TestCockpitScorersAndPromotions(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	f.putExamplePack()
	f.upload(exampleTurns(t))
	ctx := context.Background()
	if err := f.st.InsertProbes(ctx, []store.ProbeRow{{ScorerID: "probe-me", Version: "1.2.0", SHA256: "abc", Status: store.ProbeNondeterministic, Reason: "two scores differ", Turns: 3, Repeats: 2}}); err != nil {
		t.Fatal(err)
	}
	sp, err := f.st.ServerPack(ctx, exampleCompany, "example")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.st.DB().Exec(f.st.Rebind(`INSERT INTO company_eval_promotions (pack_sha256, candidate, baseline, approved_by, reason, runs, scorer_version, interlocks, rollback_on, created_at)
		VALUES (?, 'candidate-b', 'candidate-a', 'lead', 'faster', '[1]', 'v1', '{}', '[]', CURRENT_TIMESTAMP)`), sp.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, f)
	b.signIn(f.token)
	_, scorers := b.get("/scorers")
	for _, want := range []string{"probe-me", "nondeterministic", "two scores differ", `id="unreviewed"`} {
		if !strings.Contains(scorers, want) {
			t.Errorf("scorers page lacks %q:\n%s", want, scorers)
		}
	}
	_, proms := b.get("/promotions")
	for _, want := range []string{"candidate-b", "candidate-a", "lead", "faster", `href="/runs/1"`} {
		if !strings.Contains(proms, want) {
			t.Errorf("promotions page lacks %q:\n%s", want, proms)
		}
	}
	other := newBrowser(t, f)
	other.signIn(f.other)
	if _, page := other.get("/promotions"); !strings.Contains(page, `id="none"`) {
		t.Errorf("another company sees this company's promotions:\n%s", page)
	}
}
