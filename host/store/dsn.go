package store

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// redactMask replaces a password in anything assay prints.
const redactMask = "xxxxx"

// ErrKeywordDSN is a libpq keyword connection string (host=... password=...)
// given as the database: assay takes only a postgres:// URL or a SQLite path,
// and refuses it rather than create a SQLite file named after it.
var ErrKeywordDSN = errors.New("a keyword connection string (host=... dbname=...) is not supported; write it as a postgres://user:password@host:port/dbname URL")

// IsPostgresURL reports whether dsn names a Postgres server rather than a
// SQLite file.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// keywordDSN matches the start of a libpq keyword connection string: a
// connection keyword, optional blanks, then '='.
var keywordDSN = regexp.MustCompile(`(?i)(^|\s)(host|hostaddr|port|dbname|user|password|passfile|sslmode|sslpassword|connect_timeout|application_name|service|target_session_attrs)\s*=`)

// IsKeywordDSN reports whether dsn looks like a libpq keyword connection
// string (host=db user=u password=pw) rather than a SQLite path or a URL.
func IsKeywordDSN(dsn string) bool {
	return !IsPostgresURL(dsn) && keywordDSN.MatchString(dsn)
}

// keywordPassword matches a password or sslpassword in a keyword
// connection string, quoted or not.
var keywordPassword = regexp.MustCompile(`(?i)\b((?:ssl)?password)\s*=\s*(?:'(?:[^'\\]|\\.)*'?|\S*)`)

// Redact hides every credential a database string carries, for messages: the
// password of a postgres:// URL's user information, its password= and
// sslpassword= query parameters (however their names are escaped), and the
// password of a keyword connection string. A SQLite path is returned as it is.
func Redact(dsn string) string {
	if IsPostgresURL(dsn) {
		return redactURL(dsn)
	}
	if IsKeywordDSN(dsn) {
		return keywordPassword.ReplaceAllString(dsn, "${1}="+redactMask)
	}
	return dsn
}

// redactURL masks the user-information password and the password query
// parameters of a Postgres URL, also when it does not parse.
func redactURL(dsn string) string {
	return mapURLPasswords(dsn, func(string) string { return redactMask })
}

// mapURLPasswords returns the Postgres URL dsn with each password (the user
// information's, and the password and sslpassword query values) replaced by
// f of it. It cuts the text where a parser would rather than parsing it, so a
// URL that does not parse is handled too.
func mapURLPasswords(dsn string, f func(string) string) string {
	scheme, rest, _ := strings.Cut(dsn, "://")
	query, hasQuery := "", false
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query, hasQuery = rest[:q], rest[q+1:], true
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, pw, ok := strings.Cut(rest[:at], ":"); ok {
			rest = user + ":" + f(pw) + rest[at:]
		}
	}
	out := scheme + "://" + rest
	if !hasQuery {
		return out
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		if k, v, ok := strings.Cut(p, "="); ok && isPasswordKey(k) {
			params[i] = k + "=" + f(v)
		}
	}
	return out + "?" + strings.Join(params, "&")
}

func isPasswordKey(k string) bool {
	if u, err := url.QueryUnescape(k); err == nil {
		k = u
	}
	k = strings.ToLower(strings.TrimSpace(k))
	return k == "password" || k == "sslpassword"
}

// passwords returns every password dsn carries, as written and decoded, so
// an error that quotes one (a driver echoing its input) can be redacted.
func passwords(dsn string) []string {
	var out []string
	add := func(raw string) {
		if raw == "" {
			return
		}
		out = append(out, raw)
		if u, err := url.QueryUnescape(raw); err == nil && u != raw {
			out = append(out, u)
		}
		if e := url.QueryEscape(raw); e != raw {
			out = append(out, e)
		}
	}
	switch {
	case IsPostgresURL(dsn):
		mapURLPasswords(dsn, func(pw string) string { add(pw); return pw })
	case IsKeywordDSN(dsn):
		for _, m := range keywordPassword.FindAllStringSubmatch(dsn, -1) {
			_, v, _ := strings.Cut(m[0], "=")
			add(strings.Trim(strings.TrimSpace(v), "'"))
		}
	}
	return out
}

// RedactError returns err with every password of dsn, and any credential
// of a database string it quotes, masked in its text; nil stays nil. The
// result still unwraps to err, so errors.Is and errors.As see the cause.
func RedactError(err error, dsn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := RedactText(msg, dsn)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// RedactText masks every password of dsn in s (as written, URL-decoded and
// URL-encoded), then any postgres:// URL s holds (redactURL) and any
// password= setting outside one.
func RedactText(s, dsn string) string {
	for _, pw := range passwords(dsn) {
		s = strings.ReplaceAll(s, pw, redactMask)
	}
	var b strings.Builder
	last := 0
	for _, m := range urlInText.FindAllStringIndex(s, -1) {
		b.WriteString(keywordPassword.ReplaceAllString(s[last:m[0]], "${1}="+redactMask))
		b.WriteString(redactURL(s[m[0]:m[1]]))
		last = m[1]
	}
	b.WriteString(keywordPassword.ReplaceAllString(s[last:], "${1}="+redactMask))
	return b.String()
}

// urlInText finds a postgres:// URL inside a message.
var urlInText = regexp.MustCompile(`postgres(?:ql)?://[^\s"'` + "`" + `]+`)

// redactedError keeps the chain (errors.Is, errors.As) of the error it
// redacts while showing only the redacted text.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
