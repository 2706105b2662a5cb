package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium (or a Chrome) for the browser test.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestCockpitInBrowser (issue 21 tests): headless Chromium signs in, opens
// the overview, a run and a turn, submits a review override and sees the
// override rate on the scorers page change, and saves a screenshot of each
// page in the directory the log names ($ASSAY_SCREENSHOT_DIR, else a new
// temporary one).
func TestCockpitInBrowser(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser test")
	}
	f := newSQLiteFixture(t, nil)
	f.putExamplePack()
	f.upload(exampleTurns(t))
	f.sampleQueue(t, 2)
	dir := os.Getenv("ASSAY_SCREENSHOT_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "assay-cockpit-screens-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	step := func(what string, a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, a); err != nil {
			t.Fatalf("chromium: %s: %v", what, err)
		}
	}
	text := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatalf("chromium: reading the page: %v", err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("chromium: screenshot of %s: %v", name, err)
		}
		path := filepath.Join(dir, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of the %s page: %s", name, path)
	}
	step("open the sign-in form", chromedp.Steps(chromedp.Navigate(f.http.URL+"/signin"), chromedp.WaitVisible(chromedp.ID("token"))))
	step("sign in", chromedp.Steps(chromedp.SendKeys(chromedp.ID("token"), f.token), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.CSS("section.pack"))))
	overview := text()
	shot("overview")
	step("open a run", chromedp.Steps(chromedp.Click(chromedp.CSS("section.pack table a")), chromedp.WaitVisible(chromedp.CSS("section.run"))))
	run := text()
	shot("run")
	step("open a turn", chromedp.Steps(chromedp.Click(chromedp.CSS("section.run table a")), chromedp.WaitVisible(chromedp.CSS("table.checks"))))
	turn := text()
	shot("turn")
	step("open the scorers page", chromedp.Steps(chromedp.Navigate(f.http.URL+"/scorers"), chromedp.WaitVisible(chromedp.ID("unreviewed"))))
	before := text()
	shot("scorers-before")
	step("open the review page", chromedp.Steps(chromedp.Navigate(f.http.URL+"/review"), chromedp.WaitVisible(chromedp.CSS("section.review form"))))
	review := text()
	shot("review")
	step("submit an override", chromedp.Steps(
		chromedp.Click(chromedp.CSS(`section.review input[value="override"]`)),
		chromedp.SetValue(chromedp.CSS(`section.review select[name="correct"]`), "fail"),
		chromedp.SendKeys(chromedp.CSS(`section.review input[name="reviewer"]`), "ana"),
		chromedp.SendKeys(chromedp.CSS(`section.review input[name="reason"]`), "the answer misses the blocker"),
		chromedp.Click(chromedp.CSS(`section.review button`)), chromedp.WaitVisible(chromedp.CSS("#recorded, #refused"))))
	if got := text(); !strings.Contains(got, "recorded") || strings.Contains(got, "Not recorded") {
		t.Fatalf("the override was not recorded:\n%s", got)
	}
	step("open the scorers page again", chromedp.Steps(chromedp.Navigate(f.http.URL+"/scorers"), chromedp.WaitVisible(chromedp.CSS("td.rate"))))
	after := text()
	shot("scorers")
	if !strings.Contains(after, "1.000") || strings.Contains(before, "1.000") {
		t.Errorf("the override rate did not change to 1.000 after the override:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for page, want := range map[string][2]string{"overview": {overview, "Pareto frontier"}, "run": {run, "Tasks"}, "turn": {turn, "Checks"},
		"review": {review, "Record review"}, "scorers": {after, "override rate"}} {
		if !strings.Contains(want[0], want[1]) {
			t.Errorf("the %s page shows no %q:\n%s", page, want[1], want[0])
		}
	}
}
