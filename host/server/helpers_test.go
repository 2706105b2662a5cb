package server

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/hashicorp/go-hclog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/cockpit"
	"github.com/assay-eval/assay/host/kpi"
	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/host/verify"
	"github.com/assay-eval/assay/pkg/diag"
	"github.com/assay-eval/assay/pkg/scorer"
	"github.com/assay-eval/assay/plugins/builtin"
	sdk "github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
)

// root is the repository, for packs/ and examples/.
const root = "../.."

// exampleCompany is packs/example.yaml's company.id.
const exampleCompany = "0b1aeb33-4f4e-4c70-8d83-a66d087e24c5"

// inProcess scores with the built-in scorers inside the test.
type inProcess struct {
	scorers map[scorer.ID]sdk.Scorer
	gate    chan struct{} // when set, Start waits for it
}

func newInProcess() *inProcess {
	v := &inProcess{scorers: map[scorer.ID]sdk.Scorer{}}
	for _, s := range builtin.Scorers() {
		v.scorers[s.Describe().ID] = s
	}
	return v
}

func (v *inProcess) Score(ctx context.Context, id scorer.ID, cases []*scorer.Case) []batchrun.Outcome {
	out := make([]batchrun.Outcome, len(cases))
	for i, c := range cases {
		out[i].Result, out[i].Err = v.scorers[id].Score(ctx, c)
	}
	return out
}

func (v *inProcess) descriptions() map[scorer.ID]scorer.Description {
	m := map[scorer.ID]scorer.Description{}
	for id, s := range v.scorers {
		m[id] = s.Describe()
	}
	return m
}

func (v *inProcess) LoadPack(file string, src []byte) (*pack.Pack, diag.List) {
	return pack.Parse(file, src, pack.Options{Scorers: v.descriptions(), Checks: []pack.Check{kpi.NewChecker()}})
}

func (v *inProcess) Engine(file string, src []byte) (verify.Config, func(context.Context) error, error) {
	ch := kpi.NewChecker()
	p, ds := pack.Parse(file, src, pack.Options{Scorers: v.descriptions(), Checks: []pack.Check{ch}})
	if p == nil {
		return verify.Config{}, nil, ds.Errors()
	}
	start := func(ctx context.Context) error {
		if v.gate != nil {
			select {
			case <-v.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	return verify.Config{Pack: p, Scorers: v, Descriptions: v.descriptions(), CEL: ch.Set(), ScorerVersion: "test", HostVersion: "test"}, start, nil
}

// fixture is a running server with a store and tokens.
type fixture struct {
	t      testing.TB
	st     *store.Store
	srv    *Server
	http   *httptest.Server
	token  string // exampleCompany's
	other  string // another company's
	verify *inProcess
}

func newFixture(t testing.TB, dsn string, tweak func(*Config)) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, st: st, verify: newInProcess()}
	cfg := Config{Store: st, Verifier: f.verify, TempDir: t.TempDir()}
	cfg.Cockpit = cockpit.New(cockpit.Config{Store: st, LoadPack: f.verify.LoadPack, Logger: hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Error})})
	if tweak != nil {
		tweak(&cfg)
	}
	f.srv = New(cfg)
	f.http = httptest.NewServer(f.srv.Handler())
	t.Cleanup(func() {
		f.http.Close()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		f.srv.Shutdown(sctx)
	})
	if f.token, _, err = st.CreateToken(ctx, exampleCompany, "test"); err != nil {
		t.Fatal(err)
	}
	if f.other, _, err = st.CreateToken(ctx, "other-company", "test"); err != nil {
		t.Fatal(err)
	}
	return f
}

func newSQLiteFixture(t *testing.T, tweak func(*Config)) *fixture {
	return newFixture(t, storetest.SQLite(t), tweak)
}

// do sends a request with token (none when empty) and returns the response
// and its body.
func (f *fixture) do(method, path, token string, body []byte, hdr ...string) (*http.Response, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}

// putExamplePack uploads packs/example.yaml as "example".
func (f *fixture) putExamplePack() {
	f.t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "packs", "example.yaml"))
	if err != nil {
		f.t.Fatal(err)
	}
	if resp, body := f.do("PUT", "/v1/packs/example", f.token, src); resp.StatusCode != 200 {
		f.t.Fatalf("PUT /v1/packs/example = %d %s", resp.StatusCode, body)
	}
}

// upload posts turns and waits for the run to finish; it returns the run id
// and its GET /v1/runs/{id} view.
func (f *fixture) upload(turns []byte, hdr ...string) (int64, runView) {
	f.t.Helper()
	resp, body := f.do("POST", "/v1/runs?pack=example", f.token, turns, hdr...)
	if resp.StatusCode != http.StatusAccepted {
		f.t.Fatalf("POST /v1/runs = %d %s", resp.StatusCode, body)
	}
	var acc struct {
		RunID int64 `json:"run_id"`
	}
	json.Unmarshal(body, &acc)
	return acc.RunID, f.wait(acc.RunID)
}

func (f *fixture) wait(id int64) runView {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, body := f.do("GET", "/v1/runs/"+itoa(id), f.token, nil)
		var v runView
		json.Unmarshal(body, &v)
		if v.Status == store.UploadCompleted || v.Status == store.UploadFailed {
			return v
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %d still %s after 60s", id, v.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// exampleTurns is examples/runs as one turns file: every turn with its
// trace and snapshots inline.
func exampleTurns(t testing.TB) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, c := range []string{"candidate-a", "candidate-b", "candidate-c"} {
		dir := filepath.Join(root, "examples", "runs", c)
		b, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rows []map[string]any
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			label := r["label"].(string)
			turn := map[string]any{"label": label, "candidate": c}
			for _, k := range []string{"persona", "latency_s", "cost_usd", "started_at", "finished_at"} {
				turn[k] = r[k]
			}
			var trace []json.RawMessage
			tr, err := os.ReadFile(filepath.Join(dir, "results", label+".ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range bytes.Split(tr, []byte("\n")) {
				if len(bytes.TrimSpace(line)) > 0 {
					trace = append(trace, json.RawMessage(line))
				}
			}
			turn["trace"] = trace
			for k, s := range map[string]string{"state_before": "before", "state_after": "after"} {
				if snap, err := os.ReadFile(filepath.Join(dir, "state", label+"."+s+".json")); err == nil {
					turn[k] = json.RawMessage(snap)
				}
			}
			line, _ := json.Marshal(turn)
			out.Write(append(line, '\n'))
		}
	}
	return out.Bytes()
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func waitABit() { time.Sleep(20 * time.Millisecond) }
