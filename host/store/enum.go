package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ScorerConstraint is the name of the CHECK constraint that holds the
// database's scorer enum on table company_eval_packs.
const ScorerConstraint = "ck_company_eval_packs_scorer"

const packsTable = "company_eval_packs"

// Sentinel errors.
var (
	// ErrNoScorerConstraint: company_eval_packs has no scorer CHECK.
	ErrNoScorerConstraint = errors.New("table company_eval_packs has no constraint " + ScorerConstraint)
	// ErrScorerNotInEnum: a pack task names a scorer the DB CHECK does not allow.
	ErrScorerNotInEnum = errors.New("scorer is not in the database scorer enum (" + ScorerConstraint + ")")
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("not found")
)

// PackTaskRef names one stored pack task.
type PackTaskRef struct {
	PackSHA256 string
	Label      string
	Scorer     string
}

// InUseError is returned by SyncScorerEnum when stored pack tasks use
// scorers that the new enum would drop. Nothing was changed.
type InUseError struct {
	Rows []PackTaskRef // every stored pack task whose scorer would be removed
}

func (e *InUseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sync scorer enum: %d stored pack task(s) use scorers the manifest no longer has (%s); nothing was changed:",
		len(e.Rows), strings.Join(e.Scorers(), ", "))
	const show = 20
	for i, r := range e.Rows {
		if i == show {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Rows)-show)
			break
		}
		fmt.Fprintf(&b, "\n  pack %s task %s: scorer %s", shortSHA(r.PackSHA256), r.Label, r.Scorer)
	}
	b.WriteString("\nregister the plugin again (assay plugins register BIN), or delete those pack rows, then run assay scorers sync")
	return b.String()
}

// Scorers returns the distinct scorers the rows use, sorted.
func (e *InUseError) Scorers() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range e.Rows {
		if !seen[r.Scorer] {
			seen[r.Scorer] = true
			out = append(out, r.Scorer)
		}
	}
	sort.Strings(out)
	return out
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// ScorerEnum reads the scorer enum back from the live database, sorted:
// SQLite from the table SQL in sqlite_schema, Postgres from
// pg_get_constraintdef.
func (s *Store) ScorerEnum(ctx context.Context) ([]string, error) {
	return s.scorerEnum(ctx, s.db)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) scorerEnum(ctx context.Context, q queryRower) ([]string, error) {
	switch s.dialect {
	case Postgres:
		var def string
		err := q.QueryRowContext(ctx, `SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
			WHERE c.conrelid = to_regclass($1) AND c.conname = $2`, packsTable, ScorerConstraint).Scan(&def)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read scorer enum: %w", ErrNoScorerConstraint)
		}
		if err != nil {
			return nil, fmt.Errorf("read scorer enum: %w", err)
		}
		ids, err := ParseScorerCheck(def)
		if err != nil {
			return nil, fmt.Errorf("read scorer enum: %w", err)
		}
		return ids, nil
	default:
		table, err := sqliteTableSQL(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read scorer enum: %w", err)
		}
		ids, err := ParseTableScorerEnum(table)
		if err != nil {
			return nil, fmt.Errorf("read scorer enum: %w", err)
		}
		return ids, nil
	}
}

func sqliteTableSQL(ctx context.Context, q queryRower) (string, error) {
	var table string
	err := q.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`, packsTable).Scan(&table)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("table %s does not exist", packsTable)
	}
	return table, err
}

// SyncScorerEnum makes the database's scorer enum exactly ids, in one
// transaction. It refuses with *InUseError, changing nothing, when stored
// pack tasks use a scorer not in ids. Postgres drops and re-adds the
// constraint; SQLite, which cannot alter a CHECK, rebuilds the table with
// the new CHECK and keeps every row and index.
func (s *Store) SyncScorerEnum(ctx context.Context, ids []string) error {
	want, err := normalizeIDs(ids)
	if err != nil {
		return fmt.Errorf("sync scorer enum: %w", err)
	}
	tx, err := s.beginLocked(ctx)
	if err != nil {
		return fmt.Errorf("sync scorer enum: %w", err)
	}
	defer tx.Rollback()
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+packsTable+" IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("sync scorer enum: lock %s: %w", packsTable, err)
		}
	}
	if err := s.checkInUse(ctx, tx, want); err != nil {
		return err
	}
	if err := s.writeScorerEnum(ctx, tx, want); err != nil {
		return fmt.Errorf("sync scorer enum: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sync scorer enum: commit: %w", err)
	}
	return nil
}

// writeScorerEnum makes the scorer CHECK exactly want (sorted, no repeats)
// inside tx, unless it already is. A table without the constraint gets it.
func (s *Store) writeScorerEnum(ctx context.Context, tx *sql.Tx, want []string) error {
	have, err := s.scorerEnum(ctx, tx)
	if err == nil && equalSorted(have, want) {
		return nil
	}
	if err != nil && !errors.Is(err, ErrNoScorerConstraint) {
		return err
	}
	check := ScorerCheckSQL(want)
	if s.dialect != Postgres {
		return rebuildSQLitePacks(ctx, tx, check)
	}
	stmts := []string{
		"ALTER TABLE " + packsTable + " DROP CONSTRAINT IF EXISTS " + ScorerConstraint,
		"ALTER TABLE " + packsTable + " ADD CONSTRAINT " + ScorerConstraint + " " + check,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) checkInUse(ctx context.Context, tx *sql.Tx, want []string) error {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(want)), ", ")
	args := make([]any, len(want))
	for i, id := range want {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, s.Rebind(`SELECT pack_sha256, label, scorer FROM `+packsTable+`
		WHERE scorer NOT IN (`+marks+`) ORDER BY scorer, pack_sha256, label`), args...)
	if err != nil {
		return fmt.Errorf("sync scorer enum: find pack tasks using removed scorers: %w", err)
	}
	defer rows.Close()
	var used []PackTaskRef
	for rows.Next() {
		var r PackTaskRef
		if err := rows.Scan(&r.PackSHA256, &r.Label, &r.Scorer); err != nil {
			return fmt.Errorf("sync scorer enum: %w", err)
		}
		used = append(used, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sync scorer enum: %w", err)
	}
	if len(used) > 0 {
		return &InUseError{Rows: used}
	}
	return nil
}

// rebuildSQLitePacks replaces company_eval_packs with a copy whose scorer
// CHECK is check, inside tx: create the new table from the old one's SQL,
// copy every row, drop the old table, rename, and recreate its indexes and
// triggers.
func rebuildSQLitePacks(ctx context.Context, tx *sql.Tx, check string) error {
	table, err := sqliteTableSQL(ctx, tx)
	if err != nil {
		return err
	}
	newTable, err := ReplaceScorerCheck(table, check)
	if err != nil {
		return err
	}
	open := strings.IndexByte(newTable, '(')
	if open < 0 {
		return fmt.Errorf("table %s: unexpected SQL %q", packsTable, table)
	}
	const tmp = packsTable + "__sync"
	newTable = "CREATE TABLE " + tmp + " " + newTable[open:]

	var extras []string // indexes and triggers to recreate
	rows, err := tx.QueryContext(ctx, `SELECT sql FROM sqlite_schema
		WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name`, packsTable)
	if err != nil {
		return fmt.Errorf("read indexes of %s: %w", packsTable, err)
	}
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			rows.Close()
			return fmt.Errorf("read indexes of %s: %w", packsTable, err)
		}
		extras = append(extras, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read indexes of %s: %w", packsTable, err)
	}

	var before int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+packsTable).Scan(&before); err != nil {
		return fmt.Errorf("count %s: %w", packsTable, err)
	}
	steps := []string{
		"DROP TABLE IF EXISTS " + tmp,
		newTable,
		"INSERT INTO " + tmp + " SELECT * FROM " + packsTable,
		"DROP TABLE " + packsTable,
		"ALTER TABLE " + tmp + " RENAME TO " + packsTable,
	}
	steps = append(steps, extras...)
	for _, q := range steps {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("rebuild %s: %s: %w", packsTable, firstLine(q), err)
		}
	}
	var after int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+packsTable).Scan(&after); err != nil {
		return fmt.Errorf("count %s: %w", packsTable, err)
	}
	if after != before {
		return fmt.Errorf("rebuild %s: copied %d of %d rows", packsTable, after, before)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func normalizeIDs(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, errors.New("no scorer IDs: the enum would allow no scorer at all")
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("empty scorer ID")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

func equalSorted(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ScorerCheckSQL returns the CHECK clause allowing exactly ids (sorted by
// the caller or not): CHECK (scorer IN ('a', 'b')), quotes doubled.
func ScorerCheckSQL(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + strings.ReplaceAll(id, "'", "''") + "'"
	}
	return "CHECK (scorer IN (" + strings.Join(quoted, ", ") + "))"
}

// ParseTableScorerEnum returns the scorer IDs of the ck_company_eval_packs_scorer
// CHECK in a CREATE TABLE statement (as SQLite stores it), sorted.
func ParseTableScorerEnum(table string) ([]string, error) {
	start, end, err := scorerCheckSpan(table)
	if err != nil {
		return nil, err
	}
	return ParseScorerCheck(table[start:end])
}

// ReplaceScorerCheck returns table (a CREATE TABLE statement) with the CHECK
// of constraint ck_company_eval_packs_scorer replaced by check; without that
// constraint, it is added as the last table constraint.
func ReplaceScorerCheck(table, check string) (string, error) {
	start, end, err := scorerCheckSpan(table)
	if errors.Is(err, ErrNoScorerConstraint) {
		last := strings.LastIndexByte(table, ')')
		if last < 0 {
			return "", fmt.Errorf("table %s: unexpected SQL %q", packsTable, table)
		}
		return table[:last] + ",\n    CONSTRAINT " + ScorerConstraint + " " + check + "\n" + table[last:], nil
	}
	if err != nil {
		return "", err
	}
	return table[:start] + check + table[end:], nil
}

// scorerCheckSpan finds "CHECK (...)" of the scorer constraint in a CREATE
// TABLE statement and returns its byte span.
func scorerCheckSpan(table string) (int, int, error) {
	toks := tokenize(table)
	for i, t := range toks {
		if t.kind != tokWord || !strings.EqualFold(unquoteIdent(t.text), ScorerConstraint) {
			continue
		}
		if i == 0 || !strings.EqualFold(toks[i-1].text, "CONSTRAINT") {
			continue
		}
		if i+2 >= len(toks) || !strings.EqualFold(toks[i+1].text, "CHECK") || toks[i+2].text != "(" {
			return 0, 0, fmt.Errorf("constraint %s is not a CHECK", ScorerConstraint)
		}
		depth := 0
		for j := i + 2; j < len(toks); j++ {
			switch toks[j].text {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					return toks[i+1].pos, toks[j].pos + 1, nil
				}
			}
		}
		return 0, 0, fmt.Errorf("constraint %s: unbalanced parentheses", ScorerConstraint)
	}
	return 0, 0, ErrNoScorerConstraint
}

// ParseScorerCheck returns the scorer IDs a CHECK expression allows, sorted.
// It reads the form SQLite keeps verbatim,
//
//	CHECK (scorer IN ('a', 'b'))
//
// and the forms pg_get_constraintdef normalises it to,
//
//	CHECK ((scorer = ANY (ARRAY['a'::text, 'b'::text])))
//	CHECK (((scorer)::text = ANY ((ARRAY['a'::character varying, ...])::text[])))
//	CHECK ((scorer = 'a'::text))                       (a one-element list)
//	CHECK ((scorer = ANY (ARRAY['it''s'::text])))
//
// with a quote inside a name doubled, as SQL writes it, or backslash-escaped
// in an E-prefixed string.
func ParseScorerCheck(def string) ([]string, error) {
	toks := tokenize(def)
	start := -1
	for i, t := range toks {
		if t.kind == tokWord && strings.EqualFold(t.text, "CHECK") {
			start = i + 1
			break
		}
	}
	if start < 0 || start >= len(toks) || toks[start].text != "(" {
		return nil, fmt.Errorf("parse scorer CHECK %q: no CHECK (...)", def)
	}
	body := toks[start:]
	var (
		ids       []string
		sawScorer bool
		form      string
		depth     int
	)
	for i, t := range body {
		switch {
		case t.kind == tokString:
			if i > 0 && body[i-1].text == "::" {
				continue
			}
			ids = append(ids, t.text)
		case t.kind == tokWord && strings.EqualFold(unquoteIdent(t.text), "scorer"):
			sawScorer = true
		case t.kind == tokWord && strings.EqualFold(t.text, "IN"):
			form = "in"
		case t.kind == tokWord && strings.EqualFold(t.text, "ANY"):
			form = "any"
		case t.text == "=" && form == "":
			form = "eq"
		case t.text == "(":
			depth++
		case t.text == ")":
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if !sawScorer {
		return nil, fmt.Errorf("parse scorer CHECK %q: does not test column scorer", def)
	}
	if form == "" {
		return nil, fmt.Errorf("parse scorer CHECK %q: want scorer IN (...) or scorer = ANY (ARRAY[...])", def)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("parse scorer CHECK %q: no scorer names", def)
	}
	sort.Strings(ids)
	return ids, nil
}

type tokKind int

const (
	tokPunct tokKind = iota
	tokWord
	tokString
)

type token struct {
	kind tokKind
	text string // for tokString, the decoded value
	pos  int    // byte offset of the token's first character
}

// tokenize splits SQL into words (identifiers, keywords, numbers, quoted
// identifiers), decoded string literals, "::" and single punctuation
// characters. It understands doubled quotes inside strings, E-prefixed
// strings with backslash escapes, "quoted" identifiers and -- comments.
func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\'' || ((c == 'E' || c == 'e') && i+1 < len(s) && s[i+1] == '\''):
			pos := i
			escapes := c != '\''
			if escapes {
				i++
			}
			i++ // opening quote
			var b strings.Builder
			for i < len(s) {
				switch {
				case s[i] == '\'' && i+1 < len(s) && s[i+1] == '\'':
					b.WriteByte('\'')
					i += 2
				case s[i] == '\'':
					i++
					goto done
				case escapes && s[i] == '\\' && i+1 < len(s):
					b.WriteByte(unescape(s[i+1]))
					i += 2
				default:
					b.WriteByte(s[i])
					i++
				}
			}
		done:
			out = append(out, token{kind: tokString, text: b.String(), pos: pos})
		case c == '"':
			pos := i
			i++
			for i < len(s) {
				if s[i] == '"' && i+1 < len(s) && s[i+1] == '"' {
					i += 2
					continue
				}
				if s[i] == '"' {
					i++
					break
				}
				i++
			}
			out = append(out, token{kind: tokWord, text: s[pos:i], pos: pos})
		case isWordByte(c):
			pos := i
			for i < len(s) && isWordByte(s[i]) {
				i++
			}
			out = append(out, token{kind: tokWord, text: s[pos:i], pos: pos})
		case c == ':' && i+1 < len(s) && s[i+1] == ':':
			out = append(out, token{kind: tokPunct, text: "::", pos: i})
			i += 2
		default:
			out = append(out, token{kind: tokPunct, text: string(c), pos: i})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	default:
		return c
	}
}

func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}
