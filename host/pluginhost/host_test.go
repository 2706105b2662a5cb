package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/conformance"
	"github.com/assay-eval/assay/sdk/sdktest"
)

// short keeps the failure tests fast.
func short(m *pluginhost.Manifest, opts ...pluginhost.Option) *pluginhost.Host {
	return pluginhost.New(m, append([]pluginhost.Option{
		pluginhost.WithCallTimeout(5 * time.Second),
		pluginhost.WithStartTimeout(5 * time.Second),
		pluginhost.WithRestartBackoff(10 * time.Millisecond),
	}, opts...)...)
}

func labelled(labels ...string) []*scorer.Case {
	cases := make([]*scorer.Case, len(labels))
	for i, l := range labels {
		cases[i] = &scorer.Case{ID: fmt.Sprintf("%d-%s", i, l), Task: scorer.Task{Label: l}}
	}
	return cases
}

// summary renders outcomes as "ok:<label>" or "err" so tables can compare
// them; errs collects the messages.
func summary(outs []batchrun.Outcome) (got []string, errs []error) {
	for _, o := range outs {
		if o.Err != nil {
			got = append(got, "err")
			errs = append(errs, o.Err)
			continue
		}
		detail := ""
		if len(o.Result.Checks) > 0 {
			detail = o.Result.Checks[0].Detail
		}
		got = append(got, "ok:"+detail)
	}
	return got, errs
}

func TestScoreFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		id      scorer.ID
		labels  []string
		want    []string
		wantErr string // every error contains it
		is      error  // every error wraps it
		timeout time.Duration
	}{
		{"panic fails only its case", "test_panic", []string{"a", "panic", "b"}, []string{"ok:a", "err", "ok:b"},
			"scorer panicked: test_panic: asked to panic", nil, 5 * time.Second},
		{"exit mid-batch: the cases are run alone", "test_exit", []string{"a", "exit", "b", "c"}, []string{"ok:a", "err", "ok:b", "ok:c"},
			"run alone 2 time(s): plugin test_exit: plugin broke", pluginhost.ErrCrashed, 5 * time.Second},
		{"hang past the deadline", "test_sleep", []string{"a", "sleep", "b"}, []string{"ok:a", "err", "ok:b"},
			"run alone 1 time(s): plugin test_sleep: plugin hung: no answer within 1.05s, the deadline of a call of 1 case(s) (1s + 50ms a case",
			pluginhost.ErrDeadline, time.Second},
		{"unknown scorer", "nope", []string{"a"}, []string{"err"}, `unknown scorer "nope"`, pluginhost.ErrUnknownScorer, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := short(manifest(), pluginhost.WithCallTimeout(tt.timeout))
			defer h.Close()
			got, errs := summary(h.Score(context.Background(), tt.id, labelled(tt.labels...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Score(%s, %v) (-want +got):\n%s\nerrors: %v", tt.id, tt.labels, diff, errs)
			}
			for _, err := range errs {
				t.Logf("outcome error: %v", err)
				var se *pluginhost.ScorerError
				if !errors.As(err, &se) || se.ID != tt.id {
					t.Errorf("Score(%s) error %v is not a *ScorerError for %s", tt.id, err, tt.id)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Score(%s) error = %q, want it to contain %q", tt.id, err, tt.wantErr)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("Score(%s) error = %v, want it to wrap %v", tt.id, err, tt.is)
				}
			}
			// The plugin recovers: the next batch scores.
			if tt.is != pluginhost.ErrUnknownScorer {
				got, errs = summary(h.Score(context.Background(), tt.id, labelled("after")))
				if diff := cmp.Diff([]string{"ok:after"}, got); diff != "" {
					t.Errorf("Score(%s) after the failure (-want +got):\n%s\nerrors: %v", tt.id, diff, errs)
				}
			}
		})
	}
}

func TestStdoutBeforeServing(t *testing.T) {
	t.Parallel()
	m := manifest()
	sum := sha256File(t, bin("test_stdout"))
	m.Entries = append(m.Entries, pluginhost.Entry{ID: "test_stdout", Binary: filepath.Base(bin("test_stdout")), SHA256: sum, Version: "0.0.1", Protocol: 1,
		KPIs: []scorer.KPI{{Key: "label_seen", ValueType: scorer.Bool}}, Needs: []scorer.Need{scorer.NeedTrace}})
	h := short(m)
	defer h.Close()
	got, errs := summary(h.Score(context.Background(), "test_stdout", labelled("a", "b")))
	if diff := cmp.Diff([]string{"err", "err"}, got); diff != "" {
		t.Fatalf("Score(test_stdout) (-want +got):\n%s", diff)
	}
	for _, err := range errs {
		t.Logf("outcome error: %v", err)
		if !strings.Contains(err.Error(), "hello from a plugin that writes to stdout") {
			t.Errorf("Score(test_stdout) error = %q, want it to quote the garbage line", err)
		}
	}
	if err := h.Verify(context.Background(), "test_stdout"); err == nil {
		t.Errorf("Verify(test_stdout) = nil, want an error")
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Fatalf("sha256sum %s: %v", path, err)
	}
	return strings.Fields(string(out))[0]
}

func TestChangedBinaryRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, bin("test_env"), dir+"/assay-scorer-test_env")
	m := &pluginhost.Manifest{Dir: dir}
	if _, err := pluginhost.Register(context.Background(), m, []string{dir + "/assay-scorer-test_env"}, nil); err != nil {
		t.Fatalf("Register() error = %v", err)
	}
	f, err := os.OpenFile(dir+"/assay-scorer-test_env", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("tampered"))
	f.Close()

	h := short(m)
	defer h.Close()
	_, errs := summary(h.Score(context.Background(), "test_env", labelled("a")))
	if len(errs) != 1 || !errors.Is(errs[0], pluginhost.ErrChecksum) || !strings.Contains(errs[0].Error(), "register it again") {
		t.Errorf("Score(changed binary) errors = %v, want one wrapping ErrChecksum that says to register again", errs)
	}
	if err := h.Verify(context.Background(), "test_env"); !errors.Is(err, pluginhost.ErrChecksum) {
		t.Errorf("Verify(changed binary) = %v, want ErrChecksum", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeMismatchRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*pluginhost.Entry)
		want   string
	}{
		{"version", func(e *pluginhost.Entry) { e.Version = "9.9.9" }, `version "0.0.1", manifest "9.9.9"`},
		{"kpi keys", func(e *pluginhost.Entry) { e.KPIs = append(e.KPIs, scorer.KPI{Key: "extra"}) }, "KPI keys [label_seen], manifest [extra label_seen]"},
		{"id", func(e *pluginhost.Entry) { e.Binary = filepath.Base(bin("test_exit")) }, `id "test_exit", manifest "test_env"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := manifest()
			for i := range m.Entries {
				if m.Entries[i].ID == "test_env" {
					tt.change(&m.Entries[i])
					if tt.name == "id" {
						m.Entries[i].SHA256 = sha256File(t, bin("test_exit"))
					}
				}
			}
			h := short(m)
			defer h.Close()
			_, errs := summary(h.Score(context.Background(), "test_env", labelled("a")))
			if len(errs) != 1 || !errors.Is(errs[0], pluginhost.ErrMismatch) || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("Score(mismatched %s) errors = %v, want ErrMismatch mentioning %q", tt.name, errs, tt.want)
			}
			if _, err := h.Describe(context.Background(), "test_env"); !errors.Is(err, pluginhost.ErrMismatch) {
				t.Errorf("Describe(mismatched %s) = %v, want ErrMismatch", tt.name, err)
			}
			if err := h.Verify(context.Background(), "test_env"); !errors.Is(err, pluginhost.ErrMismatch) {
				t.Errorf("Verify(mismatched %s) = %v, want ErrMismatch", tt.name, err)
			}
		})
	}
}

func TestEnvironmentAllowList(t *testing.T) {
	t.Setenv("ASSAY_DB", "postgres://admin:secret@db/prod")
	t.Setenv("PGPASSWORD", "secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("LANG", "C.UTF-8")
	h := short(manifest())
	defer h.Close()
	outs := h.Score(context.Background(), "test_env", labelled("a"))
	if outs[0].Err != nil {
		t.Fatalf("Score(test_env) error = %v", outs[0].Err)
	}
	env := outs[0].Result.Diagnostics
	names := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
		if strings.Contains(kv, "secret") {
			t.Errorf("plugin environment holds a host secret: %q", kv)
		}
	}
	for _, k := range []string{"ASSAY_DB", "PGPASSWORD", "AWS_SECRET_ACCESS_KEY"} {
		if names[k] {
			t.Errorf("plugin environment has %s, want it withheld", k)
		}
	}
	for _, k := range []string{"PATH", "LANG"} {
		if !names[k] {
			t.Errorf("plugin environment lacks %s; got %v", k, env)
		}
	}
}

// recorder is an in-process scorer that reports what it was sent.
type recorder struct{ needs []sdk.Need }

func (r recorder) Describe() sdk.Description {
	return sdk.Description{ID: "recorder", Version: "1", KPIs: []sdk.KPI{}, Needs: r.needs}
}

func (recorder) Score(_ context.Context, c *sdk.Case) (*sdk.Result, error) {
	if c.Task.Label == "panic" {
		panic("recorder panics")
	}
	var got []string
	if len(c.Turn.Events) > 0 {
		got = append(got, "events")
	}
	if c.Turn.Answer != "" {
		got = append(got, "answer")
	}
	if c.StateBefore != nil {
		got = append(got, "state_before")
	}
	if c.StateAfter != nil {
		got = append(got, "state_after")
	}
	if c.Upstream != nil {
		got = append(got, "upstream")
	}
	return &sdk.Result{Score: 1, Diagnostics: got}, nil
}

func TestInProcessStripsUndeclaredParts(t *testing.T) {
	t.Parallel()
	full := &scorer.Case{ID: "c", Task: scorer.Task{Label: "x"},
		Turn:        scorer.Case{}.Turn,
		StateBefore: &sdk.Snapshot{}, StateAfter: &sdk.Snapshot{}, Upstream: []scorer.Upstream{{Scorer: "a"}}}
	full.Turn.Events = []sdk.Event{{Line: 1, Type: "done"}}
	full.Turn.Answer = "hi"
	tests := []struct {
		needs []sdk.Need
		want  []string
	}{
		{[]sdk.Need{sdk.NeedTrace}, []string{"answer"}}, // the derived turn, not its per-line events
		{[]sdk.Need{sdk.NeedTrace, sdk.NeedEvents}, []string{"events", "answer"}},
		{[]sdk.Need{sdk.NeedAnswer}, []string{"answer"}},
		{[]sdk.Need{sdk.NeedStateBefore, sdk.NeedStateAfter}, []string{"state_before", "state_after"}},
		{[]sdk.Need{sdk.NeedUpstream}, []string{"upstream"}},
		{nil, nil},
	}
	for _, tt := range tests {
		h := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(recorder{needs: tt.needs}))
		outs := h.Score(context.Background(), "recorder", []*scorer.Case{full})
		if outs[0].Err != nil {
			t.Fatalf("Score(recorder %v) error = %v", tt.needs, outs[0].Err)
		}
		if diff := cmp.Diff(tt.want, outs[0].Result.Diagnostics); diff != "" {
			t.Errorf("Score(recorder %v) sent parts (-want +got):\n%s", tt.needs, diff)
		}
	}
	if full.StateBefore == nil || full.Turn.Answer == "" {
		t.Errorf("Score changed the caller's case")
	}
}

func TestInProcessFailures(t *testing.T) {
	t.Parallel()
	h := pluginhost.New(&pluginhost.Manifest{}, pluginhost.WithInProcess(recorder{}))
	got, errs := summary(h.Score(context.Background(), "recorder", labelled("a", "panic")))
	if diff := cmp.Diff([]string{"ok:", "err"}, got); diff != "" {
		t.Fatalf("Score(in-process panic) (-want +got):\n%s", diff)
	}
	if !strings.Contains(errs[0].Error(), "scorer recorder: case \"1-panic\": scorer panicked: recorder panics") {
		t.Errorf("Score(in-process panic) error = %q", errs[0])
	}
	d, err := h.Describe(context.Background(), "recorder")
	if err != nil || d.ID != "recorder" || d.SDKVersion != sdk.SDKVersion {
		t.Errorf("Describe(in-process) = %+v, %v", d, err)
	}
}

func TestConcurrentBatches(t *testing.T) {
	t.Parallel()
	h := short(manifest(), pluginhost.WithCallTimeout(10*time.Second))
	defer h.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			labels := make([]string, 20)
			for i := range labels {
				labels[i] = fmt.Sprintf("g%d-%d", g, i)
			}
			got, errs := summary(h.Score(context.Background(), "test_panic", labelled(labels...)))
			for i, l := range labels {
				if got[i] != "ok:"+l {
					t.Errorf("goroutine %d: case %d = %s, want ok:%s (errors %v)", g, i, got[i], l, errs)
				}
			}
		}()
	}
	wg.Wait()
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, o := range h.Score(ctx, "test_env", labelled("a", "b")) {
		if !errors.Is(o.Err, context.Canceled) {
			t.Errorf("Score(cancelled) error = %v, want context.Canceled", o.Err)
		}
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := short(manifest())
	if _, err := h.Describe(context.Background(), "test_env"); err != nil {
		t.Fatalf("Describe(test_env) error = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	outs := h.Score(context.Background(), "test_env", labelled("a"))
	if !errors.Is(outs[0].Err, pluginhost.ErrClosed) {
		t.Errorf("Score after Close error = %v, want ErrClosed", outs[0].Err)
	}
}

func TestPluginLogsReachHostLogger(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	h := short(manifest(), pluginhost.WithLogger(logger))
	defer h.Close()
	h.Score(context.Background(), "test_panic", labelled("panic"))
	out := buf.String()
	if !strings.Contains(out, "test_panic") || !strings.Contains(out, "case failed") {
		t.Errorf("host log = %q, want the plugin's \"case failed\" line under test_panic", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

func TestDescribeFlag(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bin("test_env"), "--describe")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("test_env --describe: %v\n%s", err, stderr.String())
	}
	var d scorer.Description
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("test_env --describe printed %q, not a description: %v", out, err)
	}
	want := scorer.Description{ID: "test_env", Version: "0.0.1", SDKVersion: sdk.SDKVersion, Protocols: []int{1},
		KPIs: []scorer.KPI{{Key: "label_seen", ValueType: scorer.Bool}}, Needs: []scorer.Need{scorer.NeedTrace}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("test_env --describe (-want +got):\n%s", diff)
	}
}

func TestServeRefusesWithoutHost(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(bin("test_env")).Output()
	if err == nil || len(out) != 0 {
		t.Errorf("running a plugin directly = %q, %v; want an exit error and nothing on stdout", out, err)
	}
}

func TestConformanceOfBinaries(t *testing.T) {
	t.Parallel()
	if !toolSequence {
		t.Skip("plugins/toolsequence did not build")
	}
	sdktest.RunBinary(t, bin("tool_sequence"))

	rep, err := conformance.CheckBinary(context.Background(), bin("test_panic"), nil, labelled("a", "panic")...)
	if err != nil {
		t.Fatalf("CheckBinary(test_panic) error = %v", err)
	}
	var failed []string
	for _, r := range rep {
		if !r.OK() {
			failed = append(failed, r.Name)
		}
	}
	// test_panic also passes cases whose task sets none of its KPI keys.
	if diff := cmp.Diff([]string{conformance.CheckScoresInRange, conformance.CheckUnsetKPIs}, failed); diff != "" {
		t.Errorf("CheckBinary(test_panic) failing checks (-want +got):\n%s\nreport: %+v", diff, rep)
	}
	if _, err := conformance.CheckBinary(context.Background(), bin("test_stdout"), nil); err == nil {
		t.Errorf("CheckBinary(test_stdout) error = nil, want a launch error")
	}
}

// TestStartTimeout launches a "plugin" that never completes the handshake:
// the host gives up after the start timeout, kills it, and fails the cases
// with a message naming the plugin, instead of hanging, and does not launch
// it a second time.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/assay-scorer-test_mute"
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		start time.Duration
	}{
		{"short start timeout", 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &pluginhost.Manifest{Dir: dir, Entries: []pluginhost.Entry{{ID: "test_mute", Binary: filepath.Base(path), SHA256: sha256File(t, path),
				Version: "0.0.1", Protocol: 1, KPIs: []scorer.KPI{{Key: "label_seen", ValueType: scorer.Bool}}, Needs: []scorer.Need{scorer.NeedTrace}}}}
			h := short(m, pluginhost.WithStartTimeout(tt.start))
			defer h.Close()
			begin := time.Now()
			got, errs := summary(h.Score(context.Background(), "test_mute", labelled("a", "b")))
			elapsed := time.Since(begin)
			if diff := cmp.Diff([]string{"err", "err"}, got); diff != "" {
				t.Fatalf("Score(test_mute) (-want +got):\n%s", diff)
			}
			for _, err := range errs {
				var se *pluginhost.ScorerError
				if !errors.As(err, &se) || se.ID != "test_mute" {
					t.Errorf("Score(test_mute) error %v is not a *ScorerError for test_mute", err)
				}
				if !strings.Contains(err.Error(), "timeout while waiting for plugin to start") {
					t.Errorf("Score(test_mute) error = %q, want it to say the plugin did not start in time", err)
				}
				// A plugin that hangs silently is not launched a second
				// time with AutoMTLS (the fallback is for plugins that
				// exit): it costs one start timeout, not two.
				if strings.Contains(err.Error(), "AutoMTLS") {
					t.Errorf("Score(test_mute) error = %q, want one launch, not a second with AutoMTLS", err)
				}
			}
			if limit := 20 * tt.start; elapsed > limit {
				t.Errorf("Score(test_mute) took %v with a %v start timeout, want at most %v", elapsed, tt.start, limit)
			}
			t.Logf("outcome errors after %v: %v", elapsed, errs)
		})
	}
}
