package pluginhost

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestPluginEnvExactLocaleNames (issue 14 item 7): a plugin gets the
// allow-listed variables by exact name; an LC_ prefix alone (LC_API_TOKEN)
// or a near miss of a name (PATHX, LANG_TOKEN) is withheld.
func TestPluginEnvExactLocaleNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{
		{
			name: "locale categories pass",
			environ: []string{
				"LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=en_US.UTF-8", "LC_TIME=de_DE",
				"LC_MESSAGES=C", "LC_IDENTIFICATION=C", "LANGUAGE=en",
			},
			want: []string{
				"LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=en_US.UTF-8", "LC_TIME=de_DE",
				"LC_MESSAGES=C", "LC_IDENTIFICATION=C", "LANGUAGE=en",
			},
		},
		{
			name: "LC_ prefixed secrets withheld",
			environ: []string{
				"LC_API_TOKEN=sk-live-123", "LC_SECRET=x", "LC_=y", "LC_ALLX=z", "lc_all=C",
				"LC_CTYPE=C",
			},
			want: []string{"LC_CTYPE=C"},
		},
		{
			name: "credentials and near misses withheld",
			environ: []string{
				"PATH=/usr/bin", "PATHX=/evil", "LANG_TOKEN=t", "ASSAY_DB=postgres://u:pw@h/db",
				"PGPASSWORD=pw", "AWS_SECRET_ACCESS_KEY=k", "HOME=/home/u", "TZ=UTC",
			},
			want: []string{"PATH=/usr/bin", "HOME=/home/u", "TZ=UTC"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d := cmp.Diff(tt.want, scorerpb.PluginEnv(tt.environ)); d != "" {
				t.Errorf("PluginEnv(%q) mismatch (-want +got):\n%s", tt.environ, d)
			}
		})
	}
}
