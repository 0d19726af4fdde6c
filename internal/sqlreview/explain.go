package sqlreview

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/powercontext/powercontext/db"
)

// Plan is one query's plan at the seeded size.
type Plan struct {
	Lines  []string            // the plan as the engine prints it, without costs and row estimates
	Access map[string][]string // big table → how it is read: scan (whole table), index (lookup or range), index-scan (whole index)
	Flags  []string            // sort (filesort, temp B-tree, Sort node), temporary (MySQL temporary table)
	Depth  int                 // PostgreSQL: nesting depth of the plan tree
	Err    string              // why the query has no plan (e.g. LISTEN, an INSERT … VALUES without a read)
	// FilesortOnBig: in a claim, MySQL sorts the rows of a select that reads a big table (not a derived table
	// of a few limited rows).
	FilesortOnBig bool
}

// Shape is the part of the plan the review check compares: how each big table is read, and whether the engine
// sorts or builds a temporary table. Costs, row estimates and index names are left out, so it is stable across
// runs and machines.
func (p Plan) Shape() string {
	if p.Err != "" {
		return "no plan"
	}
	var parts []string
	tables := make([]string, 0, len(p.Access))
	for t := range p.Access {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		parts = append(parts, t+"="+strings.Join(uniqSorted(p.Access[t]), "+"))
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = "no big table"
	}
	if f := uniqSorted(p.Flags); len(f) > 0 {
		s += "; " + strings.Join(f, ", ")
	}
	return s
}

func uniqSorted(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func (p *Plan) access(table, class string) {
	if !IsBig(table) {
		return
	}
	if p.Access == nil {
		p.Access = map[string][]string{}
	}
	p.Access[table] = append(p.Access[table], class)
}

// Explainer explains queries on one seeded database.
type Explainer struct {
	engine db.Engine
	conn   *sql.Conn
	db     *sql.DB // another session, to read the row locks conn's transaction holds (PostgreSQL)
	types  map[string]string
	// rowLocks is the schema-qualified pgrowlocks function (PostgreSQL; contrib, installed into the scratch schema),
	// or empty with rowLocksErr saying why not.
	rowLocks, rowLocksErr string
}

// NewExplainer returns an explainer on a dedicated connection of sqlDB (PostgreSQL keeps prepared statements and
// plan_cache_mode per session). Close it when done.
func NewExplainer(ctx context.Context, engine db.Engine, sqlDB *sql.DB) (*Explainer, error) {
	types, err := columnTypes(engine)
	if err != nil {
		return nil, err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	e := &Explainer{engine: engine, conn: conn, db: sqlDB, types: types}
	if engine == db.EnginePostgres {
		// Generic plans: the plan the server uses for any parameter values, so no values need choosing.
		if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			_ = conn.Close()
			return nil, err
		}
		e.rowLocks, e.rowLocksErr = pgRowLocks(ctx, conn)
	}
	return e, nil
}

// pgRowLocks installs pgrowlocks into the current (scratch) schema unless the database has it already, and returns
// the function's qualified name, or why it is not there. The scratch schema's DROP … CASCADE removes it again.
func pgRowLocks(ctx context.Context, conn *sql.Conn) (fn, why string) {
	var schema string
	if err := conn.QueryRowContext(ctx, "SELECT quote_ident(current_schema())").Scan(&schema); err != nil {
		return "", "no current schema: " + firstLine(err.Error())
	}
	if _, err := conn.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pgrowlocks SCHEMA "+schema); err != nil {
		return "", "the pgrowlocks extension (PostgreSQL contrib) is not available: " + firstLine(err.Error())
	}
	if err := conn.QueryRowContext(ctx, `SELECT quote_ident(n.nspname) || '.pgrowlocks'
		FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pgrowlocks'`).Scan(&fn); err != nil {
		return "", "pgrowlocks: " + firstLine(err.Error())
	}
	return fn, ""
}

// Close releases the connection.
func (e *Explainer) Close() error { return e.conn.Close() }

// Explain returns q's plan. A statement the engine cannot explain gets a Plan with Err set; an error is returned
// only when the connection fails.
func (e *Explainer) Explain(ctx context.Context, q Query) (Plan, error) {
	text, params := Rewrite(e.engine, strings.TrimSuffix(strings.TrimSpace(q.SQL), ";"))
	switch e.engine {
	case db.EnginePostgres:
		return e.explainPostgres(ctx, text, len(params))
	case db.EngineMySQL:
		if isInsertValues(text) {
			return Plan{Err: "INSERT … VALUES: no read to plan"}, nil
		}
		return e.explainMySQL(ctx, text, Values(e.engine, q.Name, params, e.types), Aliases(q.SQL), strings.Contains(q.Name, "Claim"))
	case db.EngineSQLite:
		return e.explainSQLite(ctx, text, Values(e.engine, q.Name, params, e.types), Aliases(q.SQL))
	}
	return Plan{}, fmt.Errorf("sqlreview: unsupported engine %q", e.engine)
}

var insertValuesRe = regexp.MustCompile(`(?is)^\s*(INSERT|REPLACE)\b.*\bVALUES\s*\(`)

func isInsertValues(q string) bool {
	return insertValuesRe.MatchString(q) && !regexp.MustCompile(`(?i)\bSELECT\b`).MatchString(q)
}

// PostgreSQL ---------------------------------------------------------------------------------------------------

type pgNode struct {
	NodeType     string   `json:"Node Type"`
	RelationName string   `json:"Relation Name"`
	Plans        []pgNode `json:"Plans"`
}

func (e *Explainer) explainPostgres(ctx context.Context, text string, nParams int) (Plan, error) {
	if _, err := e.conn.ExecContext(ctx, "PREPARE pc_review AS "+text); err != nil {
		return Plan{Err: "not explainable: " + firstLine(err.Error())}, nil
	}
	defer func() { _, _ = e.conn.ExecContext(ctx, "DEALLOCATE pc_review") }()
	exec := "EXECUTE pc_review"
	if nParams > 0 {
		exec += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", nParams), ", ") + ")"
	}
	var plan Plan
	rows, err := e.conn.QueryContext(ctx, "EXPLAIN (COSTS OFF) "+exec)
	if err != nil {
		return Plan{Err: "not explainable: " + firstLine(err.Error())}, nil
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			_ = rows.Close()
			return Plan{}, err
		}
		plan.Lines = append(plan.Lines, line)
	}
	if err := rows.Close(); err != nil {
		return Plan{}, err
	}
	var js string
	if err := e.conn.QueryRowContext(ctx, "EXPLAIN (COSTS OFF, FORMAT JSON) "+exec).Scan(&js); err != nil {
		return Plan{}, err
	}
	var doc []struct {
		Plan pgNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc) != 1 {
		return Plan{}, fmt.Errorf("sqlreview: postgres plan JSON: %v", err)
	}
	plan.Depth = walkPG(&plan, doc[0].Plan, 1)
	return plan, nil
}

func walkPG(p *Plan, n pgNode, depth int) int {
	switch n.NodeType {
	case "Seq Scan":
		p.access(n.RelationName, "scan")
	case "Index Scan", "Index Only Scan", "Bitmap Heap Scan":
		p.access(n.RelationName, "index")
	case "Sort", "Incremental Sort":
		p.Flags = append(p.Flags, "sort")
	}
	max := depth
	for _, c := range n.Plans {
		if d := walkPG(p, c, depth+1); d > max {
			max = d
		}
	}
	return max
}

// MySQL / MariaDB ----------------------------------------------------------------------------------------------

func (e *Explainer) explainMySQL(ctx context.Context, text string, args []any, aliases map[string]string, claim bool) (Plan, error) {
	rows, err := e.conn.QueryContext(ctx, "EXPLAIN "+text, args...)
	if err != nil {
		return Plan{Err: "not explainable: " + firstLine(err.Error())}, nil
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	sortBlocks, bigBlocks := map[string]bool{}, map[string]bool{}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return Plan{}, err
		}
		r := map[string]string{}
		for i, c := range cols {
			r[strings.ToLower(c)] = vals[i].String
		}
		table := r["table"]
		if t, ok := aliases[table]; ok {
			table = t
		}
		extra := r["extra"]
		switch r["type"] {
		case "ALL":
			plan.access(table, "scan")
		case "index":
			plan.access(table, "index-scan")
		case "":
		default:
			plan.access(table, "index")
		}
		if IsBig(table) {
			bigBlocks[r["id"]] = true
		}
		if strings.Contains(extra, "filesort") {
			plan.Flags = append(plan.Flags, "sort")
			sortBlocks[r["id"]] = true
		}
		if strings.Contains(extra, "temporary") {
			plan.Flags = append(plan.Flags, "temporary")
		}
		line := fmt.Sprintf("%s %s %s type=%s", r["id"], r["select_type"], r["table"], r["type"])
		if r["key"] != "" {
			line += " key=" + r["key"]
		}
		if extra != "" {
			line += " (" + extra + ")"
		}
		plan.Lines = append(plan.Lines, line)
	}
	if err := rows.Err(); err != nil {
		return Plan{Err: "not explainable: " + firstLine(err.Error())}, nil
	}
	for id := range sortBlocks {
		if bigBlocks[id] && claim {
			plan.FilesortOnBig = true
		}
	}
	return plan, nil
}

// SQLite -------------------------------------------------------------------------------------------------------

var (
	sqliteScan   = regexp.MustCompile(`^SCAN (\w+)(?: AS \w+)?$`)
	sqliteIdxAll = regexp.MustCompile(`^SCAN (\w+)(?: AS \w+)? USING (?:COVERING )?INDEX`)
	sqliteSearch = regexp.MustCompile(`^SEARCH (\w+)(?: AS \w+)? USING`)
)

func (e *Explainer) explainSQLite(ctx context.Context, text string, args []any, aliases map[string]string) (Plan, error) {
	rows, err := e.conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+text, args...)
	if err != nil {
		return Plan{Err: "not explainable: " + firstLine(err.Error())}, nil
	}
	defer func() { _ = rows.Close() }()
	var plan Plan
	depth := map[int]int{}
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return Plan{}, err
		}
		depth[id] = depth[parent] + 1
		plan.Lines = append(plan.Lines, strings.Repeat("  ", depth[id]-1)+detail)
		resolve := func(name string) string {
			if t, ok := aliases[name]; ok {
				return t
			}
			return name
		}
		switch {
		case sqliteScan.MatchString(detail):
			plan.access(resolve(sqliteScan.FindStringSubmatch(detail)[1]), "scan")
		case sqliteIdxAll.MatchString(detail):
			plan.access(resolve(sqliteIdxAll.FindStringSubmatch(detail)[1]), "index-scan")
		case sqliteSearch.MatchString(detail):
			plan.access(resolve(sqliteSearch.FindStringSubmatch(detail)[1]), "index")
		case strings.HasPrefix(detail, "USE TEMP B-TREE FOR ORDER BY"), strings.HasPrefix(detail, "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY"), strings.HasPrefix(detail, "USE TEMP B-TREE FOR LAST"):
			plan.Flags = append(plan.Flags, "sort")
		case strings.HasPrefix(detail, "USE TEMP B-TREE"):
			plan.Flags = append(plan.Flags, "temporary")
		}
	}
	return plan, rows.Err()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
