package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/host/store/storetest"
	"github.com/assay-eval/assay/internal/buildflags"
	"github.com/assay-eval/assay/packs"
	"github.com/assay-eval/assay/pkg/scorer"
)

var invBuiltins = []string{"answer_keywords", "composite", "memory_grounding", "stigmergic", "task_state", "tool_sequence"}

// invEnv is one set of the three places: a plugin directory with a manifest,
// a schema file and a database.
type invEnv struct {
	pluginDir, schemaPath, dsn string
}

// flags are the global flags that point assay at the environment.
func (e invEnv) flags() []string {
	return []string{"--plugin-dir", e.pluginDir, "--schema", e.schemaPath, "--db", e.dsn}
}

// newInvEnv makes the three places agree on ids. The manifest's binaries
// are placeholder files: nothing here launches them.
func newInvEnv(t testing.TB, dsn string, ids []string) invEnv {
	t.Helper()
	dir := t.TempDir()
	e := invEnv{pluginDir: filepath.Join(dir, "plugins"), schemaPath: filepath.Join(dir, "schema.json"), dsn: dsn}
	invWriteManifest(t, e.pluginDir, ids)
	if err := os.WriteFile(e.schemaPath, packs.Schema(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pack.RewriteScorerEnum(e.schemaPath, ids); err != nil {
		t.Fatal(err)
	}
	invSyncDB(t, dsn, ids)
	return e
}

func invWriteManifest(t testing.TB, dir string, ids []string) {
	t.Helper()
	m := &pluginhost.Manifest{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		bin := pluginhost.BinaryPrefix + id
		content := []byte("placeholder for " + id)
		if err := os.WriteFile(filepath.Join(dir, bin), content, 0o755); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		m.Entries = append(m.Entries, pluginhost.Entry{ID: scorer.ID(id), Binary: bin, SHA256: hex.EncodeToString(sum[:]),
			Version: "1.0.0", Protocol: 1, KPIs: []scorer.KPI{}, Needs: []scorer.Need{}})
	}
	if err := m.Save(); err != nil {
		t.Fatal(err)
	}
}

func invSyncDB(t testing.TB, dsn string, ids []string) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SyncScorerEnum(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
}

func invDBEnum(t testing.TB, dsn string) []string {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids, err := st.ScorerEnum(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func invWith(base []string, extra ...string) []string {
	return append(append([]string{}, base...), extra...)
}

func invWithout(base []string, drop string) []string {
	var out []string
	for _, id := range base {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

// invMain runs assay with args and returns the exit code, stdout and stderr.
func invMain(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// invStartup runs the startup check the way a command does, through the
// real flag parsing, and returns the exit code and what was printed.
func invStartup(t testing.TB, e invEnv, needDB bool) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr}
	capp := a.cliApp()
	capp.Commands = append(capp.Commands, &cli.Command{Name: "startup-probe", Action: func(c *cli.Context) error {
		rt, err := a.startup(c, needDB)
		if err != nil {
			return err
		}
		return rt.close()
	}})
	err := capp.RunContext(context.Background(), append(append([]string{"assay"}, e.flags()...), "startup-probe"))
	code, _ := exitCode(err)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return code, msg
}

// drift is one way the three places can disagree, made on top of an
// environment where all hold the six built-ins.
type drift struct {
	name  string
	apply func(t testing.TB, e invEnv)
	// want are the lines the startup check must print.
	want []string
	// synced is the scorer set of all three places after `scorers sync`.
	synced []string
}

func drifts() []drift {
	return []drift{
		{
			name:   "new plugin registered, not synced",
			apply:  func(t testing.TB, e invEnv) { invWriteManifest(t, e.pluginDir, invWith(invBuiltins, "acme_invoice")) },
			want:   []string{"missing in schema enum: acme_invoice", "missing in DB enum: acme_invoice", "`assay scorers sync`"},
			synced: invWith([]string{"acme_invoice"}, invBuiltins...),
		},
		{
			name: "schema enum edited by hand",
			apply: func(t testing.TB, e invEnv) {
				if err := pack.RewriteScorerEnum(e.schemaPath, invWith(invWithout(invBuiltins, "composite"), "made_up")); err != nil {
					t.Fatal(err)
				}
			},
			want:   []string{"missing in schema enum: composite", "in schema enum but no plugin: made_up", "assay plugins register BIN"},
			synced: invBuiltins,
		},
		{
			name:   "DB enum drifted",
			apply:  func(t testing.TB, e invEnv) { invSyncDB(t, e.dsn, invWith(invWithout(invBuiltins, "task_state"), "x")) },
			want:   []string{"missing in DB enum: task_state", "in DB enum but no plugin: x"},
			synced: invBuiltins,
		},
		{
			name:   "plugin removed from the manifest",
			apply:  func(t testing.TB, e invEnv) { invWriteManifest(t, e.pluginDir, invWithout(invBuiltins, "stigmergic")) },
			want:   []string{"in schema enum but no plugin: stigmergic", "in DB enum but no plugin: stigmergic", "assay plugins register BIN"},
			synced: invWithout(invBuiltins, "stigmergic"),
		},
	}
}

func TestStartupCheck(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newInvEnv(t, b.DSN(t), invBuiltins)
			if code, msg := invStartup(t, e, true); code != ExitOK {
				t.Fatalf("startup with agreeing places = exit %d (%s), want 0", code, msg)
			}
			for _, d := range drifts() {
				// Not parallel: urfave/cli writes its global help flag on
				// every run, which the race detector flags.
				t.Run(d.name, func(t *testing.T) {
					e := newInvEnv(t, b.DSN(t), invBuiltins)
					d.apply(t, e)
					code, msg := invStartup(t, e, true)
					if code != ExitHost {
						t.Fatalf("startup after drift = exit %d (%s), want %d", code, msg, ExitHost)
					}
					for _, w := range d.want {
						if !strings.Contains(msg, w) {
							t.Errorf("startup message = %q\nwant it to contain %q", msg, w)
						}
					}
				})
			}
		})
	}
}

func TestStartupWithoutDB(t *testing.T) {
	e := newInvEnv(t, storetest.SQLite(t), invBuiltins)
	e.dsn = filepath.Join(t.TempDir(), "not-yet.db")
	if code, msg := invStartup(t, e, false); code != ExitOK {
		t.Fatalf("startup(needDB=false) = exit %d (%s), want 0", code, msg)
	}
	if _, err := os.Stat(e.dsn); err == nil {
		t.Errorf("startup(needDB=false) created %s", e.dsn)
	}
	if code, msg := invStartup(t, e, true); code != ExitOK {
		t.Fatalf("startup(needDB=true) on a new database = exit %d (%s), want 0", code, msg)
	}
	if _, err := os.Stat(e.dsn); err != nil {
		t.Errorf("startup(needDB=true) did not create the database: %v", err)
	}
}

func TestScorersSyncRepairs(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			for _, d := range drifts() {
				// Not parallel: urfave/cli writes its global help flag on
				// every run, which the race detector flags.
				t.Run(d.name, func(t *testing.T) {
					e := newInvEnv(t, b.DSN(t), invBuiltins)
					d.apply(t, e)
					code, stdout, stderr := invMain(t, append(e.flags(), "scorers", "sync")...)
					if code != ExitOK {
						t.Fatalf("scorers sync = exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
					}
					if !strings.Contains(stdout, e.schemaPath) {
						t.Errorf("scorers sync output does not name the schema file %s:\n%s", e.schemaPath, stdout)
					}
					if code, msg := invStartup(t, e, true); code != ExitOK {
						t.Errorf("startup after scorers sync = exit %d (%s), want 0", code, msg)
					}
					s, err := pack.LoadSchema(e.schemaPath)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(d.synced, s.ScorerEnum()); diff != "" {
						t.Errorf("schema enum after sync (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(d.synced, invDBEnum(t, e.dsn)); diff != "" {
						t.Errorf("DB enum after sync (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func TestScorersSyncRefusesUsedScorer(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newInvEnv(t, b.DSN(t), invBuiltins)
			st, err := store.Open(context.Background(), e.dsn)
			if err != nil {
				t.Fatal(err)
			}
			err = st.UpsertPackTasks(context.Background(), []store.PackTask{
				{PackSHA256: "5ca1ab1e00000000", Company: "acme", Label: "leave_a_note", Scorer: "stigmergic", Weight: 1},
			})
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			schemaBefore, err := os.ReadFile(e.schemaPath)
			if err != nil {
				t.Fatal(err)
			}
			invWriteManifest(t, e.pluginDir, invWithout(invBuiltins, "stigmergic"))
			code, stdout, stderr := invMain(t, append(e.flags(), "scorers", "sync")...)
			if code != ExitHost {
				t.Fatalf("scorers sync removing a used scorer = exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitHost, stdout, stderr)
			}
			if want := "pack 5ca1ab1e0000 task leave_a_note: scorer stigmergic"; !strings.Contains(stderr, want) {
				t.Errorf("scorers sync stderr = %q\nwant it to name the row: %q", stderr, want)
			}
			if diff := cmp.Diff(invBuiltins, invDBEnum(t, e.dsn)); diff != "" {
				t.Errorf("DB enum changed by a refused sync (-want +got):\n%s", diff)
			}
			if schemaAfter, _ := os.ReadFile(e.schemaPath); !bytes.Equal(schemaBefore, schemaAfter) {
				t.Errorf("schema file changed by a refused sync")
			}
		})
	}
}

// Without --schema, sync keeps the schema beside the manifest (made from the
// embedded one), and every later command with that plugin dir uses it.
func TestScorersSyncInstallsSchema(t *testing.T) {
	ids := append([]string{"acme_invoice"}, invBuiltins...)
	e := newInvEnv(t, storetest.SQLite(t), invBuiltins)
	invWriteManifest(t, e.pluginDir, ids)
	args := []string{"--plugin-dir", e.pluginDir, "--db", e.dsn}
	if code, _, _ := invMain(t, append(args, "doctor")...); code != ExitHost {
		t.Fatalf("doctor before sync = exit %d, want %d", code, ExitHost)
	}
	code, stdout, stderr := invMain(t, append(args, "scorers", "sync")...)
	if code != ExitOK {
		t.Fatalf("scorers sync = exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	installed := filepath.Join(e.pluginDir, installedSchemaFile)
	s, err := pack.LoadSchema(installed)
	if err != nil {
		t.Fatalf("the installed schema: %v", err)
	}
	want := append([]string(nil), ids...)
	slices.Sort(want)
	if diff := cmp.Diff(want, s.ScorerEnum()); diff != "" {
		t.Errorf("installed schema enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, invDBEnum(t, e.dsn)); diff != "" {
		t.Errorf("DB enum after sync (-want +got):\n%s", diff)
	}
	// The startup check now passes with no --schema, and packs may use the
	// new scorer.
	pack := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(pack, []byte(minimalPack), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := invMain(t, append(args, "pack", "validate", pack)...); code != ExitOK {
		t.Errorf("pack validate after sync = exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

const minimalPack = `company: {id: acme, name: Acme}
personas: [cto]
tasks:
  - label: invoice
    persona: cto
    prompt: file the invoice
    scorer: acme_invoice
scoring: {process_weight: 0.5, kpi_weight: 0.5, min_mean_score: 0.5, min_finalize_rate: 0.5, max_error_rate: 0.5}
`

// invBuild builds package pkg (relative to the module root) into dir as
// assay-scorer-<id> and returns the binary's path.
func invBuild(t testing.TB, dir, pkg, id string) string {
	t.Helper()
	out := filepath.Join(dir, pluginhost.BinaryPrefix+id)
	cmd := buildflags.Command("-o", out, pkg) // as make build does: BenchmarkDoctor hashes and starts it
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestDoctor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	bin := invBuild(t, pluginDir, "./examples/private-scorer/cmd", "ticket_linked")
	m, err := pluginhost.LoadManifest(pluginDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pluginhost.Register(context.Background(), m, []string{bin}, nil); err != nil {
		t.Fatalf("Register(%s) = %v", bin, err)
	}
	e := invEnv{pluginDir: pluginDir, schemaPath: filepath.Join(dir, "schema.json"), dsn: filepath.Join(dir, "assay.db")}
	if err := os.WriteFile(e.schemaPath, packs.Schema(), 0o644); err != nil {
		t.Fatal(err)
	}

	// Not synced yet: the invariant fails, the plugin itself is fine.
	code, stdout, _ := invMain(t, append(e.flags(), "doctor")...)
	if code != ExitHost {
		t.Errorf("doctor before sync = exit %d, want %d\n%s", code, ExitHost, stdout)
	}
	for _, w := range []string{"FAIL  invariant   missing in schema enum: ticket_linked", "ok    plugin ticket_linked"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("doctor before sync printed:\n%s\nwant a line with %q", stdout, w)
		}
	}

	if code, out, errOut := invMain(t, append(e.flags(), "scorers", "sync")...); code != ExitOK {
		t.Fatalf("scorers sync = exit %d\n%s%s", code, out, errOut)
	}
	code, stdout, stderr := invMain(t, append(e.flags(), "doctor")...)
	if code != ExitOK {
		t.Fatalf("doctor after sync = exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "describes itself as ticket_linked v0.1.0 with 2 KPIs") {
		t.Errorf("doctor printed:\n%s\nwant the plugin's description", stdout)
	}

	// A binary changed after registration fails its sha256 check.
	if err := os.WriteFile(bin, append(mustRead(t, bin), 0), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = invMain(t, append(e.flags(), "doctor", "--format", "json")...)
	if code != ExitHost || !strings.Contains(stdout, `"ok": false`) || !strings.Contains(stdout, "sha256") {
		t.Errorf("doctor with a changed binary = exit %d, want %d and a sha256 failure:\n%s", code, ExitHost, stdout)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCommandsRunStartupCheck runs every command that loads packs or scores
// turns, as a user would, against places that disagree: each must refuse
// with exit 3 and the startup check's message before doing anything else.
// The plugins are placeholders, so a command that skipped the check would
// fail later with some other message.
func TestCommandsRunStartupCheck(t *testing.T) {
	const fx = "../../testdata/fixtures/"
	trace := fx + "traces/task_create_release_blocker.good.ndjson"
	commands := []struct {
		name string
		args []string
	}{
		{"pack validate", []string{"pack", "validate", fx + "pack.yaml"}},
		{"cel eval", []string{"cel", "eval", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker", "--trace", trace, "true"}},
		{"score", []string{"score", "--pack", fx + "pack.yaml", "--task", "task_create_release_blocker", "--trace", trace}},
		{"verify", []string{"verify", "--pack", "../../packs/example.yaml", "--run", "../../examples/runs/candidate-a", "--out", t.TempDir()}},
		{"frontier", []string{"frontier", "--pack", "../../packs/example.yaml"}},
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			for _, d := range drifts() {
				for _, cmd := range commands {
					t.Run(d.name+"/"+cmd.name, func(t *testing.T) {
						e := newInvEnv(t, b.DSN(t), invBuiltins)
						d.apply(t, e)
						code, stdout, stderr := invMain(t, append(e.flags(), cmd.args...)...)
						if code != ExitHost {
							t.Fatalf("assay %s after drift = exit %d, want %d\nstdout: %s\nstderr: %s", cmd.name, code, ExitHost, stdout, stderr)
						}
						for _, w := range append([]string{"startup check failed"}, d.want...) {
							if !strings.Contains(stderr, w) {
								t.Errorf("assay %s stderr = %q\nwant it to contain %q", cmd.name, stderr, w)
							}
						}
					})
				}
			}
		})
	}
}

// TestStartupCheckBeforePackProblems: the pack loads while the database
// opens, but a failed startup check is still all a command reports: exit 3
// with the check's message and none of the pack's problems, which with
// agreeing places are exit 2.
func TestStartupCheckBeforePackProblems(t *testing.T) {
	src, err := os.ReadFile("../../packs/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, append(src, []byte("no_such_key: 1\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	const problem = "no_such_key"
	args := []string{"verify", "--pack", broken, "--run", "../../examples/runs/candidate-a", "--out", ""}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			e := newInvEnv(t, b.DSN(t), invBuiltins)
			args[len(args)-1] = t.TempDir()
			code, _, stderr := invMain(t, append(e.flags(), args...)...)
			if code != ExitInvalid || !strings.Contains(stderr, problem) {
				t.Fatalf("assay verify, broken pack, agreeing places = exit %d, stderr %q; want %d naming %s", code, stderr, ExitInvalid, problem)
			}
			drift := drifts()[2] // the DB enum
			drift.apply(t, e)
			code, _, stderr = invMain(t, append(e.flags(), args...)...)
			if code != ExitHost || !strings.Contains(stderr, "startup check failed") || strings.Contains(stderr, problem) {
				t.Errorf("assay verify, broken pack, %s = exit %d, stderr %q; want %d with the startup check's message alone",
					drift.name, code, stderr, ExitHost)
			}
		})
	}
}

// A database whose company_eval_packs lost its scorer CHECK has an empty DB
// enum, for doctor as for the startup check: every scorer is reported
// missing there with the fixing command, and scorers sync adds the CHECK.
func TestDoctorDBWithoutConstraint(t *testing.T) {
	e := newInvEnv(t, storetest.SQLite(t), invBuiltins)
	st, err := store.Open(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"DROP TABLE company_eval_packs",
		`CREATE TABLE company_eval_packs (
    id          INTEGER PRIMARY KEY,
    pack_sha256 TEXT NOT NULL,
    company     TEXT NOT NULL DEFAULT '',
    label       TEXT NOT NULL,
    scorer      TEXT NOT NULL,
    weight      REAL NOT NULL DEFAULT 1,
    slice_tags  TEXT NOT NULL DEFAULT '[]',
    created_at  TIMESTAMP NOT NULL,
    CONSTRAINT uq_company_eval_packs_task UNIQUE (pack_sha256, label)
)`,
	} {
		if _, err := st.DB().Exec(q); err != nil {
			st.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	st.Close()

	type report struct {
		Places []struct {
			Place string `json:"place"`
			OK    bool   `json:"ok"`
		} `json:"places"`
		Invariant struct {
			OK          bool     `json:"ok"`
			Differences []string `json:"differences"`
			Fix         string   `json:"fix"`
		} `json:"invariant"`
	}
	doctor := func() (int, report) {
		t.Helper()
		code, stdout, stderr := invMain(t, append(e.flags(), "doctor", "--format", "json")...)
		var r report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("doctor --format json printed %q (stderr %q): %v", stdout, stderr, err)
		}
		return code, r
	}
	code, r := doctor()
	if code != ExitHost {
		t.Errorf("doctor = exit %d, want %d", code, ExitHost)
	}
	var want []string
	for _, id := range invBuiltins {
		want = append(want, "missing in DB enum: "+id)
	}
	if diff := cmp.Diff(want, r.Invariant.Differences); diff != "" {
		t.Errorf("doctor invariant differences (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Invariant.Fix, "assay scorers sync") {
		t.Errorf("doctor fix = %q, want the sync command", r.Invariant.Fix)
	}
	for _, p := range r.Places {
		if !p.OK {
			t.Errorf("doctor place %s not ok: a missing constraint is an empty enum, not a broken place", p.Place)
		}
	}
	if code, msg := invStartup(t, e, true); code != ExitHost || !strings.Contains(msg, "missing in DB enum: task_state") {
		t.Errorf("startup = exit %d (%s), want %d naming the DB enum", code, msg, ExitHost)
	}

	if code, stdout, stderr := invMain(t, append(e.flags(), "scorers", "sync")...); code != ExitOK {
		t.Fatalf("scorers sync = exit %d\n%s%s", code, stdout, stderr)
	}
	if _, r := doctor(); !r.Invariant.OK {
		t.Errorf("doctor after sync: invariant %+v, want ok", r.Invariant)
	}
}

// A refused sync changes nothing, and that includes not installing the
// schema beside the manifest: the next command still uses the embedded one.
func TestScorersSyncRefusedInstallsNothing(t *testing.T) {
	e := newInvEnv(t, storetest.SQLite(t), invBuiltins)
	st, err := store.Open(context.Background(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	err = st.UpsertPackTasks(context.Background(), []store.PackTask{
		{PackSHA256: "5ca1ab1e00000000", Company: "acme", Label: "leave_a_note", Scorer: "stigmergic", Weight: 1},
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	invWriteManifest(t, e.pluginDir, invWithout(invBuiltins, "stigmergic"))
	args := []string{"--plugin-dir", e.pluginDir, "--db", e.dsn}
	code, stdout, stderr := invMain(t, append(args, "scorers", "sync")...)
	if code != ExitHost || !strings.Contains(stderr, "task leave_a_note: scorer stigmergic") {
		t.Fatalf("scorers sync removing a used scorer = exit %d, want %d naming the row\nstdout: %s\nstderr: %s", code, ExitHost, stdout, stderr)
	}
	installed := filepath.Join(e.pluginDir, installedSchemaFile)
	if _, err := os.Stat(installed); err == nil {
		t.Errorf("a refused scorers sync installed %s", installed)
	}
	if diff := cmp.Diff(invBuiltins, invDBEnum(t, e.dsn)); diff != "" {
		t.Errorf("DB enum changed by a refused sync (-want +got):\n%s", diff)
	}
}

// A new database made by scorers sync or by the startup check starts with
// the manifest's scorers (issue 12 item 9): sync says it created it, and
// the startup check passes at once.
func TestNewDatabaseGetsInstalledScorers(t *testing.T) {
	ids := invWith(invBuiltins, "acme_invoice")
	slices.Sort(ids)
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name+"/scorers sync", func(t *testing.T) {
			e := newInvEnv(t, storetest.SQLite(t), ids)
			e.dsn = b.DSN(t)
			code, stdout, stderr := invMain(t, append(e.flags(), "scorers", "sync")...)
			if code != ExitOK || !strings.Contains(stdout, "created with the manifest's scorers") {
				t.Fatalf("scorers sync on a new database = exit %d, want 0 saying it created it\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if diff := cmp.Diff(ids, invDBEnum(t, e.dsn)); diff != "" {
				t.Errorf("DB enum (-want +got):\n%s", diff)
			}
		})
		t.Run(b.Name+"/startup", func(t *testing.T) {
			e := newInvEnv(t, storetest.SQLite(t), ids)
			e.dsn = b.DSN(t)
			if code, msg := invStartup(t, e, true); code != ExitOK {
				t.Fatalf("startup on a new database = exit %d (%s), want 0", code, msg)
			}
			if diff := cmp.Diff(ids, invDBEnum(t, e.dsn)); diff != "" {
				t.Errorf("DB enum (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionCloseClosesBoth: a session's close stops the plugin host and
// closes the database (the two at once), and returns once both are done.
func TestSessionCloseClosesBoth(t *testing.T) {
	e := newInvEnv(t, filepath.Join(t.TempDir(), "assay.db"), invBuiltins)
	a := &app{stdout: io.Discard, stderr: io.Discard}
	capp := a.cliApp()
	capp.Commands = append(capp.Commands, &cli.Command{Name: "session-probe", Action: func(c *cli.Context) error {
		rt, err := a.startup(c, true)
		if err != nil {
			return err
		}
		st := rt.store
		h := pluginhost.New(rt.manifest)
		s := &session{rt: rt, host: h}
		s.close()
		if err := st.DB().Ping(); err == nil {
			t.Errorf("the database answers after the session is closed")
		}
		if _, err := h.Describe(context.Background(), "answer_keywords"); !errors.Is(err, pluginhost.ErrClosed) {
			t.Errorf("Describe after close = %v, want ErrClosed", err)
		}
		return nil
	}})
	if err := capp.RunContext(context.Background(), append(append([]string{"assay"}, e.flags()...), "session-probe")); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyReportsPackBeforeTurns: the turns file is read while the pack
// loads, yet a pack's problems are still reported alone (nothing of the
// turns file), the turns file's only once the pack is valid, and an
// unreadable or invalid turns file records nothing: no run, no pack task.
func TestVerifyReportsPackBeforeTurns(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := newInvEnv(t, db, invBuiltins)
	goodPack, badPack := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	good := "schema_version: hsm.company_eval_pack.v1\ncompany:\n  id: c\n  name: C\n  api_base: http://127.0.0.1:3847\n" +
		"personas: [cto]\ntasks:\n  - label: t1\n    persona: cto\n    prompt: p\n    scorer: task_state\n    weight: 1\n" +
		"scoring:\n  process_weight: 0.35\n  kpi_weight: 0.65\n  min_mean_score: 0.5\n  min_finalize_rate: 1.0\n  max_error_rate: 0.0\n"
	if err := os.WriteFile(goodPack, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badPack, []byte("schema_version: hsm.company_eval_pack.v1\ntasks: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badTurns, missing := filepath.Join(dir, "turns.jsonl"), filepath.Join(dir, "missing.jsonl")
	if err := os.WriteFile(badTurns, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pack, turns string
		want, notWant     []string
	}{
		{"bad pack, bad turns", badPack, badTurns, []string{"bad.yaml", "is not valid"}, []string{"turns.jsonl", "turns.syntax"}},
		{"bad pack, no turns file", badPack, missing, []string{"bad.yaml"}, []string{"missing.jsonl", "reading turns file"}},
		{"bad turns", goodPack, badTurns, []string{"turns.jsonl:1:", "turns.syntax"}, nil},
		{"no turns file", goodPack, missing, []string{"reading turns file", "missing.jsonl"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(e.flags(), "verify", "--pack", tt.pack, "--turns", tt.turns)
			code, _, stderr := invMain(t, args...)
			if code != ExitInvalid {
				t.Errorf("exit = %d, want %d; stderr:\n%s", code, ExitInvalid, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr says %q before the pack is valid:\n%s", w, stderr)
				}
			}
		})
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var runs, tasks int
	if err := st.DB().QueryRow("SELECT count(*) FROM company_eval_runs").Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if err := st.DB().QueryRow("SELECT count(*) FROM company_eval_packs").Scan(&tasks); err != nil {
		t.Fatal(err)
	}
	if runs != 0 || tasks != 0 {
		t.Errorf("recorded %d runs and %d pack tasks, want none", runs, tasks)
	}
}
