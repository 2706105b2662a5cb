package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"html/template"

	"github.com/assay-eval/assay/host/cockpit"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/host/verify"
)

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	runHref   = regexp.MustCompile(`href="(/runs/\d+)"`)
	turnHref  = regexp.MustCompile(`href="(/runs/\d+/turns/[^"]+)"`)
)

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t testing.TB
	c *http.Client
	f *fixture
}

func newBrowser(t testing.TB, f *fixture) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, f: f, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.f.http.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(path string, form url.Values) *http.Response {
	b.t.Helper()
	resp, err := b.c.PostForm(b.f.http.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// signIn signs in with token and reports the sign-in response.
func (b *browser) signIn(token string) *http.Response {
	b.t.Helper()
	_, form := b.get("/signin")
	m := csrfField.FindStringSubmatch(form)
	if m == nil {
		b.t.Fatalf("sign-in form has no CSRF field:\n%s", form)
	}
	return b.post("/signin", url.Values{"csrf": {m[1]}, "token": {token}})
}

// TestCockpitPages (issue 21 item 3): sign in with a token (HttpOnly,
// SameSite=Strict cookie, CSRF-checked form), then the overview, a run
// page, a turn and the compare page; another company's run is 404. On
// SQLite and Postgres.
func TestCockpitPages(t *testing.T) {
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) { testCockpitPages(t, newFixture(t, be.DSN(t), nil)) })
	}
}

func testCockpitPages(t *testing.T, f *fixture) {
	f.putExamplePack()
	f.upload(exampleTurns(t))
	b := newBrowser(t, f)
	if resp, _ := b.get("/"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
		t.Errorf("/ signed out = %d to %q, want a redirect to /signin", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := b.post("/signin", url.Values{"token": {f.token}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in without CSRF = %d, want 403", resp.StatusCode)
	}
	if resp := b.signIn("assay_wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign-in with a wrong token = %d, want 401", resp.StatusCode)
	}
	resp := b.signIn(f.token)
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "assay_session" {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in = %d with cookie %+v, want a redirect and an HttpOnly SameSite=Strict session", resp.StatusCode, session)
	}
	_, overview := b.get("/")
	for _, want := range []string{"candidate-a", "candidate-b", "candidate-c", "Pareto frontier", "Review", "Scorers", "Promotions"} {
		if !strings.Contains(overview, want) {
			t.Errorf("overview lacks %q:\n%s", want, overview)
		}
	}
	runPath := runHref.FindStringSubmatch(overview)[1]
	_, run := b.get(runPath)
	for _, want := range []string{"task_create_release_blocker", "memory_grounded_recent_work", "validate_delivery_tools", "<svg", "verdict"} {
		if !strings.Contains(run, want) {
			t.Errorf("run page %s lacks %q", runPath, want)
		}
	}
	turnPath := turnHref.FindStringSubmatch(run)[1]
	_, turn := b.get(turnPath)
	for _, want := range []string{"scorer", "sha256", "Checks", "State before"} {
		if !strings.Contains(turn, want) {
			t.Errorf("turn page %s lacks %q", turnPath, want)
		}
	}
	// The trace is read back from the stored evidence as a timeline with
	// each tool call's arguments and the answer (issue 21 item 3).
	for _, want := range []string{`class="timeline"`, "tool_start", "answer (finalized)"} {
		if !strings.Contains(turn, want) {
			t.Errorf("turn page %s lacks the trace timeline (%q)", turnPath, want)
		}
	}
	_, cmp := b.get("/compare?pack=example&a=candidate-a&b=candidate-b")
	if !strings.Contains(cmp, "mean delta") || !strings.Contains(cmp, "-0.") {
		t.Errorf("compare page lacks the deltas:\n%s", cmp)
	}
	if _, filtered := b.get(runPath + "?label=validate"); strings.Contains(filtered, "memory_grounded_recent_work") {
		t.Errorf("a filtered run page still lists other tasks")
	}
	other := newBrowser(t, f)
	other.signIn(f.other)
	if resp, _ := other.get(runPath); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another company's run = %d, want 404", resp.StatusCode)
	}
	if resp, _ := other.get(turnPath); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another company's turn = %d, want 404", resp.StatusCode)
	}
	if resp := b.post("/signout", url.Values{"csrf": {"bad"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out with a bad CSRF token = %d, want 403", resp.StatusCode)
	}
}

// TestCockpitOverviewListsRecordedPacks: a pack verified from the command
// line into the server's database (never uploaded) is on its company's
// overview, said to be so, with its candidates' runs; another company
// sees no pack; once the same pack is uploaded it is listed once, as the
// server's. On SQLite and Postgres.
func TestCockpitOverviewListsRecordedPacks(t *testing.T) {
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			f := newFixture(t, be.DSN(t), nil)
			src := mustRead(t, root+"/packs/example.yaml")
			cfg, _, err := f.verify.Engine("example.yaml", src)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Store = f.st
			runs := []string{filepath.Join(root, "examples", "runs", "candidate-a"), filepath.Join(root, "examples", "runs", "candidate-b")}
			if _, err := verify.Run(context.Background(), verify.Request{Engine: cfg, Runs: runs}); err != nil {
				t.Fatal(err)
			}
			const cli = "verified from the command line"
			b := newBrowser(t, f)
			b.signIn(f.token)
			_, overview := b.get("/")
			for _, want := range []string{`<section class="pack">`, cli, "candidate-a", "candidate-b", "Pareto frontier", "pareto_filter"} {
				if !strings.Contains(overview, want) {
					t.Errorf("overview lacks %q:\n%s", want, overview)
				}
			}
			if strings.Contains(overview, "No packs yet") {
				t.Errorf("overview says there is no pack:\n%s", overview)
			}
			if m := runHref.FindStringSubmatch(overview); m == nil {
				t.Errorf("overview links no run:\n%s", overview)
			} else if resp, _ := b.get(m[1]); resp.StatusCode != http.StatusOK {
				t.Errorf("run %s = %d, want 200", m[1], resp.StatusCode)
			}
			other := newBrowser(t, f)
			other.signIn(f.other)
			if _, page := other.get("/"); !strings.Contains(page, "No packs yet") || strings.Contains(page, "candidate-a") {
				t.Errorf("another company's overview shows the pack:\n%s", page)
			}
			// A second version of the pack (another sha256, the same name)
			// verified after the first: the overview shows the latest and
			// counts the earlier one.
			v2 := append(append([]byte{}, src...), "\n# version 2\n"...)
			cfg2, _, err := f.verify.Engine("example.yaml", v2)
			if err != nil {
				t.Fatal(err)
			}
			cfg2.Store = f.st
			if _, err := verify.Run(context.Background(), verify.Request{Engine: cfg2, Runs: runs[:1]}); err != nil {
				t.Fatal(err)
			}
			_, overview = b.get("/")
			if n := strings.Count(overview, `<section class="pack">`); n != 1 || !strings.Contains(overview, "1 earlier version(s)") ||
				!strings.Contains(overview, cfg2.Pack.SHA256[:12]) {
				t.Errorf("with two versions the overview shows %d sections, want the latest (%s) counting one earlier:\n%s", n, cfg2.Pack.SHA256[:12], overview)
			}
			// Uploaded, the first version is the server's; the second stays
			// a recorded pack, now with no earlier version of its own.
			f.putExamplePack()
			_, overview = b.get("/")
			if n := strings.Count(overview, `<section class="pack">`); n != 2 || strings.Count(overview, cli) != 1 ||
				!strings.Contains(overview, "Pack example") || strings.Contains(overview, "earlier version") {
				t.Errorf("after the upload the overview shows %d sections, want the server's pack and the second version:\n%s", n, overview)
			}
		})
	}
}

// TestReportHTML (issue 21 item 4): the HTML report parses, holds every
// task of every candidate and the compare view, and loads nothing and runs
// no script.
func TestReportHTML(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	f.putExamplePack()
	f.upload(exampleTurns(t))
	p, ds := pack.Parse("example.yaml", mustRead(t, root+"/packs/example.yaml"), pack.Options{Scorers: f.verify.descriptions()})
	if p == nil {
		t.Fatal(ds)
	}
	var buf bytes.Buffer
	if err := cockpit.Report(context.Background(), &buf, f.st, p, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("the report does not parse: %v", err)
	}
	var text strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" {
			t.Error("the report has a script")
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && strings.Contains(a.Val, "://") {
				t.Errorf("the report loads %s", a.Val)
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data + "\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	got := text.String()
	for _, want := range []string{"candidate-a", "candidate-b", "candidate-c", "task_create_release_blocker", "memory_grounded_recent_work", "validate_delivery_tools", "candidate-a → candidate-b"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(got, "validate_delivery_tools"); n < 3 {
		t.Errorf("report lists validate_delivery_tools %d times, want once per candidate at least", n)
	}
	if err := cockpit.Report(context.Background(), io.Discard, f.st, p, []string{"nobody"}, time.Now()); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("report for an unknown candidate: %v, want an error naming it", err)
	}
}

// postBody posts a form and returns the response and its body.
func (b *browser) postBody(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.PostForm(b.f.http.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func htmlEscape(s string) string { return template.HTMLEscapeString(s) }

// TestCockpitTokenCheckFailure: when the database cannot answer, the
// cockpit says the server failed (500) — it neither tells a user with a
// good token that the token is invalid nor sends a signed-in session back
// to the sign-in form, as it did when every lookup error read as a refusal.
func TestCockpitTokenCheckFailure(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	signedIn := newBrowser(t, f)
	if resp := signedIn.signIn(f.token); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", resp.StatusCode)
	}
	fresh := newBrowser(t, f)
	_, form := fresh.get("/signin")
	m := csrfField.FindStringSubmatch(form)
	if m == nil {
		t.Fatalf("sign-in form has no CSRF field:\n%s", form)
	}
	f.st.Close()
	if resp, _ := signedIn.get("/"); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("/ with a session while the database fails = %d to %q, want 500", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := fresh.post("/signin", url.Values{"csrf": {m[1]}, "token": {f.token}}); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("sign-in while the database fails = %d, want 500", resp.StatusCode)
	}
	if resp, _ := f.do("GET", "/v1/packs", f.token, nil); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("API call while the database fails = %d, want 500", resp.StatusCode)
	}
}

// TestCockpitTimelineOfSmallTrace: a trace of at most 512 bytes is kept in
// its turn's row, not as a blob (docs/evidence.md), and the turn page reads
// it from there into its timeline. On SQLite and Postgres. It fails if the
// page looks for the trace only among the blobs.
func TestCockpitTimelineOfSmallTrace(t *testing.T) {
	for _, be := range storetest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			f := newFixture(t, be.DSN(t), nil)
			f.putExamplePack()
			line := `{"label":"validate_delivery_tools","candidate":"candidate-s","persona":"qa-release-lead","latency_s":3,"trace":[` +
				`{"type":"phase","phase":"skill_dispatch"},` +
				`{"type":"runtime","payload":{"event_type":"tool_start","tool_name":"validate-delivery","tool_input":{"target":"release-4.2"}}},` +
				`{"type":"final_answer","payload":{"message":"Validated: 13 passed."}},` +
				`{"type":"done","reply":"ok","finalized":true}]}` + "\n"
			f.upload([]byte(line))
			b := newBrowser(t, f)
			b.signIn(f.token)
			_, overview := b.get("/")
			m := runHref.FindStringSubmatch(overview)
			if m == nil {
				t.Fatalf("overview links no run:\n%s", overview)
			}
			_, run := b.get(m[1])
			tm := turnHref.FindStringSubmatch(run)
			if tm == nil {
				t.Fatalf("run page %s links no turn", m[1])
			}
			_, turn := b.get(tm[1])
			for _, want := range []string{`class="timeline"`, "validate-delivery", "answer (finalized)"} {
				if !strings.Contains(turn, want) {
					t.Errorf("turn page %s lacks the small trace's timeline (%q):\n%s", tm[1], want, turn)
				}
			}
		})
	}
}
