package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/host/invariant"
	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/packs"
)

// BenchmarkStartupCheck measures the check every pack-loading command runs
// first: load a six-plugin manifest, the schema and the SQLite enum, and
// compare them. No plugin is launched.
func BenchmarkStartupCheck(b *testing.B) {
	dir := b.TempDir()
	e := newInvEnv(b, filepath.Join(dir, "assay.db"), invBuiltins)
	for _, bc := range []struct {
		name   string
		schema string
	}{
		{"embedded_schema", ""},
		{"schema_file", e.schemaPath},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := invariant.Config{PluginDir: e.pluginDir, SchemaPath: bc.schema, DSN: e.dsn, CreateDB: true}
			ctx := context.Background()
			start := time.Now()
			for b.Loop() {
				rt, err := loadRuntime(ctx, cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				if !rt.report.OK() {
					b.Fatalf("startup check: %s", rt.report.Error())
				}
				rt.close()
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/check")
		})
	}
}

// BenchmarkDoctor measures `assay doctor` with the six built-in plugins
// launched in parallel (sha256 + Describe each), plus the three-place check.
func BenchmarkDoctor(b *testing.B) {
	dir := b.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	var bins []string
	for _, id := range invBuiltins {
		bins = append(bins, invBuild(b, pluginDir, "./cmd/assay-scorer-"+id, id))
	}
	m, err := pluginhost.LoadManifest(pluginDir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pluginhost.Register(context.Background(), m, bins, nil); err != nil {
		b.Fatal(err)
	}
	schemaPath := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaPath, packs.Schema(), 0o644); err != nil {
		b.Fatal(err)
	}
	dsn := filepath.Join(dir, "assay.db")
	invSyncDB(b, dsn, invBuiltins)
	a := &app{stdout: io.Discard, stderr: io.Discard}
	cfg := invariant.Config{PluginDir: pluginDir, SchemaPath: schemaPath, DSN: dsn}
	start := time.Now()
	for b.Loop() {
		rep := a.runDoctor(context.Background(), cfg)
		if !rep.OK {
			b.Fatalf("doctor found problems: %+v", rep)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/doctor")
}
