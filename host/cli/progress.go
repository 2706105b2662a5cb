package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a progress bar on a terminal once an operation has run for
// more than a second; elsewhere (a pipe, a file, CI) it draws nothing.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	start   time.Time
	label   string
	drawn   bool
	lastOut time.Time
}

func newProgress(w io.Writer, label string) *progress {
	return &progress{w: w, on: isTerminal(w), start: time.Now(), label: label}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update redraws the bar for done of total.
func (p *progress) update(done, total int) {
	if p == nil || !p.on || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.start) < time.Second || (now.Sub(p.lastOut) < 100*time.Millisecond && done < total) {
		return
	}
	p.lastOut = now
	const width = 30
	n := done * width / total
	rate := float64(done) / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d (%.0f/s)", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, rate)
	p.drawn = true
}

// done clears the bar's line.
func (p *progress) done() {
	if p == nil || !p.drawn {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r\033[K")
	p.drawn = false
}
