package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The cli tests run sequentially: urfave/cli shares its help flag globally.
func TestPackValidate(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("company:\n  id: acme\n  colour: blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badSchema := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(badSchema, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	const example = "../../packs/example.yaml"
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
	}{
		{"valid packs", []string{"pack", "validate", example, "../../packs/support-desk.yaml"}, ExitOK,
			[]string{example + ": valid (3 tasks)", "2 of 2 packs valid"}},
		{"invalid pack", []string{"pack", "validate", bad}, ExitInvalid,
			[]string{bad + ":3:3: pack.unknown_key: company: unknown key \"colour\"", "      colour: blue\n      ^\n", "invalid (4 problems)"}},
		{"one bad of two", []string{"pack", "validate", example, bad}, ExitInvalid, []string{"1 of 2 packs valid"}},
		{"no packs", []string{"pack", "validate"}, ExitInvalid, nil},
		{"bad format", []string{"pack", "validate", "--format", "xml", example}, ExitInvalid, nil},
		{"bad schema", []string{"--schema", badSchema, "pack", "validate", example}, ExitInvalid, nil},
		{"custom schema", []string{"--schema", "../../packs/schema/company_eval_pack.v1.json", "pack", "validate", example}, ExitOK, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("assay %v = exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.wantCode, &stdout, &stderr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("assay %v output lacks %q:\n%s", tc.args, w, &stdout)
				}
			}
		})
	}
}

func TestPackValidateJSON(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("personas: [a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"pack", "validate", "--format", "json", "../../packs/example.yaml", bad}
	if code := Main(context.Background(), args, &stdout, &stderr); code != ExitInvalid {
		t.Fatalf("assay %v = exit %d, want %d; stderr:\n%s", args, code, ExitInvalid, &stderr)
	}
	type diagnostic struct {
		Code string `json:"code"`
		Pos  struct {
			Line int `json:"line"`
		} `json:"pos"`
	}
	var got []struct {
		File        string       `json:"file"`
		Valid       bool         `json:"valid"`
		Diagnostics []diagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("assay %v printed invalid JSON: %v\n%s", args, err, &stdout)
	}
	if len(got) != 2 || !got[0].Valid || got[0].Diagnostics == nil || len(got[0].Diagnostics) != 0 || got[1].Valid {
		t.Fatalf("assay %v = %+v", args, got)
	}
	if diff := cmp.Diff([]diagnostic{{Code: "pack.syntax", Pos: struct {
		Line int `json:"line"`
	}{2}}}, got[1].Diagnostics); diff != "" {
		t.Errorf("diagnostics of %s (-want +got):\n%s", bad, diff)
	}
}
