package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// inlineWorkload rewrites a workload's turns file with every trace and
// snapshot inline, as an API upload must carry them.
func inlineWorkload(tb testing.TB, w workload) workload {
	tb.Helper()
	src, err := os.Open(w.Turns)
	if err != nil {
		tb.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(filepath.Dir(w.Turns), "inline.jsonl")
	dst, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer dst.Close()
	out := bufio.NewWriter(dst)
	cache := map[string]json.RawMessage{}
	read := func(p string, ndjson bool) json.RawMessage {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(w.Turns), p)
		}
		if b, ok := cache[p]; ok {
			return b
		}
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if ndjson {
			var lines [][]byte
			for _, l := range bytes.Split(b, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 {
					lines = append(lines, l)
				}
			}
			b = append(append([]byte("["), bytes.Join(lines, []byte(","))...), ']')
		}
		cache[p] = b
		return b
	}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var turn map[string]any
		if err := json.Unmarshal(sc.Bytes(), &turn); err != nil {
			tb.Fatal(err)
		}
		turn["trace"] = read(turn["trace_file"].(string), true)
		delete(turn, "trace_file")
		for _, k := range []string{"state_before", "state_after"} {
			if p, ok := turn[k].(string); ok {
				turn[k] = read(p, false)
			}
		}
		b, _ := json.Marshal(turn)
		out.Write(append(b, '\n'))
	}
	if err := out.Flush(); err != nil {
		tb.Fatal(err)
	}
	w.Turns = path
	return w
}

var companyID = regexp.MustCompile(`(?m)^  id: *"?([^"\n]+)"?`)

// BenchmarkServeUpload10k uploads the 10,000-turn workload through the API
// and reports upload-to-summary throughput against `assay verify --turns`
// on the same file (docs/serve.md; the issue asks for at least 80%).
func BenchmarkServeUpload10k(b *testing.B) {
	w := inlineWorkload(b, makeWorkload(b, b.TempDir(), 1000, 10, 200))
	pack, err := os.ReadFile(w.Pack)
	if err != nil {
		b.Fatal(err)
	}
	m := companyID.FindSubmatch(pack)
	if m == nil {
		b.Fatal("the workload pack has no company.id")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cli, _ := verifyOnce(b, w)
		db := filepath.Join(b.TempDir(), "serve.db")
		token := tokenFor(b, db, string(m[1]))
		s := startServe(b, db, "--max-body-mib", "8192")
		if code, body := s.do(b, "PUT", "/v1/packs/example", token, bytes.NewReader(pack)); code != 200 {
			b.Fatalf("PUT pack = %d %s", code, body)
		}
		start := time.Now()
		uploadAndWait(b, s, token, w.Turns)
		api := time.Since(start)
		s.stop(b)
		b.ReportMetric(float64(w.N)/api.Seconds(), "api_turns/s")
		b.ReportMetric(float64(w.N)/cli.Seconds(), "verify_turns/s")
		b.ReportMetric(cli.Seconds()/api.Seconds(), "api/verify")
	}
}

// tokenFor creates a token for company.
func tokenFor(tb testing.TB, db, company string) string {
	tb.Helper()
	r := run(tb, db, "tokens", "create", "--company", company)
	if r.code != 0 {
		tb.Fatalf("tokens create: %s", r.stderr)
	}
	return string(bytes.TrimSpace([]byte(r.stdout)))
}
