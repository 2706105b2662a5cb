package state

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// redacted replaces the token wherever it shows.
const redacted = "[redacted]"

// minTokenCut is the shortest start of the token that is redacted on its
// own: a server that echoes the token cut short still does not show 8
// characters of it.
const minTokenCut = 8

// tokenForms is every way a server may echo the token: as sent,
// JSON-escaped (with and without HTML escaping, with \/ for /), URL-encoded
// as a query value and as a path segment, base64 in its four alphabets, and
// each of those JSON-escaped once more (as it shows in a JSON body that
// quotes it). Forms equal to another are listed once.
func tokenForms(token string) []string {
	if token == "" {
		return nil
	}
	b := []byte(token)
	base := []string{
		token, url.QueryEscape(token), url.PathEscape(token),
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
	base = append(base, jsonForms(token)...)
	forms := append([]string(nil), base...)
	for _, f := range base {
		forms = append(forms, jsonForms(f)...)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// jsonForms is s as the inside of a JSON string: HTML-escaped as
// encoding/json writes it by default, plain, and each with \/ for /.
func jsonForms(s string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.Encode(s) // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		q = q[1 : len(q)-1]
		out = append(out, q, strings.ReplaceAll(q, "/", `\/`))
	}
	return out
}

// redactToken replaces, in s, every form of the token (tokenForms) and
// every start of one at least minTokenCut characters long (the whole form
// when it is shorter), however s cut it.
func redactToken(s string, forms []string) string {
	for _, f := range forms {
		k := min(minTokenCut, len(f))
		if len(s) < k {
			continue
		}
		head := f[:k]
		var b strings.Builder
		i := 0
		for {
			j := strings.Index(s[i:], head)
			if j < 0 {
				break
			}
			j += i
			n := k
			for n < len(f) && j+n < len(s) && s[j+n] == f[n] {
				n++
			}
			b.WriteString(s[i:j])
			b.WriteString(redacted)
			i = j + n
		}
		if i > 0 {
			b.WriteString(s[i:])
			s = b.String()
		}
	}
	return s
}

// hasTokenStart reports whether b holds the start (minTokenCut characters,
// or the whole form when shorter) of any of forms, without copying b.
func hasTokenStart(b []byte, forms []string) bool {
	for _, f := range forms {
		if bytes.Contains(b, []byte(f[:min(minTokenCut, len(f))])) {
			return true
		}
	}
	return false
}

// errCrossOrigin is a redirect to another origin while a token is set.
var errCrossOrigin = errors.New("redirected to another origin")

// origin is a URL's scheme, host and port (the default port made explicit).
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// sameOriginOnly returns a copy of client that follows a redirect only
// within the first request's origin (scheme, host and port): the token is
// never sent to another one. Go's client alone would send it to the same
// host on another port. The client's own redirect policy still applies.
func sameOriginOnly(client *http.Client) *http.Client {
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from, to := origin(via[0].URL), origin(req.URL); from != to {
			return fmt.Errorf("%w: %s to %s; the token is sent only to %s (give that --api-base)",
				errCrossOrigin, from, to, from)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
