package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/host/verify"
)

// TestServeAuthOutcomes (issue 21 item 2): no token, a wrong one and a
// revoked one are 401 on every endpoint; another company's pack and run are
// 404, never 403.
func TestServeAuthOutcomes(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	f.putExamplePack()
	id, _ := f.upload(exampleTurns(t))
	revoked, tok, err := f.st.CreateToken(context.Background(), exampleCompany, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	run := "/v1/runs/" + itoa(id)
	endpoints := []struct{ method, path string }{
		{"GET", "/v1/packs"}, {"PUT", "/v1/packs/example"}, {"POST", "/v1/runs?pack=example"},
		{"GET", run}, {"GET", run + "/summary"}, {"GET", run + "/results"},
	}
	for _, e := range endpoints {
		for name, token := range map[string]string{"none": "", "wrong": "assay_nope", "revoked": revoked} {
			resp, body := f.do(e.method, e.path, token, nil)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s %s with %s token = %d %s, want 401 problem+json", e.method, e.path, name, resp.StatusCode, body)
			}
		}
	}
	for _, e := range []struct{ method, path string }{{"GET", run}, {"GET", run + "/summary"}, {"GET", run + "/results"}, {"POST", "/v1/runs?pack=example"}} {
		resp, body := f.do(e.method, e.path, f.other, []byte("{}\n"))
		if resp.StatusCode != http.StatusNotFound || bytes.Contains(body, []byte(exampleCompany)) {
			t.Errorf("%s %s with another company's token = %d %s, want 404 naming nothing of it", e.method, e.path, resp.StatusCode, body)
		}
	}
	if _, body := f.do("GET", "/v1/packs", f.other, nil); !bytes.Contains(body, []byte(`"packs":[]`)) {
		t.Errorf("GET /v1/packs for another company = %s, want no packs", body)
	}
}

// TestServePutPackValidates (issue 21 item 2): a pack is validated exactly
// as `pack validate`, 422 with every positioned diagnostic; a pack of
// another company is refused; GET /v1/packs lists the stored ones.
func TestServePutPackValidates(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	bad := []byte("name: x\ncompany: {id: " + exampleCompany + "}\ntasks:\n  - label: 1\n    scorer: nope\n")
	resp, body := f.do("PUT", "/v1/packs/bad", f.token, bad)
	var p Problem
	json.Unmarshal(body, &p)
	if resp.StatusCode != http.StatusUnprocessableEntity || len(p.Diagnostics) < 2 {
		t.Fatalf("PUT a bad pack = %d %s, want 422 with every diagnostic", resp.StatusCode, body)
	}
	for _, d := range p.Diagnostics {
		if d.Pos.File != "bad.yaml" || d.Pos.Line == 0 {
			t.Errorf("diagnostic %+v has no position in bad.yaml", d)
		}
	}
	f.putExamplePack()
	resp, body = f.do("PUT", "/v1/packs/theirs", f.other, mustRead(t, root+"/packs/example.yaml"))
	if resp.StatusCode != http.StatusUnprocessableEntity || !bytes.Contains(body, []byte(codeCompany)) {
		t.Errorf("PUT another company's pack = %d %s, want 422 %s", resp.StatusCode, body, codeCompany)
	}
	resp, body = f.do("GET", "/v1/packs", f.token, nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"name":"example"`)) || bytes.Contains(body, []byte(`"bad"`)) {
		t.Errorf("GET /v1/packs = %d %s, want only example", resp.StatusCode, body)
	}
	if resp, _ := f.do("POST", "/v1/runs?pack=nope", f.token, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /v1/runs for an unknown pack = %d, want 404", resp.StatusCode)
	}
}

// TestServeUploadVerifies (issue 21 item 2): an upload is verified in the
// server, its status, summary and NDJSON results read back, and a retried
// upload with the same Idempotency-Key is the same run. On SQLite and
// Postgres.
func TestServeUploadVerifies(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			f := newFixture(t, b.DSN(t), nil)
			f.putExamplePack()
			turns := exampleTurns(t)
			id, v := f.upload(turns, "Idempotency-Key", "retry-1")
			if v.Status != "completed" || v.Counts == nil || v.Counts.Candidates != 3 || v.Counts.Turns != 9 || v.Progress.Done != v.Progress.Total {
				t.Fatalf("GET /v1/runs/%d = %+v, want completed with 3 candidates, 9 turns, progress done", id, v)
			}
			_, body := f.do("GET", "/v1/runs/"+itoa(id)+"/summary", f.token, nil)
			var rep verify.Report
			if err := json.Unmarshal(body, &rep); err != nil || len(rep.Candidates) != 3 || len(rep.Frontier) == 0 {
				t.Errorf("summary = %s (%v), want 3 candidates and a frontier", body, err)
			}
			resp, body := f.do("GET", "/v1/runs/"+itoa(id)+"/results", f.token, nil)
			lines := strings.Split(strings.TrimSpace(string(body)), "\n")
			if resp.Header.Get("Content-Type") != "application/x-ndjson" || len(lines) != 9 {
				t.Errorf("results = %s, %d lines, want 9 NDJSON turns", resp.Header.Get("Content-Type"), len(lines))
			}
			for _, l := range lines {
				var tr verify.TurnResult
				if err := json.Unmarshal([]byte(l), &tr); err != nil || tr.Label == "" || tr.TurnScore == nil {
					t.Errorf("results line %s: %v, want a scored turn", l, err)
				}
			}
			resp, body = f.do("POST", "/v1/runs?pack=example", f.token, turns, "Idempotency-Key", "retry-1")
			if resp.StatusCode != http.StatusAccepted || !bytes.Contains(body, []byte(`"run_id":`+itoa(id))) {
				t.Errorf("retried upload = %d %s, want 202 with run %d", resp.StatusCode, body, id)
			}
			if !bytes.Contains(body, []byte(`"reused":true`)) {
				t.Errorf("retried upload = %s, want it to say the earlier run is reused", body)
			}
		})
	}
}

// TestServeBadTurnsFail (issue 21 item 2): an upload whose turns cannot be
// read fails with each problem's position.
func TestServeBadTurnsFail(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	f.putExamplePack()
	_, v := f.upload([]byte("{oops\n"))
	if v.Status != "failed" || !strings.Contains(v.Error, "upload.jsonl:1:2") {
		t.Errorf("bad turns: %+v, want failed naming line 1 col 2", v)
	}
}

// TestServeBodyCap (issue 21 item 2): a body over the cap is 413, for
// packs and uploads alike, and leaves no run behind.
func TestServeBodyCap(t *testing.T) {
	f := newSQLiteFixture(t, func(c *Config) { c.BodyLimit = 1024 })
	big := bytes.Repeat([]byte(" "), 4096)
	if resp, body := f.do("PUT", "/v1/packs/example", f.token, big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT a large pack = %d %s, want 413", resp.StatusCode, body)
	}
	f.srv.cfg.BodyLimit = 1 << 20
	f.putExamplePack()
	f.srv.cfg.BodyLimit = 1024
	if resp, body := f.do("POST", "/v1/runs?pack=example", f.token, big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST a large upload = %d %s, want 413", resp.StatusCode, body)
	}
	if ups, _ := f.st.Uploads(context.Background(), exampleCompany, 10, 0); len(ups) != 0 {
		t.Errorf("a refused upload left %d runs", len(ups))
	}
}

// TestServeConcurrentRunLimit (issue 21 item 2): a token with as many runs
// in flight as allowed gets 429 with Retry-After; another token does not.
func TestServeConcurrentRunLimit(t *testing.T) {
	f := newSQLiteFixture(t, func(c *Config) { c.RunsPerToken = 1 })
	f.verify.gate = make(chan struct{})
	f.putExamplePack()
	turns := exampleTurns(t)
	resp, body := f.do("POST", "/v1/runs?pack=example", f.token, turns)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first upload = %d %s", resp.StatusCode, body)
	}
	resp, body = f.do("POST", "/v1/runs?pack=example", f.token, turns)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second upload = %d %s, want 429 with Retry-After", resp.StatusCode, body)
	}
	close(f.verify.gate)
	var acc struct {
		RunID int64 `json:"run_id"`
	}
	json.Unmarshal(mustJSON(t, f, "POST", "/v1/runs?pack=example", turns, http.StatusTooManyRequests, http.StatusAccepted), &acc)
}

// TestServeHealth (issue 21 item 1): /healthz answers while the process
// runs; /readyz runs the ready check and the database ping.
func TestServeHealth(t *testing.T) {
	broken := errors.New("manifest and schema disagree")
	var ready error
	f := newSQLiteFixture(t, func(c *Config) { c.Ready = func(context.Context) error { return ready } })
	if resp, _ := f.do("GET", "/healthz", "", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	if resp, _ := f.do("GET", "/readyz", "", nil); resp.StatusCode != 200 {
		t.Errorf("/readyz = %d, want 200", resp.StatusCode)
	}
	ready = broken
	if resp, body := f.do("GET", "/readyz", "", nil); resp.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(broken.Error())) {
		t.Errorf("/readyz when not ready = %d %s, want 503 saying why", resp.StatusCode, body)
	}
}

// mustJSON retries a request while it answers retry (the previous run is
// finishing) and wants status.
func mustJSON(t *testing.T, f *fixture, method, path string, body []byte, retry, status int) []byte {
	t.Helper()
	for i := 0; i < 500; i++ {
		resp, out := f.do(method, path, f.token, body)
		if resp.StatusCode == status {
			return out
		}
		if resp.StatusCode != retry {
			t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, out, status)
		}
		waitABit()
	}
	t.Fatalf("%s %s still %d", method, path, retry)
	return nil
}

// TestServeShutdownInterrupts (issue 21 item 1): Shutdown waits for
// verifications in flight until its deadline, then interrupts them; the run
// is failed with a message saying it resumes when uploaded again.
func TestServeShutdownInterrupts(t *testing.T) {
	f := newSQLiteFixture(t, nil)
	f.verify.gate = make(chan struct{}) // never opened: the run cannot finish
	f.putExamplePack()
	resp, body := f.do("POST", "/v1/runs?pack=example", f.token, exampleTurns(t))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload = %d %s", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err == nil {
		t.Error("Shutdown() with a run in flight past its deadline = nil, want an error saying it was interrupted")
	}
	v := f.wait(1)
	if v.Status != "failed" || !strings.Contains(v.Error, "resume") {
		t.Errorf("interrupted run = %+v, want failed saying it resumes", v)
	}
}

// TestServeCountsIgnoredTurns: an uploaded turn whose label is not a task of
// the pack is not dropped silently: the run's counts say so, and the
// summary names it and carries the input warning.
func TestServeCountsIgnoredTurns(t *testing.T) {
	f := newFixture(t, storetest.SQLite(t), nil)
	f.putExamplePack()
	turns := exampleTurns(t)
	first, _, _ := bytes.Cut(turns, []byte("\n"))
	var turn map[string]any
	if err := json.Unmarshal(first, &turn); err != nil {
		t.Fatal(err)
	}
	turn["label"] = "not_a_task_of_example"
	extra, err := json.Marshal(turn)
	if err != nil {
		t.Fatal(err)
	}
	turns = append(append(bytes.TrimRight(turns, "\n"), '\n'), append(extra, '\n')...)
	id, v := f.upload(turns)
	if v.Status != "completed" || v.Counts == nil || v.Counts.Turns != 9 || v.Counts.Ignored != 1 || v.Counts.InputWarnings != 1 {
		t.Fatalf("GET /v1/runs/%d = %+v, want completed, 9 turns, 1 ignored, 1 input warning", id, v.Counts)
	}
	_, body := f.do("GET", "/v1/runs/"+itoa(id)+"/summary", f.token, nil)
	var rep verify.Report
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	var ignored []string
	for _, c := range rep.Candidates {
		ignored = append(ignored, c.IgnoredLabels...)
	}
	if len(ignored) != 1 || ignored[0] != "not_a_task_of_example" || len(rep.InputWarnings) != 1 || rep.InputWarnings[0].Code != "run.unknown_label" {
		t.Errorf("summary ignored %q, input warnings %+v; want not_a_task_of_example and its run.unknown_label warning", ignored, rep.InputWarnings)
	}
}
