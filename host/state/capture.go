package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assay-eval/assay/pkg/companyos"
	"github.com/assay-eval/assay/pkg/jsonpos"
)

// Defaults for Capture.
const (
	DefaultTimeout = 10 * time.Second
	DefaultBackoff = 250 * time.Millisecond
	maxBackoff     = 4 * time.Second
	// maxBody bounds what is read of a response (a snapshot can be large).
	maxBody = 256 << 20
	// maxErrorBody bounds how much of an error response is shown.
	maxErrorBody = 512
)

// Log keys.
const (
	logKeyURL     = "url"
	logKeyAttempt = "attempt"
	logKeyError   = "error"
	logKeyWait    = "wait"
)

var (
	// ErrCapture marks every capture failure.
	ErrCapture = errors.New("capturing company state")
)

// CaptureConfig says where and how to read the live state.
type CaptureConfig struct {
	// APIBase is the Company OS base URL, e.g. https://os.example.com.
	APIBase string
	// Company is the company id.
	Company string
	// Token, when set, is sent as "Authorization: Bearer <token>". It never
	// appears in an error or a log line.
	Token string
	// HTTP is the client to use; nil means a new http.Client.
	HTTP *http.Client
	// Timeout bounds the whole capture, retries included; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a request is retried after a 5xx response or
	// a connection error (0: never).
	Retries int
	// Backoff is the first wait before a retry, doubled each time (capped);
	// 0 means DefaultBackoff.
	Backoff time.Duration
	// Logger receives retry notices; nil discards them.
	Logger *slog.Logger
}

// StatusError is a Company OS response with a non-2xx status.
type StatusError struct {
	URL    string
	Status int
	// Body is the start of the response body, with the token redacted.
	Body string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Capture reads the company's tasks and memory from the live Company OS API
// (GET {api}/api/company/companies/{id}/tasks and .../memory) into a
// snapshot stamped with the capture time (RFC 3339, UTC).
func Capture(ctx context.Context, cfg CaptureConfig) (*companyos.Snapshot, error) {
	base, err := checkConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCapture, err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &capturer{cfg: cfg, timeout: timeout, forms: tokenForms(cfg.Token)}
	if c.cfg.HTTP == nil {
		c.cfg.HTTP = &http.Client{}
	}
	if c.cfg.Token != "" {
		c.cfg.HTTP = sameOriginOnly(c.cfg.HTTP)
	}
	if c.cfg.Backoff <= 0 {
		c.cfg.Backoff = DefaultBackoff
	}
	if c.cfg.Logger == nil {
		c.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	prefix := base + "/api/company/companies/" + url.PathEscape(cfg.Company)

	snap := &companyos.Snapshot{}
	tasksURL := prefix + "/tasks"
	body, err := c.get(ctx, tasksURL)
	if err != nil {
		return nil, c.wrap(err)
	}
	if snap.Tasks, err = decodeList(tasksURL, body, "tasks", (*decoder).tasks); err != nil {
		return nil, c.wrap(err)
	}
	memoryURL := prefix + "/memory"
	if body, err = c.get(ctx, memoryURL); err != nil {
		return nil, c.wrap(err)
	}
	if snap.Memory, err = decodeList(memoryURL, body, "entries", (*decoder).memory); err != nil {
		return nil, c.wrap(err)
	}
	snap.CapturedAt = time.Now().UTC().Format(time.RFC3339)
	return snap, nil
}

func checkConfig(cfg CaptureConfig) (string, error) {
	if strings.TrimSpace(cfg.Company) == "" {
		return "", errors.New("no company id given")
	}
	u, err := url.Parse(strings.TrimSpace(cfg.APIBase))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("api base %q: want an http:// or https:// URL", cfg.APIBase)
	}
	if u.User != nil {
		return "", fmt.Errorf("api base %q: put credentials in the token, not the URL", u.Redacted())
	}
	return strings.TrimRight(u.String(), "/"), nil
}

type capturer struct {
	cfg     CaptureConfig
	timeout time.Duration
	forms   []string // tokenForms of the token
}

// wrap marks err as a capture error and redacts the token, in every form,
// from its text.
func (c *capturer) wrap(err error) error {
	msg := err.Error()
	if r := c.redact(msg); r != msg {
		err = errors.New(r)
	}
	return fmt.Errorf("%w: %w", ErrCapture, err)
}

// redact hides the token in s in every form a server may echo it
// (redactToken).
func (c *capturer) redact(s string) string { return redactToken(s, c.forms) }

// get fetches u, retrying 5xx responses and connection errors with backoff.
func (c *capturer) get(ctx context.Context, u string) ([]byte, error) {
	wait := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		body, retry, err := c.once(ctx, u)
		if err == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("GET %s: no answer within the %s timeout", u, c.timeout)
			}
			return nil, fmt.Errorf("GET %s: %w", u, ctx.Err())
		}
		if !retry || attempt >= c.cfg.Retries {
			if retry && attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		c.cfg.Logger.Warn("company os request failed, retrying", logKeyURL, u, logKeyAttempt, attempt+1,
			logKeyError, c.redact(err.Error()), logKeyWait, wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("GET %s: no answer within the %s timeout (last error: %w)", u, c.timeout, err)
		case <-t.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// once makes one request and says whether a failure may be retried.
func (c *capturer) once(ctx context.Context, u string) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		// *url.Error names the method and URL; a refused redirect is final.
		return nil, !errors.Is(err, errCrossOrigin), err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, true, fmt.Errorf("GET %s: reading the response: %w", u, err)
	}
	// What the snapshot stores, and any error quotes, never holds the token.
	if hasTokenStart(body, c.forms) {
		body = []byte(c.redact(string(body)))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, resp.StatusCode >= 500, &StatusError{URL: u, Status: resp.StatusCode, Body: c.errorBody(body)}
	}
	return body, false, nil
}

func (c *capturer) errorBody(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " ")
	s = c.redact(s)
	if len(s) > maxErrorBody {
		cut := maxErrorBody
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// decodeList reads a Company OS list response: an object holding key (as
// the API returns it) or a bare list.
func decodeList[T any](u string, body []byte, key string, read func(*decoder, *jsonpos.Node, string) []T) ([]T, error) {
	d := &decoder{src: jsonpos.Source{File: u, Src: body}, lenient: true}
	root, err := jsonpos.Parse(body, jsonpos.Options{})
	if err != nil {
		p := d.src.ErrPos(err)
		return nil, fmt.Errorf("GET %s: response is not valid JSON at line %d, col %d: %w", u, p.Line, p.Col, err)
	}
	var out []T
	switch root.Kind {
	case jsonpos.Array:
		out = read(d, root, key)
	case jsonpos.Object:
		found := false
		for _, m := range root.Members {
			if m.Key == key {
				out, found = read(d, m.Value, key), true
			}
		}
		if !found {
			return nil, fmt.Errorf("GET %s: response has no %q list", u, key)
		}
	default:
		return nil, fmt.Errorf("GET %s: response is %s, want {%q: [...]}", u, root.Kind, key)
	}
	if l := d.diags.Errors(); len(l) > 0 {
		l.Sort()
		return nil, fmt.Errorf("GET %s: unexpected response: %w", u, l.Cap(5))
	}
	return out, nil
}
