package sqlreview

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/powercontext/powercontext/db"
	sqlfiles "github.com/powercontext/powercontext/sql"
)

// Query is one statement of a query file, read the way sqlc reads it: the `-- name: Name :cmd` marker, the
// statement up to its terminating semicolon, and the comment lines directly above the marker (the lock or guard
// comment CONTRIBUTING.md asks for).
type Query struct {
	File    string // the query file's base name, e.g. work_item.sql
	Name    string
	Cmd     string // :one, :many, :exec, …
	Comment string // the comment block above the marker, without the "-- " prefixes
	SQL     string
}

var nameMarker = regexp.MustCompile(`^--\s*name:\s*(\w+)\s+(:\w+)`)

// engineDir is the directory of an engine's files under sql/queries and sql/schema.
func engineDir(engine db.Engine) string { return string(engine) }

// Queries reads every query of engine from the embedded query files, in file then file order.
func Queries(engine db.Engine) ([]Query, error) {
	dir := path.Join("queries", engineDir(engine))
	entries, err := fs.ReadDir(sqlfiles.Queries, dir)
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		src, err := fs.ReadFile(sqlfiles.Queries, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		qs, err := parseQueryFile(e.Name(), string(src))
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
	}
	return out, nil
}

func parseQueryFile(file, src string) ([]Query, error) {
	var (
		out     []Query
		comment []string
		cur     *Query
		body    []string
	)
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			switch {
			case trimmed == "":
				comment = nil
			case nameMarker.MatchString(trimmed):
				m := nameMarker.FindStringSubmatch(trimmed)
				cur = &Query{File: file, Name: m[1], Cmd: m[2], Comment: strings.Join(comment, "\n")}
				comment, body = nil, nil
			case strings.HasPrefix(trimmed, "--"):
				comment = append(comment, strings.TrimSpace(strings.TrimPrefix(trimmed, "--")))
			}
			continue
		}
		body = append(body, line)
		if strings.HasSuffix(trimmed, ";") {
			cur.SQL = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: %s has no terminating semicolon", file, cur.Name)
	}
	return out, nil
}

// Param is one placeholder of a rewritten statement: the sqlc argument name or, for a bare ?, the column it is
// compared with ("limit" after LIMIT/OFFSET).
type Param struct{ Hint string }

var (
	sqlcEmbed   = regexp.MustCompile(`sqlc\.embed\((\w+)\)`)
	sqlcArg     = regexp.MustCompile(`sqlc\.(?:arg|narg|slice)\(\s*'?(\w+)'?\s*\)`)
	placeholder = regexp.MustCompile(`sqlc\.(?:arg|narg|slice)\(\s*'?(\w+)'?\s*\)|\?`)
	beforeCol   = regexp.MustCompile(`(?i)([a-z_][a-z0-9_]*)\s*(?:=|<=|>=|<>|!=|<|>|\bIN\s*\(|\bLIKE)\s*$`)
	beforeLimit = regexp.MustCompile(`(?i)\b(?:LIMIT|OFFSET)\s*$`)
)

// Rewrite turns a query file statement into what the driver receives: on PostgreSQL each distinct sqlc argument
// becomes $n (in order of first appearance, as sqlc numbers them); on MySQL and SQLite every sqlc argument and bare ?
// becomes one ? (a sqlc.slice one element). It returns the placeholders in order.
func Rewrite(engine db.Engine, q string) (string, []Param) {
	var params []Param
	q = sqlcEmbed.ReplaceAllString(q, "$1.*")
	if engine == db.EnginePostgres {
		index := map[string]int{}
		out := sqlcArg.ReplaceAllStringFunc(q, func(m string) string {
			name := sqlcArg.FindStringSubmatch(m)[1]
			n, ok := index[name]
			if !ok {
				params = append(params, Param{Hint: name})
				n = len(params)
				index[name] = n
			}
			return fmt.Sprintf("$%d", n)
		})
		return out, params
	}
	var b strings.Builder
	last := 0
	for _, loc := range placeholder.FindAllStringSubmatchIndex(q, -1) {
		b.WriteString(q[last:loc[0]])
		last = loc[1]
		hint := ""
		if loc[2] >= 0 {
			hint = q[loc[2]:loc[3]]
		} else {
			before := q[:loc[0]]
			if beforeLimit.MatchString(before) {
				hint = "limit"
			} else if m := beforeCol.FindStringSubmatch(before); m != nil {
				hint = m[1]
			}
		}
		params = append(params, Param{Hint: strings.ToLower(hint)})
		b.WriteString("?")
	}
	b.WriteString(q[last:])
	return b.String(), params
}

// Big tables: the ones that grow with the workload. A full scan of one of them is a finding unless the query is
// listed in Exceptions.
var bigTables = map[string]bool{
	"pc_work_items": true, "pc_work_attempts": true, "pc_work_keys": true, "pc_sources": true,
	"pc_memory_revisions": true, "pc_memory_entries": true, "pc_memory_embeddings": true,
}

// IsBig reports whether table is one of the big tables.
func IsBig(table string) bool { return bigTables[table] }

var (
	tableRef     = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|UPDATE|INTO)\s+(pc_\w+)(?:\s+(?:AS\s+)?([a-z_]\w*))?`)
	notAnAlias   = map[string]bool{"where": true, "set": true, "join": true, "on": true, "left": true, "inner": true, "using": true, "order": true, "group": true, "limit": true, "for": true, "values": true, "select": true, "union": true, "natural": true, "cross": true, "straight_join": true, "force": true, "use": true, "ignore": true, "window": true, "as": true, "right": true, "having": true, "returning": true, "default": true, "partition": true}
	derivedAlias = regexp.MustCompile(`(?i)\b(\w+)\s+AS\s+(?:MATERIALIZED\s+|NOT\s+MATERIALIZED\s+)?\(`)
)

// Aliases maps each alias (and each table name) of the big and small pc_ tables in q to the table.
func Aliases(q string) map[string]string {
	m := map[string]string{}
	for _, r := range tableRef.FindAllStringSubmatch(q, -1) {
		m[r[1]] = r[1]
		if a := strings.ToLower(r[2]); a != "" && !notAnAlias[a] {
			m[r[2]] = r[1]
		}
	}
	for _, r := range derivedAlias.FindAllStringSubmatch(q, -1) {
		delete(m, r[1]) // a CTE named like an alias is not the table
	}
	return m
}

// Families lists the query files in order, for grouping.
func Families(qs []Query) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		if !seen[q.File] {
			seen[q.File] = true
			out = append(out, q.File)
		}
	}
	sort.Strings(out)
	return out
}
