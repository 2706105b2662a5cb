package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatabaseSecretsNeverPrinted (issue 14 item 7): whatever form the
// database password takes in --db, no command prints it, and a keyword
// connection string is refused with a message instead of becoming a SQLite
// file named after it.
func TestDatabaseSecretsNeverPrinted(t *testing.T) {
	const secret = "pw-s3cret-value"
	tests := []struct {
		name, db string
		keyword  bool
	}{
		{"url user info", "postgres://u:" + secret + "@127.0.0.1:1/x?connect_timeout=1", false},
		{"query password", "postgres://u@127.0.0.1:1/x?sslmode=disable&password=" + secret + "&connect_timeout=1", false},
		{"keyword", "host=127.0.0.1 port=1 user=u password=" + secret + " dbname=x", true},
		{"keyword quoted", "host=db password='" + secret + "'", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"doctor"},
				{"verify", "--pack", "packs/example.yaml", "--turns", "does-not-matter.jsonl"},
			} {
				r := run(t, tt.db, args...)
				out := r.stdout + r.stderr
				if r.code != 3 {
					t.Errorf("assay --db %q %s: exit %d, want 3; output:\n%s", tt.name, args[0], r.code, out)
				}
				if strings.Contains(out, secret) {
					t.Errorf("assay --db %q %s prints the password:\n%s", tt.name, args[0], out)
				}
				if tt.keyword && !strings.Contains(out, "keyword connection string") {
					t.Errorf("assay --db %q %s does not say keyword strings are refused:\n%s", tt.name, args[0], out)
				}
			}
			matches, _ := filepath.Glob(filepath.Join(root, "*"+secret+"*"))
			if len(matches) > 0 {
				for _, m := range matches {
					os.Remove(m)
				}
				t.Errorf("--db %q created %v", tt.name, matches)
			}
		})
	}
}
