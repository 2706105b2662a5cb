package cockpit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/assay-eval/assay/host/pack"
	"github.com/assay-eval/assay/host/store"
	"github.com/assay-eval/assay/pkg/diag"
)

//go:embed templates/*.html
var templateFS embed.FS

// Cookie names.
const (
	sessionCookie = "assay_session"
	csrfCookie    = "assay_csrf"
)

// Config configures the cockpit.
type Config struct {
	Store *store.Store
	// LoadPack loads a stored pack's source, for its scoring rules (the
	// Pareto filter).
	LoadPack func(file string, src []byte) (*pack.Pack, diag.List)
	Logger   hclog.Logger
}

// Cockpit serves the pages.
type Cockpit struct {
	cfg   Config
	log   hclog.Logger
	pages map[string]*template.Template
	key   []byte // signs CSRF tokens; new each process
	hist  *histCache
	mux   *http.ServeMux
}

// New returns the cockpit for cfg.
func New(cfg Config) *Cockpit {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	c := &Cockpit{cfg: cfg, log: cfg.Logger, pages: parsePages(), key: make([]byte, 32), hist: newHistCache()}
	_, _ = rand.Read(c.key)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /signin", c.signinForm)
	mux.HandleFunc("POST /signin", c.signin)
	mux.HandleFunc("POST /signout", c.signedIn(c.signout))
	mux.HandleFunc("GET /{$}", c.signedIn(c.overview))
	mux.HandleFunc("GET /runs/{id}", c.signedIn(c.run))
	mux.HandleFunc("GET /runs/{id}/turns/{label}", c.signedIn(c.turn))
	mux.HandleFunc("GET /compare", c.signedIn(c.compare))
	mux.HandleFunc("GET /review", c.signedIn(c.review))
	mux.HandleFunc("POST /review/{turn}", c.signedIn(c.recordReview))
	mux.HandleFunc("GET /scorers", c.signedIn(c.scorers))
	mux.HandleFunc("GET /promotions", c.signedIn(c.promotions))
	c.mux = mux
	return c
}

func (c *Cockpit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	c.mux.ServeHTTP(w, r)
}

// parsePages parses each page template with the layout.
func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"signin", "overview", "run", "turn", "compare", "review", "scorers", "promotions"} {
		t := template.New("layout").Funcs(funcs())
		out[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	// The report borrows the other pages' blocks and defines its own
	// content last.
	fm := funcs()
	fm["runLink"] = func(id int64) string { return fmt.Sprintf("#run-%d", id) }
	t := template.New("layout").Funcs(fm)
	t = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/overview.html", "templates/run.html", "templates/compare.html"))
	out["report"] = template.Must(t.Parse(reportContent))
	return out
}

// reportContent re-defines "content" for the report, after the page
// templates it borrows blocks from defined their own.
const reportContent = `{{define "content"}}{{range .Packs}}{{template "pack" .}}{{end}}
{{range .Runs}}{{template "run" .}}{{end}}
{{range .Compares}}{{template "compare" .}}{{end}}{{end}}`

type sessionKey struct{}

// signedIn serves h to a request with a live session cookie; others go to
// the sign-in form.
func (c *Cockpit) signedIn(h func(http.ResponseWriter, *http.Request, store.Token)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		if err != nil {
			http.Redirect(w, r, "/signin", http.StatusSeeOther)
			return
		}
		t, err := c.cfg.Store.LiveToken(r.Context(), ck.Value)
		switch {
		case store.TokenRefused(err):
			http.Redirect(w, r, "/signin", http.StatusSeeOther)
		case err != nil:
			c.fail(w, fmt.Errorf("checking the session's token: %w", err))
		default:
			h(w, r, t)
		}
	}
}

// csrfFor is the CSRF token of a signed-in session's forms.
func (c *Cockpit) csrfFor(r *http.Request) string {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(ck.Value))
	return hex.EncodeToString(m.Sum(nil))
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func (c *Cockpit) signinForm(w http.ResponseWriter, r *http.Request) {
	c.renderSignin(w, r, "", http.StatusOK)
}

func (c *Cockpit) renderSignin(w http.ResponseWriter, r *http.Request, msg string, status int) {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	tok := hex.EncodeToString(raw[:])
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/signin", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(status)
	c.render(w, "signin", &page{Title: "Sign in", CSRF: tok, Error: msg})
}

func (c *Cockpit) signin(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(csrfCookie)
	if err != nil || !sameToken(ck.Value, r.PostFormValue("csrf")) {
		c.renderSignin(w, r, "The form expired; sign in again.", http.StatusForbidden)
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("token"))
	if _, err := c.cfg.Store.LiveToken(r.Context(), secret); store.TokenRefused(err) {
		c.renderSignin(w, r, "That token is not valid (unknown or revoked).", http.StatusUnauthorized)
		return
	} else if err != nil {
		c.fail(w, fmt.Errorf("checking the token: %w", err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (c *Cockpit) signout(w http.ResponseWriter, r *http.Request, _ store.Token) {
	if !sameToken(c.csrfFor(r), r.PostFormValue("csrf")) {
		http.Error(w, "bad CSRF token", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// render executes a page; a failure is logged (the response has started).
func (c *Cockpit) render(w http.ResponseWriter, name string, p *page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := c.pages[name].ExecuteTemplate(w, "layout", p); err != nil {
		c.log.Error("rendering page", "page", name, "error", err)
	}
}

// fail answers an internal error.
func (c *Cockpit) fail(w http.ResponseWriter, err error) {
	c.log.Error("cockpit", "error", err)
	http.Error(w, "the server failed; see its log", http.StatusInternalServerError)
}

func notFound(w http.ResponseWriter, what string) {
	http.Error(w, fmt.Sprintf("no %s", what), http.StatusNotFound)
}
