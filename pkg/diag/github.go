package diag

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteGitHub writes each diagnostic as a GitHub Actions workflow command,
// `::error file=F,line=L,col=C,title=CODE::message` (warnings as
// `::warning`), so a pull request is annotated on the line (docs/ci.md).
// Unknown parts of a position are left out.
func WriteGitHub(w io.Writer, l List) error {
	b := bufio.NewWriter(w)
	for _, d := range l {
		cmd := "error"
		if d.Severity == Warning {
			cmd = "warning"
		}
		var props []string
		if d.Pos.File != "" {
			props = append(props, "file="+escapeProperty(d.Pos.File))
		}
		if d.Pos.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", d.Pos.Line))
		}
		if d.Pos.Col > 0 {
			props = append(props, fmt.Sprintf("col=%d", d.Pos.Col))
		}
		props = append(props, "title="+escapeProperty(d.Code))
		fmt.Fprintf(b, "::%s %s::%s\n", cmd, strings.Join(props, ","), escapeData(d.Message))
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("writing annotations: %w", err)
	}
	return nil
}

// escapeData escapes a workflow command's message as the Actions runner
// unescapes it.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
