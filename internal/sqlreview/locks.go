package sqlreview

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/powercontext/powercontext/db"
)

// The ledger's locks per statement: for the statements of the work_* query files that write or lock rows, what the
// transaction holds right after running the statement, read while the transaction is still open.
//
//   - PostgreSQL: the table-level locks of pg_locks for the session (relation and lock mode). The statement is
//     prepared and explained inside the transaction, which takes the same relation locks as running it (parse and
//     planning lock every relation in the statement's mode). Then it runs with the representative parameters, and
//     another session reads the rows it holds locked per ledger table (pgrowlocks, from contrib, installed into the
//     scratch schema: a row lock lives in the row, not in pg_locks). Rolled back. (The session's row counts,
//     pg_stat_xact_user_tables, were tried for what it wrote: around a statement they moved by other transactions'
//     counts from one run to the next, so they are not used.)
//   - MariaDB/MySQL: the statement runs with the representative parameters in a READ COMMITTED transaction (the
//     service's level), then SHOW ENGINE INNODB STATUS with innodb_status_output_locks lists each lock structure its
//     transaction holds: table intention locks and record locks by index, row only, gap or next-key. Rolled back.
//   - SQLite: none per table; a write transaction holds the database's write lock (BEGIN IMMEDIATE).

var lockingStatement = regexp.MustCompile(`(?is)\b(INSERT|UPDATE|DELETE|REPLACE)\b|\bFOR\s+(UPDATE|SHARE|NO KEY UPDATE)\b|\bLOCK\s+IN\s+SHARE\s+MODE\b`)

// LedgerLocking reports whether q is a ledger statement that writes or locks rows.
func LedgerLocking(q Query) bool {
	return strings.HasPrefix(q.File, "work_") && lockingStatement.MatchString(q.SQL)
}

// Locks returns what q's transaction holds right after the statement (see above), or why it could not be read.
func (e *Explainer) Locks(ctx context.Context, q Query) (out string, err error) {
	text, params := Rewrite(e.engine, strings.TrimSuffix(strings.TrimSpace(q.SQL), ";"))
	if claimPasses[q.Name] {
		restore, err := e.dueHead(ctx)
		if err != nil {
			return "", err
		}
		defer func() {
			if rerr := restore(); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	switch e.engine {
	case db.EnginePostgres:
		return e.locksPostgres(ctx, text, len(params), pgArrays(text, e.args(q, text, params)))
	case db.EngineMySQL:
		return e.locksMySQL(ctx, text, e.args(q, text, params))
	}
	return "", nil
}

// claimPasses are the claim statements that claim only a due head, which the seeded lanes do not have (their heads
// are running); dueHead gives them one for the time of their lock reading.
var claimPasses = map[string]bool{"WorkItemClaimMany": true, "WorkItemClaimListedMany": true}

// dueHead makes the running head of lane 1 a queued one (its lease cleared), committed, so that a claim pass finds a
// due head to claim; the function it returns puts the row back as it was.
func (e *Explainer) dueHead(ctx context.Context) (func() error, error) {
	ph := "?"
	if e.engine == db.EnginePostgres {
		ph = "$1"
	}
	var status, owner string
	var expires time.Time
	if err := e.db.QueryRowContext(ctx, "SELECT status, lease_owner, lease_expires_at FROM pc_work_items WHERE work_id = "+ph,
		seedWorkID).Scan(&status, &owner, &expires); err != nil {
		return nil, fmt.Errorf("sqlreview: the running head: %w", err)
	}
	if _, err := e.db.ExecContext(ctx, "UPDATE pc_work_items SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL "+
		"WHERE work_id = "+ph, seedWorkID); err != nil {
		return nil, fmt.Errorf("sqlreview: queue the running head: %w", err)
	}
	restore := "UPDATE pc_work_items SET status = ?, lease_owner = ?, lease_expires_at = ? WHERE work_id = ?"
	if e.engine == db.EnginePostgres {
		restore = "UPDATE pc_work_items SET status = $1, lease_owner = $2, lease_expires_at = $3 WHERE work_id = $4"
	}
	return func() error {
		_, err := e.db.ExecContext(context.WithoutCancel(ctx), restore, status, owner, expires, seedWorkID)
		return err
	}, nil
}

// args are the representative values q runs with for its locks; an INSERT gets fresh keys.
func (e *Explainer) args(q Query, text string, params []Param) []any {
	if e.engine == db.EnginePostgres {
		params = pgHints(params, e.types)
	}
	args := Values(e.engine, q.Name, params, e.types)
	for i, p := range params {
		if v, ok := freshInsertValues[p.Hint]; ok && insertsRe.MatchString(text) {
			args[i] = v
		}
		if v, ok := lockValues[q.Name][p.Hint]; ok {
			args[i] = v
		}
	}
	return args
}

// lockValues are the arguments of the MySQL-mode set statements whose JSON documents no column value stands for
// (locks only): one new item in lane 1, lane 1's allocator and head as they are, and one new key.
var lockValues = map[string]map[string]any{
	"WorkItemInsertMany": {"count": 1, "items": `[{"w": "` + freshInsertValues["work_id"].(string) + `", "l": "key-new", "n": "` +
		seedLane + `", "s": 11, "k": "` + seedKind + `", "v": 1, "c": "` + base64.StdEncoding.EncodeToString([]byte(seedScope)) +
		`", "p": "e30=", "m": 1}]`},
	"WorkLaneUpdateMany": {"lanes": `{"` + seedLane + `": [11, 4]}`},
	"WorkKeyInsertMany":  {"count": 1, "keys": `[["key-new", "` + freshInsertValues["work_id"].(string) + `", "` + seedLane + `"]]`},
}

// pgHints names PostgreSQL's composite and set parameters by the column they carry: the statements of a composite
// step prefix them with the table (key_work_id, lane_lane_key, item_lane_keys), and a set statement takes the
// plural (work_ids: one seeded or fresh work_id). A name that already is a column or a known key stays.
func pgHints(params []Param, types map[string]string) []Param {
	known := func(h string) bool {
		_, key := keyValues[h]
		_, fresh := freshInsertValues[h]
		_, column := types[h]
		return key || fresh || column || h == "lane_key" || h == "lane_keys"
	}
	out := make([]Param, len(params))
	for i, p := range params {
		h := p.Hint
		for _, prefix := range []string{"key_", "lane_", "item_"} {
			if rest, ok := strings.CutPrefix(h, prefix); ok && !known(h) && known(rest) {
				h = rest
			}
		}
		if single, ok := strings.CutSuffix(h, "s"); ok {
			if _, fresh := freshInsertValues[single]; fresh {
				h = single
			}
		}
		out[i] = Param{Hint: h}
	}
	return out
}

var (
	insertsRe = regexp.MustCompile(`(?i)\bINSERT\b`)
	pgArrayRe = regexp.MustCompile(`\$(\d+)::[a-z]+\[\]`)
)

// pgArrays turns the representative value of each PostgreSQL array parameter ($n::type[]) into a one-element array
// literal, which the server parses into the array type the statement declares.
func pgArrays(text string, args []any) []any {
	done := map[int]bool{}
	for _, m := range pgArrayRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(args) || done[n] {
			continue
		}
		done[n] = true
		switch v := args[n-1].(type) {
		case string:
			args[n-1] = `{"` + strings.ReplaceAll(v, `"`, `\"`) + `"}`
		case time.Time:
			args[n-1] = "{" + v.UTC().Format("2006-01-02 15:04:05.999999Z07:00") + "}"
		default:
			args[n-1] = fmt.Sprintf("{%v}", v)
		}
	}
	return args
}

func (e *Explainer) locksPostgres(ctx context.Context, text string, nParams int, args []any) (out string, err error) {
	if _, err := e.conn.ExecContext(ctx, "BEGIN ISOLATION LEVEL READ COMMITTED"); err != nil {
		return "", err
	}
	defer func() {
		if _, rerr := e.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
		_, _ = e.conn.ExecContext(ctx, "DEALLOCATE pc_locks")
	}()
	if _, err := e.conn.ExecContext(ctx, "PREPARE pc_locks AS "+text); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	exec := "EXPLAIN (COSTS OFF) EXECUTE pc_locks"
	if nParams > 0 {
		exec += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", nParams), ", ") + ")"
	}
	rows, err := e.conn.QueryContext(ctx, exec)
	if err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	if err := rows.Close(); err != nil {
		return "", err
	}
	rows, err = e.conn.QueryContext(ctx, `SELECT c.relname, l.mode
		FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		WHERE l.pid = pg_backend_pid() AND c.relkind IN ('r', 'p') AND c.relname LIKE 'pc\_%'
		ORDER BY c.relname, l.mode`)
	if err != nil {
		return "", err
	}
	defer func() { _ = rows.Close() }()
	var locks []string
	for rows.Next() {
		var rel, mode string
		if err := rows.Scan(&rel, &mode); err != nil {
			return "", err
		}
		locks = append(locks, rel+" "+mode)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	tables := "none"
	if len(locks) > 0 {
		tables = strings.Join(locks, ", ")
	}
	return tables + "; rows: " + e.rowLocksPostgres(ctx, text, args), nil
}

// rowLocksPostgres runs the statement with args inside the open transaction and lists, per
// ledger table the statement names, the rows it holds locked or has updated or deleted (pgrowlocks, read from
// another session: a row lock lives in the row's header, not in pg_locks), with their lock modes. Rows the
// statement inserted are new versions no other transaction can see yet, and are not listed.
func (e *Explainer) rowLocksPostgres(ctx context.Context, text string, args []any) string {
	if e.rowLocks == "" {
		return "not read (" + e.rowLocksErr + ")"
	}
	// No savepoint: a row locked in a subtransaction carries the subtransaction's id, which pgrowlocks does not
	// map to the session. A failing statement aborts the transaction, which locksPostgres rolls back anyway.
	rows, err := e.conn.QueryContext(ctx, text, args...)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Close()
	}
	if err != nil {
		return "not read: " + firstLine(err.Error())
	}
	var pid int
	if err := e.conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return "not read: " + firstLine(err.Error())
	}
	var out []string
	for _, table := range ledgerTables {
		if !regexp.MustCompile(`\b` + table + `\b`).MatchString(text) {
			continue
		}
		// The function's name as the server quoted it (pgRowLocks).
		q := "SELECT array_to_string(modes, '+'), count(*) FROM " + e.rowLocks + "($1) WHERE $2 = ANY (pids) GROUP BY 1 ORDER BY 1" //nolint:gosec
		found, err := e.db.QueryContext(ctx, q, table, pid)
		if err != nil {
			return "not read: " + firstLine(err.Error())
		}
		for found.Next() {
			var modes string
			var n int
			if err := found.Scan(&modes, &n); err != nil {
				_ = found.Close()
				return "not read: " + firstLine(err.Error())
			}
			out = append(out, fmt.Sprintf("%s %d (%s)", table, n, modes))
		}
		if err := found.Close(); err != nil {
			return "not read: " + firstLine(err.Error())
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// ledgerTables are the tables whose rows the PostgreSQL lock lines list, in the lock order.
var ledgerTables = []string{"pc_scheduler_leases", "pc_work_lanes", "pc_work_keys", "pc_work_items", "pc_work_attempts"}

func (e *Explainer) locksMySQL(ctx context.Context, text string, args []any) (out string, err error) {
	if _, err := e.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return "", err
	}
	defer func() {
		if _, rerr := e.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
	}()
	rows, err := e.conn.QueryContext(ctx, text, args...)
	if err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	// Drain the result set so that the statement completes.
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	// SHOW ENGINE INNODB STATUS is built when asked; information_schema.INNODB_TRX is a cache refreshed at most every
	// 100 ms, which lags behind statements run back to back. innodb_status_output_locks makes it list each lock
	// (MariaDB has no performance_schema.data_locks); it only changes what that report prints, and is put back.
	var connID int64
	if err := e.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		return "", err
	}
	var listed bool
	if err := e.conn.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_status_output_locks").Scan(&listed); err != nil {
		return "", err
	}
	if !listed {
		if _, err := e.conn.ExecContext(ctx, "SET GLOBAL innodb_status_output_locks = ON"); err != nil {
			return "not read: " + firstLine(err.Error()), nil
		}
		defer func() {
			if _, rerr := e.conn.ExecContext(ctx, "SET GLOBAL innodb_status_output_locks = OFF"); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	var typ, name, status string
	if err := e.conn.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return "not read: " + firstLine(err.Error()), nil
	}
	return innodbLocks(status, connID), nil
}

// innodbLocks describes the locks the transaction of connection connID holds in an InnoDB status report listing
// each lock: the totals, then each lock structure in the order the report lists them (the order the transaction
// created them), a table's intention lock as "table mode", a record lock as "table.index mode kind ×rows", kind
// being "rec" (the row only), "gap" (the gap before it), "next-key" (the row and the gap before it) or "insert
// intention"; a lock on the supremum (the gap after the last row of a page) is counted apart.
func innodbLocks(status string, connID int64) string {
	for _, block := range strings.Split(status, "---TRANSACTION ") {
		m := threadID.FindStringSubmatch(block)
		if m == nil || m[1] != strconv.FormatInt(connID, 10) {
			continue
		}
		c := lockCounts.FindStringSubmatch(block)
		if c == nil {
			return "none (the transaction holds no locks)"
		}
		head := fmt.Sprintf("%s row lock(s) in %s lock structure(s)", c[2], c[1])
		if u := undoEntries.FindStringSubmatch(block); u != nil {
			head += fmt.Sprintf(", %s row(s) written", u[1])
		}
		var locks []string
		var rows, supremum int
		record := false // the last structure listed holds record locks
		flush := func() {
			if len(locks) == 0 || !record {
				return
			}
			l := &locks[len(locks)-1]
			if rows > 0 || supremum == 0 { // ×0: READ COMMITTED released the row, which did not match
				*l += fmt.Sprintf(" ×%d", rows)
			}
			if supremum > 0 {
				*l += " + supremum"
			}
		}
		for _, line := range strings.Split(block, "\n") {
			switch {
			case tableLock.MatchString(line):
				flush()
				rows, supremum, record = 0, 0, false
				t := tableLock.FindStringSubmatch(line)
				locks = append(locks, t[1]+" "+t[2])
			case recordLock.MatchString(line):
				flush()
				rows, supremum, record = 0, 0, true
				r := recordLock.FindStringSubmatch(line)
				locks = append(locks, fmt.Sprintf("%s.%s %s %s", r[2], r[1], r[3], lockKind(r[4])))
			case strings.HasPrefix(line, "Record lock, heap no 1 "): // heap no 1 is a page's supremum
				supremum++
			case strings.HasPrefix(line, "Record lock, heap no "):
				rows++
			}
		}
		flush()
		if len(locks) == 0 {
			return head
		}
		return head + ": " + strings.Join(locks, "; ")
	}
	return "none (no InnoDB transaction started)"
}

// lockKind names the gap part of an InnoDB record lock from the rest of its report line.
func lockKind(rest string) string {
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "waiting"))
	switch {
	case strings.Contains(rest, "insert intention"):
		return "insert intention"
	case strings.Contains(rest, "rec but not gap"):
		return "rec"
	case strings.Contains(rest, "gap before rec"):
		return "gap"
	case rest == "":
		return "next-key"
	}
	return rest
}

var (
	threadID    = regexp.MustCompile(`(?:MySQL|MariaDB) thread id (\d+)`)
	lockCounts  = regexp.MustCompile(`(\d+) lock struct\(s\), heap size \d+, (\d+) row lock\(s\)`)
	undoEntries = regexp.MustCompile(`undo log entries (\d+)`)
	tableLock   = regexp.MustCompile("^TABLE LOCK table `[^`]*`\\.`([^`]*)` trx id \\d+ lock mode (\\S+)")
	recordLock  = regexp.MustCompile("^RECORD LOCKS space id \\d+ page no \\d+ n bits \\d+ index (\\S+) of table `[^`]*`\\.`([^`]*)` trx id \\d+ lock[ _]mode (\\S+)(.*)$")
)
