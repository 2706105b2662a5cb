package e2e

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestFirstRunRace (issue 12 item 9) starts several `assay verify`
// processes at once on a database that does not exist yet, with a private
// scorer installed (so the installed scorer set differs from the
// migrations' built-in one). Every process must run: no SQLITE_BUSY, no
// false "missing in DB enum" from seeing the new database before its CHECK
// was set.
func TestFirstRunRace(t *testing.T) {
	dir := t.TempDir()
	plugins := privatePlugins(t, dir)
	dbs := map[string]string{"sqlite": filepath.Join(dir, "race.db")}
	if base := os.Getenv("ASSAY_TEST_POSTGRES_URL"); base != "" {
		dbs["postgres"] = pgSchema(t, base)
	} else {
		t.Log("ASSAY_TEST_POSTGRES_URL is not set; skipping the Postgres first-run race")
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) {
			const processes = 4
			results := make([]result, processes)
			var wg sync.WaitGroup
			for i := range processes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = runRaw(t, "--plugin-dir", plugins, "--db", db, "verify", "--pack", "packs/example.yaml",
						"--run", "examples/runs/candidate-a", "--out", filepath.Join(dir, name, string(rune('a'+i))))
				}()
			}
			wg.Wait()
			for i, r := range results {
				if r.code != 0 {
					t.Errorf("process %d: exit %d, want 0\n%s%s", i, r.code, r.stdout, r.stderr)
				}
			}
			if r := runRaw(t, "--plugin-dir", plugins, "--db", db, "doctor"); r.code != 0 {
				t.Errorf("doctor after the race: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// privatePlugins makes a plugin directory holding the built-ins (as TestMain
// built them) and the private ticket_linked scorer, synced: its installed
// schema lists all seven.
func privatePlugins(t *testing.T, dir string) string {
	t.Helper()
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(pluginDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	linkPlugins(t, plugins)
	if err := os.WriteFile(filepath.Join(plugins, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(plugins, "assay-scorer-ticket_linked")
	if err := goBuild(bin, "./examples/private-scorer/cmd"); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(dir, "seed.db")
	registerPlugin(t, plugins, seed, bin)
	return plugins
}

// linkPlugins hard-links (or copies) the built-in plugin binaries TestMain
// built into dir: a manifest names files inside its own directory only.
func linkPlugins(t *testing.T, dir string) {
	t.Helper()
	bins, err := filepath.Glob(filepath.Join(pluginDir, "assay-scorer-*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bins {
		to := filepath.Join(dir, filepath.Base(b))
		if os.Link(b, to) == nil {
			continue
		}
		src, err := os.ReadFile(b)
		if err == nil {
			err = os.WriteFile(to, src, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
